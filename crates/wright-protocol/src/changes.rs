//! Where a run's changes went (the `changes` event, version 3 on): a branch of the user's
//! repository, a commit in place, left uncommitted, none, or a failed hand-over.

use serde::Deserialize;
use serde::Serialize;

/// Where the agent's changes are at the end of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Changes {
    pub outcome: ChangesOutcome,
    /// The branch holding them, in the user's repository (`branch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The commit wright made on the user's current branch (`committed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The changes as a git diff (`branch`, `committed`, `uncommitted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Changed files that configure git, git-lfs or wright (`wright apply` asks first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configuring: Vec<String>,
    /// Why they could not be handed over (`failed`), and where they are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
}

/// What became of the agent's changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangesOutcome {
    /// On a branch of the user's repository (`wright apply` takes them).
    Branch,
    /// In place, committed by wright on the user's current branch.
    Committed,
    /// In place, left uncommitted beside the user's own changes (`--force`).
    Uncommitted,
    /// Nothing changed.
    None,
    /// The workspace is not a git repository: nothing to show as a diff.
    NotGit,
    /// The hand-over failed; the agent's clone keeps them.
    Failed,
}

impl ChangesOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangesOutcome::Branch => "branch",
            ChangesOutcome::Committed => "committed",
            ChangesOutcome::Uncommitted => "uncommitted",
            ChangesOutcome::None => "none",
            ChangesOutcome::NotGit => "not_git",
            ChangesOutcome::Failed => "failed",
        }
    }
}
