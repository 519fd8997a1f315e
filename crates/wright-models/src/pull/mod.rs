//! `pull`: a model downloaded into the store, by catalog name or from any URL of a `.gguf`
//! file.
//!
//! What it guarantees: nothing appears in the store under a model's name until the whole
//! file is there and checked — a catalog file against the catalog's size and sha256 (a
//! mismatch deletes the download and says so), a file from another URL for the GGUF
//! header only, which the result says ([`Checksum::NoneToCompare`]); an interrupted pull
//! keeps its part file and the next one resumes it; a machine without network gets one
//! sentence saying where to fetch the file by hand and how to import it.

pub mod error;
pub mod progress;
mod transfer;

use crate::catalog;
use crate::catalog::CatalogEntry;
use crate::digest;
use crate::gguf;
use crate::gguf::HeaderError;
use crate::location;
use crate::store::stored_file_name;
use crate::store::Store;
use crate::store::StoredModel;
use error::PullError;
use progress::Meter;
use progress::Progress;
use serde::Serialize;
use std::time::Duration;
use transfer::Job;
use transfer::Part;
use transfer::Transferred;

/// What a pull did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pulled {
    pub model: StoredModel,
    pub url: String,
    pub sha256: String,
    pub checksum: Checksum,
    /// Bytes kept from an earlier, interrupted pull (0 for a fresh download).
    pub resumed_from: u64,
    /// The store already had the file; nothing was downloaded.
    pub already_present: bool,
}

/// Whether the file's sha256 was compared with a known value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Checksum {
    /// It is the catalog's sha256.
    MatchesCatalog,
    /// From a URL the catalog does not know: there was nothing to compare it with (only
    /// its GGUF header was checked).
    NoneToCompare,
}

/// Downloads models with one HTTP client, from one base URL.
#[derive(Debug, Clone)]
pub struct Puller {
    client: reqwest::Client,
    base_url: String,
}

/// Pulls `name_or_url` into `store` from where the environment says
/// (`WRIGHT_MODELS_BASE_URL`, else Hugging Face), reporting to `progress`.
pub async fn pull<P>(name_or_url: &str, store: &Store, progress: P) -> Result<Pulled, PullError>
where
    P: FnMut(&Progress) + Send,
{
    Puller::new()?.pull(name_or_url, store, progress).await
}

