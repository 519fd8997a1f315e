//! wright's own scratch files: the script of each command the terminal runs and the long
//! outputs it saves. They live in the conversation's private `out/` directory, which the
//! sandbox can read but not write, so the agent cannot plant a link where wright is about
//! to write, nor swap a script between its writing and its running.
//!
//! Even so, every file is created through a descriptor of that directory opened once,
//! with `O_CREAT | O_EXCL` (which never follows a link), under a name not used before;
//! and what is written is bounded by the same size limit as the agent's own files. Saved
//! outputs are bounded together too: by the run's disk limit (`--max-disk`) once it is
//! known, each of the outputs kept at once getting its share, so what wright keeps for
//! the agent never costs more disk than the agent may take itself.

use crate::ToolError;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use cap_std::fs::OpenOptions;
use cap_std::fs::OpenOptionsExt;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Saved outputs kept at once: older ones are removed as new ones are made.
const KEPT_OUTPUTS: u64 = 16;

#[derive(Clone)]
pub struct Scratch {
    inner: Arc<Inner>,
}

struct Inner {
    dir: Dir,
    path: PathBuf,
    max_file_bytes: u64,
    /// The most all saved outputs kept at once may hold (no bound until told).
    outputs_budget: AtomicU64,
    next: AtomicU64,
}

impl Scratch {
    /// The scratch directory at `path` (made by wright, not writable by the sandbox);
    /// no file in it grows past `max_file_bytes`.
    pub fn open(path: &Path, max_file_bytes: u64) -> Result<Self, ToolError> {
        let dir = Dir::open_ambient_dir(path, ambient_authority())
            .map_err(|err| ToolError::Fatal(format!("scratch {}: {err}", path.display())))?;
        Ok(Self {
            inner: Arc::new(Inner {
                dir,
                path: path.to_path_buf(),
                max_file_bytes,
                outputs_budget: AtomicU64::new(u64::MAX),
                next: AtomicU64::new(1),
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    pub fn max_file_bytes(&self) -> u64 {
        self.inner.max_file_bytes
    }

    /// Bounds the saved outputs kept at once to `total` bytes together (the run's disk
    /// limit): each new one gets its share.
    pub fn bound_outputs(&self, total: u64) {
        self.inner.outputs_budget.store(total, Ordering::Relaxed);
    }

    /// The most one file named `stem` may hold.
    fn limit_of(&self, stem: &str) -> u64 {
        match stem {
            "output" => self
                .inner
                .max_file_bytes
                .min(self.inner.outputs_budget.load(Ordering::Relaxed) / KEPT_OUTPUTS),
            _ => self.inner.max_file_bytes,
        }
    }

    /// A new file `STEM-N.EXT`, never one that existed.
    pub fn create(&self, stem: &str, ext: &str) -> Result<ScratchFile, ToolError> {
        for _ in 0..64 {
            let n = self.inner.next.fetch_add(1, Ordering::Relaxed);
            let name = format!("{stem}-{n}.{ext}");
            let mut options = OpenOptions::new();
            // Readable by the sandbox's user, whoever it is (a Docker image's uid).
            options.write(true).create_new(true).mode(0o644);
            match self.inner.dir.open_with(&name, &options) {
                Ok(file) => {
                    if stem == "output" && n > KEPT_OUTPUTS {
                        self.remove(&format!("{stem}-{}.{ext}", n - KEPT_OUTPUTS));
                    }
                    return Ok(ScratchFile {
                        path: self.inner.path.join(&name),
                        name,
                        file: file.into_std(),
                        written: 0,
                        limit: self.limit_of(stem),
                        cut: false,
                    });
                }
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(err) => return Err(scratch_error(&self.inner.path, err)),
            }
        }
        Err(ToolError::Fatal(format!(
            "cannot create a scratch file in {}: every name is taken",
            self.inner.path.display()
        )))
    }

    /// Removes a file of the scratch directory (a name, never a path).
    pub fn remove(&self, name: &str) {
        let _ = self.inner.dir.remove_file(name);
    }
}

/// A scratch file being written: writes past the size limit are dropped and noted.
pub struct ScratchFile {
    pub path: PathBuf,
    pub name: String,
    file: std::fs::File,
    written: u64,
    limit: u64,
    cut: bool,
}

impl ScratchFile {
    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let room = usize::try_from(self.limit.saturating_sub(self.written)).unwrap_or(usize::MAX);
        let kept = &bytes[..bytes.len().min(room)];
        if kept.len() < bytes.len() {
            self.cut = true;
        }
        self.file.write_all(kept)?;
        self.written += kept.len() as u64;
        Ok(())
    }

    /// Shortens the file to `len` bytes if it is longer.
    pub fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        if len < self.written {
            self.file.flush()?;
            self.file.set_len(len)?;
            self.written = len;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }

    /// Bytes in the file.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Whether writes were dropped at the size limit.
    pub fn was_cut(&self) -> bool {
        self.cut
    }
}

fn scratch_error(path: &Path, err: std::io::Error) -> ToolError {
    ToolError::Fatal(format!("cannot write in {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_new_bounded_and_never_follow_links() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("target");
        std::fs::write(&target, "original").unwrap();
        // A link planted at the first name: it is skipped, not followed.
        std::os::unix::fs::symlink(&target, dir.path().join("output-1.txt")).unwrap();
        let scratch = Scratch::open(dir.path(), 10).unwrap();
        let mut file = scratch.create("output", "txt").unwrap();
        assert_eq!(file.name, "output-2.txt");
        file.write(b"0123456789abcdef").unwrap();
        assert!(file.was_cut());
        assert_eq!(std::fs::read(&file.path).unwrap(), b"0123456789");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "original");
    }

    #[test]
    fn saved_outputs_together_stay_within_the_disk_limit() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = Scratch::open(dir.path(), 1 << 20).unwrap();
        scratch.bound_outputs(KEPT_OUTPUTS * 100);
        for _ in 0..(KEPT_OUTPUTS * 2) {
            let mut file = scratch.create("output", "txt").unwrap();
            file.write(&[b'x'; 1000]).unwrap();
            assert!(file.was_cut());
            assert_eq!(file.written(), 100);
        }
        let total: u64 = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        assert_eq!(total, KEPT_OUTPUTS * 100);
        // A command's script is not an output: the file-size limit alone bounds it.
        let mut script = scratch.create("command", "sh").unwrap();
        script.write(&[b'x'; 1000]).unwrap();
        assert!(!script.was_cut());
    }

    #[test]
    fn old_outputs_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = Scratch::open(dir.path(), 1 << 20).unwrap();
        for _ in 0..(KEPT_OUTPUTS + 4) {
            scratch.create("output", "txt").unwrap();
        }
        let count = std::fs::read_dir(dir.path()).unwrap().count() as u64;
        assert_eq!(count, KEPT_OUTPUTS);
    }
}
