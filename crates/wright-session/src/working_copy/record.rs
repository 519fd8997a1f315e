//! `working_copy.json` in the conversation's directory: where the conversation works and
//! on what, written by wright when the conversation starts, in a directory the sandbox
//! cannot reach. Resume, fork, apply and discard trust this record, not the log: the
//! log's own idea of its workspace must agree with it.

use super::git_entries::Scan;
use anyhow::bail;
use anyhow::Context;
use anyhow::Result;
use serde::Deserialize;
use serde::Serialize;
use std::path::Path;
use std::path::PathBuf;

const FILE: &str = "working_copy.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// A directory that is not a git repository, worked in directly.
    Direct {
        workspace: PathBuf,
        /// The repositories in it when the conversation started (the user's).
        #[serde(default)]
        git_before: Scan,
    },
    /// A repository's own work tree (`--in-place`), its `.git` read-only to the agent.
    InPlace {
        repo_root: PathBuf,
        workspace: PathBuf,
        base_commit: String,
        /// `--force`: the tree may have had changes of the user's at the start.
        forced: bool,
        /// The repositories in it when the conversation started (the user's).
        #[serde(default)]
        git_before: Scan,
    },
    /// The agent's clone on its own branch.
    Clone {
        repo_root: PathBuf,
        clone_root: PathBuf,
        workspace: PathBuf,
        branch: String,
        base_commit: String,
    },
}

impl Record {
    pub fn workspace(&self) -> &Path {
        match self {
            Record::Direct { workspace, .. }
            | Record::InPlace { workspace, .. }
            | Record::Clone { workspace, .. } => workspace,
        }
    }

    pub fn write(&self, conversation_dir: &Path) -> Result<()> {
        let path = conversation_dir.join(FILE);
        let text = serde_json::to_string(self)?;
        // A new file in a directory wright just made: never one that existed.
        use std::io::Write;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .with_context(|| format!("cannot record the working copy in {}", path.display()))
    }

    /// Drops the record of a conversation whose working copy is gone for good (a
    /// reviewer's, once it has reviewed): no command then takes it for a conversation on
    /// the repository (`wright apply` without an id, say); its log stays.
    pub fn forget(conversation_dir: &Path) -> Result<()> {
        let path = conversation_dir.join(FILE);
        match std::fs::remove_file(&path) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                Err(err).with_context(|| format!("cannot remove {}", path.display()))
            }
            _ => Ok(()),
        }
    }

    pub fn read(conversation_dir: &Path) -> Result<Self> {
        let path = conversation_dir.join(FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => bail!(
                "{} has no record of its working copy (it was made by an older wright); start a new conversation instead",
                conversation_dir.display()
            ),
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
        };
        serde_json::from_str(&text).with_context(|| format!("{} is damaged", path.display()))
    }

    /// The repositories found in the workspace when the conversation started (none for a
    /// clone: the agent's own).
    pub fn git_before(&self) -> Option<&Scan> {
        match self {
            Record::Direct { git_before, .. } | Record::InPlace { git_before, .. } => {
                Some(git_before)
            }
            Record::Clone { .. } => None,
        }
    }

    /// Refuses a log whose workspace is not the one recorded for it.
    pub fn check_logged_workspace(&self, logged: &Path) -> Result<()> {
        if logged != self.workspace() {
            bail!(
                "the log says this conversation works in {}, but it was started in {}; the log does not match its workspace, so it is not resumed",
                logged.display(),
                self.workspace().display()
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_are_written_once() {
        let dir = tempfile::tempdir().unwrap();
        let record = Record::Clone {
            repo_root: "/r".into(),
            clone_root: "/c".into(),
            workspace: "/c/sub".into(),
            branch: "wright/x".into(),
            base_commit: "ab".repeat(20),
        };
        record.write(dir.path()).unwrap();
        assert_eq!(Record::read(dir.path()).unwrap(), record);
        assert!(record.write(dir.path()).is_err());
        assert!(record.check_logged_workspace(Path::new("/c/sub")).is_ok());
        assert!(record
            .check_logged_workspace(Path::new("/elsewhere"))
            .is_err());
    }
}
