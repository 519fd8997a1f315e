//! Removing a conversation: its directory (log, records), the agent's clone (and an
//! external agent's home), its branch in the user's repository, and the private
//! directories its dead runs left. What `wright rm`, `wright gc` and a server's DELETE
//! share.
//!
//! What it guarantees: no work nobody took is removed unless forced — a branch with
//! commits the user's HEAD lacks, or a clone whose run never handed its changes over (see
//! `working_copy::status`); a running conversation is never touched (its lock is held for
//! the whole removal); nothing is followed out of what is removed.

use crate::stored::Summary;
use crate::working_copy::status::Change;
use crate::working_copy::status::Repos;
use crate::working_copy::Record;
use anyhow::Context;
use anyhow::Result;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::path::PathBuf;
use wright_core::workspaces_dir;
use wright_core::RunLock;
use wright_sandbox::git::Oid;
use wright_sandbox::git::UserRepo;
use wright_sandbox::remove_tree;

/// What removing one conversation takes away.
pub struct Removal {
    pub dir: PathBuf,
    pub clone: PathBuf,
    /// The repository cloned from a URL for it (the server's `repository_url`), if any.
    pub cloned: Option<PathBuf>,
    /// The home its external agent kept across runs (`agent_homes_dir`), if any.
    pub agent_home: Option<PathBuf>,
    /// Its branch in the user's repository, and where it pointed.
    pub branch: Option<(UserRepo, String, Oid)>,
    /// Private directories its dead runs left in the temp directory.
    pub private: Vec<PathBuf>,
    pub bytes: u64,
}

impl Removal {
    /// Call with the conversation's lock held: its runs are over.
    pub fn plan(summary: &Summary) -> Self {
        let id = summary.id.clone();
        let clone = workspaces_dir().join(&id);
        let branch = match &summary.record {
            Some(Record::Clone {
                repo_root, branch, ..
            }) => {
                let repo = UserRepo::at(repo_root);
                repo.branch_tip(branch)
                    .map(|tip| (repo, branch.clone(), tip))
            }
            Some(Record::Direct { .. } | Record::InPlace { .. }) | None => None,
        };
        let cloned = Some(wright_core::repositories_dir().join(&id))
            .filter(|dir| dir.symlink_metadata().is_ok());
        let agent_home = Some(wright_core::agent_homes_dir().join(&id))
            .filter(|dir| dir.symlink_metadata().is_ok());
        let fork = format!("{id}-fork");
        let private = wright_sandbox::dead_private_dirs(&std::env::temp_dir(), &|run| {
            run == id || run == fork
        });
        let bytes = disk_use(&summary.dir)
            + disk_use(&clone)
            + cloned.as_deref().map_or(0, disk_use)
            + agent_home.as_deref().map_or(0, disk_use)
            + private.iter().map(|p| disk_use(p)).sum::<u64>();
        Self {
            dir: summary.dir.clone(),
            clone,
            cloned,
            agent_home,
            branch,
            private,
            bytes,
        }
    }

    /// Removes it all, the conversation's own directory last (so a failure leaves it to
    /// be found and removed again).
    pub fn run(&self) -> Result<()> {
        for dir in &self.private {
            remove_tree(dir).with_context(|| format!("cannot remove {}", dir.display()))?;
        }
        if let Some((repo, branch, _)) = &self.branch {
            repo.delete_branch(branch)
                .with_context(|| format!("cannot delete {branch} in {}", repo.top().display()))?;
        }
        if let Some(cloned) = &self.cloned {
            remove_tree(cloned).with_context(|| format!("cannot remove {}", cloned.display()))?;
        }
        if let Some(home) = &self.agent_home {
            remove_tree(home).with_context(|| format!("cannot remove {}", home.display()))?;
        }
        if self.clone.symlink_metadata().is_ok() {
            remove_tree(&self.clone)
                .with_context(|| format!("cannot remove {}", self.clone.display()))?;
        }
        // What the git store's takeover knew of the clone goes with it.
        crate::clone_step::forget(&self.clone);
        remove_tree(&self.dir).with_context(|| format!("cannot remove {}", self.dir.display()))
    }
}

/// Why a conversation was not removed.
#[derive(Debug)]
pub enum RemoveError {
    /// It holds changes nobody took (and removal was not forced).
    HoldsWork(Change),
    /// It is running, or could not be read or removed.
    Failed(anyhow::Error),
}

impl std::fmt::Display for RemoveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoveError::HoldsWork(change) => {
                write!(f, "it holds changes nobody took ({})", change.as_str())
            }
            RemoveError::Failed(err) => write!(f, "{err:#}"),
        }
    }
}

impl std::error::Error for RemoveError {}

/// Removes the conversation in `dir` (its lock held throughout), unless it holds work
/// nobody took and `force` is not given; returns what was removed.
pub fn remove(dir: &Path, force: bool) -> Result<(Removal, Change), RemoveError> {
    let id = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let _lock = RunLock::conversation(dir, &id).map_err(|e| RemoveError::Failed(e.into()))?;
    let summary = Summary::read(&id).map_err(RemoveError::Failed)?;
    let change = summary.change(&mut Repos::default());
    if change.holds_work() && !force {
        return Err(RemoveError::HoldsWork(change));
    }
    let removal = Removal::plan(&summary);
    removal.run().map_err(RemoveError::Failed)?;
    Ok((removal, change))
}

/// The disk space a tree takes (allocated blocks), its links counted but never followed;
/// what cannot be read is not counted.
pub fn disk_use(path: &Path) -> u64 {
    let Ok(meta) = path.symlink_metadata() else {
        return 0;
    };
    let own = meta.blocks() * 512;
    if !meta.is_dir() {
        return own;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return own;
    };
    own + entries
        .flatten()
        .map(|entry| disk_use(&entry.path()))
        .sum::<u64>()
}