impl Puller {
    /// A puller for the base URL of the environment (`WRIGHT_MODELS_BASE_URL`, else
    /// `https://huggingface.co`).
    pub fn new() -> Result<Self, PullError> {
        let client = reqwest::Client::builder()
            .user_agent(concat!("wright/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(30))
            // No overall deadline (a large model takes as long as it takes), but a stalled
            // connection ends, and the pull can be resumed.
            .read_timeout(Duration::from_secs(60))
            .build()
            .map_err(PullError::Client)?;
        Ok(Puller {
            client,
            base_url: location::base_url(),
        })
    }

    /// The same puller, downloading catalog files from under `base_url` instead.
    pub fn with_base_url(mut self, base_url: &str) -> Self {
        self.base_url = base_url.trim_end_matches('/').to_string();
        self
    }

    /// Downloads a catalog model (by name, or by its file name) or the `.gguf` file at an
    /// `http(s)://` URL into `store`. Resumes the part file of an earlier attempt.
    pub async fn pull<P>(
        &self,
        name_or_url: &str,
        store: &Store,
        progress: P,
    ) -> Result<Pulled, PullError>
    where
        P: FnMut(&Progress) + Send,
    {
        let source = self.source(name_or_url, store)?;
        let (url, file, entry) = match &source {
            Source::Catalog(entry) => (
                entry.url(&self.base_url),
                entry.file.to_string(),
                Some(*entry),
            ),
            Source::Url { url, file } => (url.clone(), file.clone(), None),
        };
        let dest = store.dir().join(&file);
        if dest.is_file() {
            return present(store, &file, url, entry).await;
        }

        let job = Job {
            url: url.clone(),
            file: file.clone(),
            expected_size: entry.map(|e| e.size),
        };
        let mut part = Part::open(&store.part_path(&file))?;
        let mut meter = Meter::new(progress);
        let transferred = match part.download(&self.client, &job, &mut meter).await {
            Ok(transferred) => transferred,
            Err(err @ PullError::SizeMismatch { .. }) => {
                part.discard()?;
                return Err(err);
            }
            Err(err) => {
                part.discard_if_empty().await;
                return Err(err);
            }
        };

        let checksum = match verify(&mut part, entry, &transferred, &job).await {
            Ok(checksum) => checksum,
            Err(err) => {
                part.discard()?;
                return Err(err);
            }
        };
        part.keep_as(&dest)?;
        digest::record(&dest, &transferred.sha256);
        Ok(Pulled {
            model: store.describe(&file)?,
            url,
            sha256: transferred.sha256,
            checksum,
            resumed_from: transferred.resumed_from,
            already_present: false,
        })
    }

    fn source(&self, name_or_url: &str, store: &Store) -> Result<Source, PullError> {
        if let Some(entry) = catalog::find(store.catalog(), name_or_url) {
            return Ok(Source::Catalog(entry));
        }
        if !(name_or_url.starts_with("https://") || name_or_url.starts_with("http://")) {
            return Err(PullError::UnknownModel {
                name: name_or_url.to_string(),
                known: store.catalog().iter().map(|e| e.name.to_string()).collect(),
            });
        }
        let not_gguf = || PullError::NotAGgufUrl {
            url: name_or_url.to_string(),
        };
        let parsed = reqwest::Url::parse(name_or_url).map_err(|_| not_gguf())?;
        let last = parsed
            .path_segments()
            .and_then(|mut segments| segments.next_back())
            .filter(|last| last.ends_with(crate::store::EXTENSION))
            .ok_or_else(not_gguf)?;
        let file = stored_file_name(last).map_err(|_| not_gguf())?;
        Ok(Source::Url {
            url: name_or_url.to_string(),
            file,
        })
    }
}

/// Whether the finished part is the file wanted: the catalog's size and sha256, or for a
/// file from elsewhere at least a GGUF header.
async fn verify(
    part: &mut Part,
    entry: Option<&'static CatalogEntry>,
    transferred: &Transferred,
    job: &Job,
) -> Result<Checksum, PullError> {
    let Some(entry) = entry else {
        let start = part.start().await?;
        return match gguf::check_header(&start) {
            Ok(_) => Ok(Checksum::NoneToCompare),
            Err(HeaderError::NotGguf(reason)) => Err(PullError::NotGgufDownload {
                url: job.url.clone(),
                reason,
            }),
            Err(HeaderError::Version(version)) => Err(PullError::GgufVersionDownload {
                url: job.url.clone(),
                version,
            }),
        };
    };
    if transferred.size != entry.size {
        return Err(PullError::SizeMismatch {
            file: job.file.clone(),
            url: job.url.clone(),
            expected: entry.size,
            got: transferred.size,
        });
    }
    if transferred.sha256 != entry.sha256 {
        return Err(PullError::ChecksumMismatch {
            file: job.file.clone(),
            url: job.url.clone(),
            expected: entry.sha256.to_string(),
            got: transferred.sha256.clone(),
        });
    }
    Ok(Checksum::MatchesCatalog)
}

enum Source {
    Catalog(&'static CatalogEntry),
    Url { url: String, file: String },
}

/// The result of pulling a file the store already has: checked against the catalog when
/// it is a catalog file (hashed once if no digest was recorded for it).
async fn present(
    store: &Store,
    file: &str,
    url: String,
    entry: Option<&'static CatalogEntry>,
) -> Result<Pulled, PullError> {
    let path = store.dir().join(file);
    let sha256 = match digest::recorded(&path) {
        Some(sha256) => sha256,
        None => {
            let sha256 = digest::sha256_file_async(&path).await?;
            digest::record(&path, &sha256);
            sha256
        }
    };
    let checksum = match entry {
        Some(entry) if entry.sha256 == sha256 => Checksum::MatchesCatalog,
        Some(_) => {
            return Err(PullError::Exists {
                file: file.to_string(),
                dir: store.dir().to_path_buf(),
            })
        }
        None => Checksum::NoneToCompare,
    };
    Ok(Pulled {
        model: store.describe(file)?,
        url,
        sha256,
        checksum,
        resumed_from: 0,
        already_present: true,
    })
}
