//! One writer per conversation, and one in-place run per checkout: an advisory lock
//! (`flock`) on a file in wright's data directory, held for a run's whole life and let go
//! by the kernel however the process ends — so a second writer is told who holds it, and a
//! run whose lock nobody holds is known dead (interrupted), never mistaken for live.
//!
//! The lock files live where the sandbox cannot reach, and the descriptor is close-on-exec
//! so no command the agent starts can keep a lock after wright is gone.

use std::fs::File;
use std::fs::OpenOptions;
use std::io::Read;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{what} is running ({}); wait for it to end, or stop it first", pid.map_or_else(|| "its process id is unknown".to_string(), |pid| format!("pid {pid}")))]
    Held { what: String, pid: Option<u32> },
    #[error("cannot lock {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// Serializes this process's lock attempts (see `RunLock::take`).
static IN_PROCESS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A held lock; dropping it lets go.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

/// The lock file of the conversation whose directory is `dir`.
pub fn conversation_lock_path(dir: &Path) -> PathBuf {
    dir.join("lock")
}

/// The lock file of in-place runs on the checkout at `top`.
fn checkout_lock_path(top: &Path) -> PathBuf {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(top.as_os_str().as_encoded_bytes());
    let name: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    crate::paths::data_dir()
        .join("locks")
        .join(format!("{name}.lock"))
}

impl RunLock {
    /// Takes the lock at `path` for `what` ("conversation ID"), or says who holds it.
    pub fn take(path: &Path, what: &str) -> Result<Self, LockError> {
        let _one_at_a_time = IN_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
        Self::take_alone(path, what)
    }

    /// `take`, with this process's other lock attempts held off by the caller.
    fn take_alone(path: &Path, what: &str) -> Result<Self, LockError> {
        let io = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Err(LockError::Held {
                    what: what.to_string(),
                    pid: text.trim().parse().ok(),
                });
            }
            Err(std::fs::TryLockError::Error(source)) => return Err(io(source)),
        }
        // Who holds it, for the next one to be told.
        file.set_len(0).map_err(io)?;
        write!(file, "{}", std::process::id()).map_err(io)?;
        Ok(Self { _file: file })
    }

    pub fn conversation(dir: &Path, id: &str) -> Result<Self, LockError> {
        Self::take(&conversation_lock_path(dir), &format!("conversation {id}"))
    }

    pub fn checkout(top: &Path) -> Result<Self, LockError> {
        Self::take(
            &checkout_lock_path(top),
            &format!("another run in place in {}", top.display()),
        )
    }
}

/// Whether a live process holds the conversation's lock: its pid if so.
pub fn holder(dir: &Path) -> Option<Option<u32>> {
    // It probes by taking the lock for an instant: in one process (a server listing
    // conversations while it starts one) a probe must not make a start fail, so no other
    // attempt of this process runs until the probe has let go.
    let _one_at_a_time = IN_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let held = match RunLock::take_alone(&conversation_lock_path(dir), "") {
        Ok(probe) => {
            drop(probe);
            None
        }
        Err(LockError::Held { pid, .. }) => Some(pid),
        Err(LockError::Io { .. }) => None,
    };
    drop(_one_at_a_time);
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_the_next_is_told_who() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(holder(dir.path()), None);
        let held = RunLock::conversation(dir.path(), "c1").unwrap();
        let err = RunLock::conversation(dir.path(), "c1").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "conversation c1 is running (pid {}); wait for it to end, or stop it first",
                std::process::id()
            )
        );
        assert_eq!(holder(dir.path()), Some(Some(std::process::id())));
        drop(held);
        assert_eq!(holder(dir.path()), None);
        assert!(RunLock::conversation(dir.path(), "c1").is_ok());
    }
}
