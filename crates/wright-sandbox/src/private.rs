//! A conversation's private directory, outside every workspace: `tmp/` (the commands'
//! TMPDIR) and `home/` (their HOME), which the sandbox may write; `caches/`, the upper
//! layers of the overlays over the user's toolchain caches; and `out/`, where wright
//! itself writes the scripts it runs and the long outputs it saves, which the sandbox may
//! only read — so the agent can neither plant a link there nor replace a file wright is
//! about to write.
//!
//! The directory is made by `mkdtemp` (a fresh name, mode 0700, never an existing path),
//! and removed with everything in it when this is dropped.

use crate::mode::SandboxError;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::path::PathBuf;

#[derive(Debug)]
pub struct PrivateDir {
    root: PathBuf,
}

impl PrivateDir {
    /// Creates `BASE/wright-CONVERSATION-<six random characters>/{tmp,home,out}`.
    pub fn create(base: &Path, conversation: &str) -> Result<Self, SandboxError> {
        // mkdtemp replaces the trailing Xs with random characters.
        let template = base.join(format!("wright-{conversation}-{}", "X".repeat(6)));
        let root = nix::unistd::mkdtemp(&template).map_err(|e| {
            SandboxError::Io(std::io::Error::other(format!(
                "cannot create a private directory in {}: {e}",
                base.display()
            )))
        })?;
        let root = root.canonicalize()?;
        let made = Self { root };
        // `out` is readable by all: in a Docker sandbox it is bound alone into the
        // container, whose user may be another uid; on the host the 0700 root guards it.
        for (sub, mode) in [
            ("tmp", 0o700),
            ("home", 0o700),
            ("out", 0o755),
            ("caches", 0o700),
        ] {
            std::fs::DirBuilder::new()
                .mode(mode)
                .create(made.root.join(sub))?;
        }
        Ok(made)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The commands' TMPDIR (read-write in the sandbox).
    pub fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// The commands' HOME (read-write in the sandbox).
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// wright's own scratch files (read-only in the sandbox).
    pub fn out(&self) -> PathBuf {
        self.root.join("out")
    }

    /// The private layers over the toolchain caches (reached only by the launcher).
    pub fn caches(&self) -> PathBuf {
        self.root.join("caches")
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        // remove_dir_all does not follow symbolic links.
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_private_and_removed() {
        let base = tempfile::tempdir().unwrap();
        let first = PrivateDir::create(base.path(), "c1").unwrap();
        let second = PrivateDir::create(base.path(), "c1").unwrap();
        assert_ne!(first.root(), second.root());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(first.root())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(first.out().is_dir() && first.tmp().is_dir() && first.home().is_dir());
        let root = first.root().to_path_buf();
        drop(first);
        assert!(!root.exists());
    }
}
