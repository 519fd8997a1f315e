//! The transfer of one file over HTTP into its part file (`FILE.part` in the store):
//! resumed with a Range request when a part is there, restarted from byte 0 when the
//! server does not honour the range, hashed as it is written.
//!
//! What it guarantees: the part file is locked while a transfer uses it, so two pulls of
//! one model cannot interleave their bytes; whatever arrived before an interruption is
//! flushed to the part file, so the next pull resumes from there; the digest returned
//! covers exactly the bytes of the part file, from byte 0.

use crate::digest;
use crate::error::StoreError;
use crate::pull::error::PullError;
use crate::pull::error::Unreachable;
use crate::pull::progress::Meter;
use crate::pull::progress::Progress;
use crate::pull::progress::Stage;
use futures_util::StreamExt;
use reqwest::header::CONTENT_RANGE;
use reqwest::StatusCode;
use sha2::Digest;
use sha2::Sha256;
use std::io::SeekFrom;
use std::path::Path;
use std::path::PathBuf;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncSeekExt;
use tokio::io::AsyncWriteExt;

/// What one transfer is about.
pub(crate) struct Job {
    pub url: String,
    /// The name the file is stored under.
    pub file: String,
    /// The size the catalog promises, when it is a catalog file.
    pub expected_size: Option<u64>,
}

/// What a finished transfer left in the part file.
pub(crate) struct Transferred {
    pub size: u64,
    pub sha256: String,
    /// Bytes that were already there from an earlier attempt and kept.
    pub resumed_from: u64,
}

/// The locked part file of a download.
pub(crate) struct Part {
    path: PathBuf,
    file: tokio::fs::File,
}

