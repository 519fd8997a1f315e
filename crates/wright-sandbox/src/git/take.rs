//! Taking the agent's branch into the user's repository (`wright apply`): a merge or a
//! cherry-pick with no hook, refused over a dirty tree or an operation in progress, and
//! undone on a conflict so the repository is as it was, the conflicting files named.

use super::GitError;
use super::Oid;
use super::UserRepo;
use std::process::Stdio;

impl UserRepo {
    /// `wright apply`: merges `branch` into the current branch. No hook runs: the merge
    /// brings the agent's files, which may be the hooks themselves (`core.hooksPath`).
    pub fn merge(&self, branch: &str) -> Result<(), GitError> {
        self.taking(&["merge", "--no-edit", branch], "merge")
    }

    /// `wright apply --cherry-pick`: picks the commits `base..branch`, without hooks.
    pub fn cherry_pick(&self, base: &Oid, branch: &str) -> Result<(), GitError> {
        self.taking(
            &["cherry-pick", &format!("{base}..{branch}")],
            "cherry-pick",
        )
    }

    /// The operation left half done in this repository (a merge, a rebase…), if any:
    /// taking a branch on top of it would mix the two.
    pub fn operation_in_progress(&self) -> Option<&'static str> {
        let dirs = self.git_dirs().ok()?;
        let markers = [
            ("MERGE_HEAD", "a merge"),
            ("CHERRY_PICK_HEAD", "a cherry-pick"),
            ("REVERT_HEAD", "a revert"),
            ("rebase-merge", "a rebase"),
            ("rebase-apply", "a rebase or git am"),
            ("BISECT_LOG", "a bisect"),
        ];
        markers.iter().find_map(|(marker, what)| {
            dirs.iter()
                .any(|dir| dir.join(marker).symlink_metadata().is_ok())
                .then_some(*what)
        })
    }

    /// Whether tracked files have changes not committed (untracked files do not count:
    /// git itself refuses to overwrite one).
    pub fn has_uncommitted_changes(&self) -> Result<bool, GitError> {
        Ok(!self
            .run(&["status", "--porcelain", "--untracked-files=no"])?
            .trim()
            .is_empty())
    }

    /// Runs the merge or cherry-pick; on failure, undoes it so the repository is as it
    /// was, and says which files conflicted (or, if it could not be undone, that it is
    /// still in progress).
    fn taking(&self, args: &[&str], operation: &'static str) -> Result<(), GitError> {
        let output = self
            .command()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| GitError::Spawn(e.to_string()))?;
        if output.status.success() {
            return Ok(());
        }
        let conflicted: Vec<String> = self
            .run(&["diff", "--name-only", "--diff-filter=U", "-z"])
            .unwrap_or_default()
            .split('\0')
            .filter(|name| !name.is_empty())
            .map(str::to_string)
            .collect();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let in_progress = self.operation_in_progress().is_some();
        let undone = !in_progress || self.run(&[operation, "--abort"]).is_ok();
        Err(GitError::NotTaken {
            operation,
            conflicted,
            undone,
            said: said.trim().lines().take(20).collect::<Vec<_>>().join("\n"),
        })
    }
}