impl Part {
    /// Opens (or creates) the part file at `path` and locks it for this process.
    pub(crate) fn open(path: &Path) -> Result<Part, PullError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(StoreError::io("open", path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(PullError::Busy {
                    part: path.to_path_buf(),
                })
            }
            Err(std::fs::TryLockError::Error(err)) => {
                return Err(StoreError::io("lock", path)(err).into())
            }
        }
        Ok(Part {
            path: path.to_path_buf(),
            file: tokio::fs::File::from_std(file),
        })
    }

    /// Fetches what the part file lacks of `job`'s file (all of it when there is no part
    /// yet, or when the server answers a range with the whole file).
    pub(crate) async fn download<P: FnMut(&Progress)>(
        &mut self,
        client: &reqwest::Client,
        job: &Job,
        meter: &mut Meter<P>,
    ) -> Result<Transferred, PullError> {
        let mut offset = self.len().await?;
        // Longer than the file it is part of: not a part of it at all.
        if job.expected_size.is_some_and(|size| offset > size) {
            self.truncate().await?;
            offset = 0;
        }
        let mut hasher = Sha256::new();
        if offset > 0 {
            offset = self.hash_prefix(offset, &mut hasher, meter).await?;
            if job.expected_size == Some(offset) {
                return Ok(Transferred {
                    size: offset,
                    sha256: digest::hex(hasher),
                    resumed_from: offset,
                });
            }
        }

        let mut response = self.request(client, job, offset).await?;
        match answer(response.status(), range_start(&response), offset) {
            Answer::Continue => {}
            Answer::Restart => {
                offset = 0;
                hasher = Sha256::new();
                self.truncate().await?;
            }
            Answer::AskAgain => {
                offset = 0;
                hasher = Sha256::new();
                self.truncate().await?;
                response = self.request(client, job, 0).await?;
                if answer(response.status(), range_start(&response), 0) != Answer::Continue {
                    return Err(status_error(job, response.status()));
                }
            }
            Answer::Fail => return Err(status_error(job, response.status())),
        }
        let total = total_size(&response, offset);
        // The repository's file changed since the catalog was written: say so now rather
        // than after downloading gigabytes that cannot pass the checksum.
        if let (Some(expected), Some(got)) = (job.expected_size, total) {
            if got != expected {
                return Err(PullError::SizeMismatch {
                    file: job.file.clone(),
                    url: job.url.clone(),
                    expected,
                    got,
                });
            }
        }
        let total = total.or(job.expected_size);
        let resumed_from = offset;
        let done = self
            .receive(response, job, offset, total, &mut hasher, meter)
            .await?;
        if total.is_some_and(|total| done < total) {
            return Err(PullError::Interrupted {
                file: job.file.clone(),
                part: self.path.clone(),
                done,
                total,
                source: None,
            });
        }
        Ok(Transferred {
            size: done,
            sha256: digest::hex(hasher),
            resumed_from,
        })
    }

    /// The first bytes of the part file, for the GGUF check.
    pub(crate) async fn start(&mut self) -> Result<Vec<u8>, PullError> {
        let mut start = vec![0u8; 64];
        self.file
            .seek(SeekFrom::Start(0))
            .await
            .map_err(StoreError::io("read", &self.path))?;
        let mut filled = 0;
        while filled < start.len() {
            let read = self
                .file
                .read(&mut start[filled..])
                .await
                .map_err(StoreError::io("read", &self.path))?;
            if read == 0 {
                break;
            }
            filled += read;
        }
        start.truncate(filled);
        Ok(start)
    }

    /// Renames the finished part file to `dest`, its place in the store.
    pub(crate) fn keep_as(self, dest: &Path) -> Result<(), PullError> {
        std::fs::rename(&self.path, dest).map_err(StoreError::io("move into place", dest))?;
        Ok(())
    }

    /// Deletes the part file (its contents cannot become the file wanted).
    pub(crate) fn discard(self) -> Result<(), PullError> {
        std::fs::remove_file(&self.path).map_err(StoreError::io("remove", &self.path))?;
        Ok(())
    }

    /// Deletes the part file if it holds nothing, so a pull that never got a byte (no
    /// network) leaves no trace.
    pub(crate) async fn discard_if_empty(self) {
        if self.len().await.is_ok_and(|len| len == 0) {
            let _ = std::fs::remove_file(&self.path);
        }
    }

    async fn len(&self) -> Result<u64, PullError> {
        Ok(self
            .file
            .metadata()
            .await
            .map_err(StoreError::io("read", &self.path))?
            .len())
    }

    async fn truncate(&mut self) -> Result<(), PullError> {
        self.file
            .set_len(0)
            .await
            .map_err(StoreError::io("truncate", &self.path))?;
        self.file
            .seek(SeekFrom::Start(0))
            .await
            .map_err(StoreError::io("truncate", &self.path))?;
        Ok(())
    }

    /// Feeds the first `len` bytes of the part file to `hasher`; leaves the file's cursor
    /// after them and returns how many there were.
    async fn hash_prefix<P: FnMut(&Progress)>(
        &mut self,
        len: u64,
        hasher: &mut Sha256,
        meter: &mut Meter<P>,
    ) -> Result<u64, PullError> {
        let io = |action| StoreError::io(action, &self.path);
        self.file
            .seek(SeekFrom::Start(0))
            .await
            .map_err(io("read"))?;
        // The total of this stage is the part, so that its time left is the check's.
        meter.begin(Stage::CheckingPart, 0, Some(len));
        let mut buffer = vec![0u8; 1 << 20];
        let mut hashed = 0u64;
        while hashed < len {
            let want =
                usize::try_from(len - hashed).map_or(buffer.len(), |left| left.min(buffer.len()));
            let read = self
                .file
                .read(&mut buffer[..want])
                .await
                .map_err(io("read"))?;
            if read == 0 {
                break;
            }
            hasher.update(&buffer[..read]);
            hashed += read as u64;
            meter.advance(hashed);
        }
        meter.end(hashed);
        Ok(hashed)
    }

    async fn request(
        &self,
        client: &reqwest::Client,
        job: &Job,
        offset: u64,
    ) -> Result<reqwest::Response, PullError> {
        let mut request = client.get(&job.url);
        if offset > 0 {
            request = request.header(reqwest::header::RANGE, format!("bytes={offset}-"));
        }
        request.send().await.map_err(|source| {
            if source.is_connect() {
                PullError::Unreachable {
                    host: host_of(&job.url),
                    reason: Unreachable::of(&source),
                    url: job.url.clone(),
                    file: job.file.clone(),
                }
            } else {
                PullError::Request {
                    url: job.url.clone(),
                    source,
                }
            }
        })
    }

    /// Appends the body to the part file from `offset`; returns the part's size after.
    async fn receive<P: FnMut(&Progress)>(
        &mut self,
        response: reqwest::Response,
        job: &Job,
        offset: u64,
        total: Option<u64>,
        hasher: &mut Sha256,
        meter: &mut Meter<P>,
    ) -> Result<u64, PullError> {
        let path = self.path.clone();
        let io = |action| StoreError::io(action, &path);
        self.file
            .seek(SeekFrom::Start(offset))
            .await
            .map_err(io("write"))?;
        meter.begin(Stage::Downloading, offset, total);
        let mut writer = tokio::io::BufWriter::with_capacity(1 << 20, &mut self.file);
        let mut body = response.bytes_stream();
        let mut done = offset;
        let mut failure = None;
        while let Some(chunk) = body.next().await {
            match chunk {
                Ok(bytes) => {
                    writer.write_all(&bytes).await.map_err(io("write"))?;
                    hasher.update(&bytes);
                    done += bytes.len() as u64;
                    meter.advance(done);
                }
                Err(source) => {
                    failure = Some(source);
                    break;
                }
            }
        }
        // Flushed and synced in both cases: after an interruption these bytes are what
        // the next pull resumes from.
        writer.flush().await.map_err(io("write"))?;
        self.file.sync_all().await.map_err(io("write"))?;
        meter.end(done);
        match failure {
            None => Ok(done),
            Some(source) => Err(PullError::Interrupted {
                file: job.file.clone(),
                part: path,
                done,
                total,
                source: Some(source),
            }),
        }
    }
}

/// How to go on after the server's answer to a request from `offset`.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    /// The body continues the part file.
    Continue,
    /// The body is the whole file (the server ignored the range): start the part again.
    Restart,
    /// The answer cannot continue the part (a range refused, or from another offset):
    /// start the part again and ask for the whole file.
    AskAgain,
    Fail,
}

fn answer(status: StatusCode, range_start: Option<u64>, offset: u64) -> Answer {
    match status {
        StatusCode::PARTIAL_CONTENT if range_start == Some(offset) => Answer::Continue,
        StatusCode::OK if offset == 0 => Answer::Continue,
        StatusCode::OK => Answer::Restart,
        StatusCode::PARTIAL_CONTENT | StatusCode::RANGE_NOT_SATISFIABLE if offset > 0 => {
            Answer::AskAgain
        }
        _ => Answer::Fail,
    }
}

/// The first byte of a 206 answer, from `Content-Range: bytes START-END/TOTAL`.
fn range_start(response: &reqwest::Response) -> Option<u64> {
    parse_content_range(response.headers().get(CONTENT_RANGE)?.to_str().ok()?).map(|(s, _)| s)
}

/// `(start, total)` of a `Content-Range` value; the total is `None` when it is `*`.
fn parse_content_range(value: &str) -> Option<(u64, Option<u64>)> {
    let range = value.trim().strip_prefix("bytes ")?;
    let (span, total) = range.split_once('/')?;
    let (start, _end) = span.split_once('-')?;
    Some((start.trim().parse().ok()?, total.trim().parse().ok()))
}

/// The whole file's size, as the answer to a request from `offset` tells it.
fn total_size(response: &reqwest::Response, offset: u64) -> Option<u64> {
    if response.status() == StatusCode::PARTIAL_CONTENT {
        let header = response.headers().get(CONTENT_RANGE)?.to_str().ok()?;
        if let Some((_, Some(total))) = parse_content_range(header) {
            return Some(total);
        }
    }
    response.content_length().map(|length| length + offset)
}

fn status_error(job: &Job, status: StatusCode) -> PullError {
    PullError::Status {
        url: job.url.clone(),
        status: status.as_u16(),
    }
}

fn host_of(url: &str) -> String {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|url| {
            let host = url.host_str()?.to_string();
            Some(match url.port() {
                Some(port) => format!("{host}:{port}"),
                None => host,
            })
        })
        .unwrap_or_else(|| url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn content_ranges_parse() {
        assert_eq!(
            parse_content_range("bytes 100-199/200"),
            Some((100, Some(200)))
        );
        assert_eq!(parse_content_range("bytes 5-9/*"), Some((5, None)));
        assert_eq!(parse_content_range("bytes */200"), None);
        assert_eq!(parse_content_range("items 1-2/3"), None);
    }

    #[test]
    fn answers_to_a_range_request() {
        let ok = StatusCode::OK;
        let partial = StatusCode::PARTIAL_CONTENT;
        let refused = StatusCode::RANGE_NOT_SATISFIABLE;
        assert_eq!(answer(ok, None, 0), Answer::Continue);
        assert_eq!(answer(partial, Some(10), 10), Answer::Continue);
        assert_eq!(answer(ok, None, 10), Answer::Restart);
        assert_eq!(answer(partial, Some(0), 10), Answer::AskAgain);
        assert_eq!(answer(refused, None, 10), Answer::AskAgain);
        assert_eq!(answer(refused, None, 0), Answer::Fail);
        assert_eq!(answer(StatusCode::NOT_FOUND, None, 10), Answer::Fail);
    }

    #[test]
    fn hosts_keep_their_port() {
        assert_eq!(host_of("https://huggingface.co/a/b"), "huggingface.co");
        assert_eq!(host_of("http://127.0.0.1:9/x"), "127.0.0.1:9");
    }
}
