//! What became of a conversation's changes, for `ls`, `rm`, `gc` and `diff`: taken into
//! the user's branch, discarded, still waiting on their branch, never made, or still in the
//! agent's clone. Each run's end records how it handed its changes over
//! (`handed_over.json`, next to the record, where the sandbox cannot reach); whether a
//! branch was taken is asked of the user's repository through the hardened runner, with a
//! bounded number of git calls (two per repository, one more per branch not merged).
//!
//! When in doubt the answer is the one that keeps work: a clone whose run did not say it
//! handed everything over counts as holding changes.

use super::Outcome;
use super::Record;
use super::WorkingCopy;
use serde::Deserialize;
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use wright_sandbox::git::BranchTip;
use wright_sandbox::git::Oid;
use wright_sandbox::git::UserRepo;

/// The marker `wright discard` leaves in the conversation's directory.
pub const DISCARDED: &str = "discarded";

/// The file a run's end writes in the conversation's directory.
const HANDED_OVER: &str = "handed_over.json";

/// How the last run's end handed the changes over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HandOver {
    /// As the branch `branch` of the user's repository.
    Branch {
        branch: String,
    },
    /// In place, committed by wright on the user's branch.
    Committed {
        commit: String,
    },
    /// In place, left uncommitted among changes of the user's.
    LeftInTree,
    /// Not a git repository: the changes are in the directory itself.
    InDirectory,
    NoChanges,
    /// They could not be handed over: the working copy keeps them.
    Failed,
}

impl HandOver {
    fn of(outcome: &Outcome) -> Self {
        use super::InPlaceCommit;
        match outcome {
            Outcome::Branch { branch, .. } => HandOver::Branch {
                branch: branch.clone(),
            },
            Outcome::InPlace { commit, .. } => match commit {
                InPlaceCommit::Made(oid) => HandOver::Committed {
                    commit: oid.to_string(),
                },
                InPlaceCommit::NothingToCommit => HandOver::NoChanges,
                InPlaceCommit::LeftWithYours => HandOver::LeftInTree,
            },
            Outcome::NotGit { .. } => HandOver::InDirectory,
            Outcome::NoChanges => HandOver::NoChanges,
            Outcome::Failed { .. } => HandOver::Failed,
        }
    }

    /// Records how `working_copy`'s run ended, in its conversation's directory. Best
    /// effort: without it, the conversation only counts as holding changes.
    pub fn record(working_copy: &WorkingCopy, outcome: &Outcome) {
        let dir = match working_copy {
            WorkingCopy::Direct { record_dir, .. } => record_dir.clone(),
            WorkingCopy::InPlace(in_place) => in_place.record_dir.clone(),
            // The clone is named after its conversation.
            WorkingCopy::Clone(clone) => match clone.clone_root.file_name() {
                Some(id) => wright_core::conversations_dir().join(id),
                None => return,
            },
        };
        let Ok(text) = serde_json::to_string(&Self::of(outcome)) else {
            return;
        };
        // Written aside, then renamed over the last run's: never half a record.
        let aside = dir.join(format!("{HANDED_OVER}.new"));
        if std::fs::write(&aside, text).is_ok() {
            let _ = std::fs::rename(&aside, dir.join(HANDED_OVER));
        }
    }

    pub fn read(conversation_dir: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(conversation_dir.join(HANDED_OVER)).ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// What became of a conversation's changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Its branch is in the user's HEAD: merged, or each of its commits picked.
    Applied,
    /// `wright discard` dropped it.
    Discarded,
    /// Its branch has commits the user's HEAD lacks.
    HasChanges,
    NoChanges,
    /// In place or in a plain directory: the changes are where it worked.
    InYourTree,
    /// Not handed over (a run going on, or one that ended before it could): the agent's
    /// clone holds the work.
    InClone,
    /// Its branch was deleted outside wright.
    BranchGone,
    /// The repository it worked on is gone.
    RepoGone,
    /// No record of where it worked (an older wright, or a start that failed).
    Unrecorded,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Applied => "applied",
            Change::Discarded => "discarded",
            Change::HasChanges => "has changes",
            Change::NoChanges => "no changes",
            Change::InYourTree => "in your tree",
            Change::InClone => "in its clone",
            Change::BranchGone => "branch gone",
            Change::RepoGone => "repo gone",
            Change::Unrecorded => "unrecorded",
        }
    }

    /// Why the branch of conversation `id` is not there, and what to do: the one answer
    /// `wright diff` and `wright apply` give.
    pub fn why_no_branch(self, id: &str) -> String {
        match self {
            Change::Discarded => "it was discarded".to_string(),
            Change::NoChanges => "it left no changes: there is nothing to take".to_string(),
            Change::InClone => format!(
                "its run did not hand its changes over; they are in its clone (`wright resume {id}` goes on there and hands them over at its end)"
            ),
            Change::RepoGone => "its repository is gone".to_string(),
            Change::BranchGone
            | Change::Applied
            | Change::HasChanges
            | Change::InYourTree
            | Change::Unrecorded => "the branch was deleted".to_string(),
        }
    }

    /// Whether removing the conversation could lose work nobody has taken.
    pub fn holds_work(self) -> bool {
        match self {
            Change::HasChanges | Change::InClone => true,
            Change::Applied
            | Change::Discarded
            | Change::NoChanges
            | Change::InYourTree
            | Change::BranchGone
            | Change::RepoGone
            | Change::Unrecorded => false,
        }
    }
}

/// The user's repositories asked so far: their `wright/` branches, and which of those
/// not merged were picked into HEAD.
#[derive(Default)]
pub struct Repos {
    branches: HashMap<PathBuf, Option<Vec<BranchTip>>>,
}

impl Repos {
    /// The `wright/` branches of the repository at `top`; `None` when it is no
    /// repository any more.
    fn branches(&mut self, top: &Path) -> Option<&[BranchTip]> {
        self.branches
            .entry(top.to_path_buf())
            .or_insert_with(|| {
                if !top.is_dir() {
                    return None;
                }
                UserRepo::at(top).branches_under("wright").ok()
            })
            .as_deref()
    }

    /// What became of the changes of the conversation in `dir`, worked on as `record`
    /// says; `ended` when its log says its last run ended (not running, not interrupted).
    pub fn change_of(&mut self, dir: &Path, record: Option<&Record>, ended: bool) -> Change {
        if dir.join(DISCARDED).exists() {
            return Change::Discarded;
        }
        let handed = HandOver::read(dir).filter(|_| ended);
        let Some(record) = record else {
            return match dir.file_name() {
                Some(id) if wright_core::workspaces_dir().join(id).exists() => Change::InClone,
                _ => Change::Unrecorded,
            };
        };
        let (repo_root, clone_root, branch, base_commit) = match record {
            Record::Direct { .. } | Record::InPlace { .. } => {
                return match handed {
                    Some(HandOver::NoChanges) => Change::NoChanges,
                    _ => Change::InYourTree,
                }
            }
            Record::Clone {
                repo_root,
                clone_root,
                branch,
                base_commit,
                ..
            } => (repo_root, clone_root, branch, base_commit),
        };
        let clone_kept = clone_root.is_dir();
        // A branch may be older than what its clone holds now.
        if clone_kept && (handed.is_none() || handed == Some(HandOver::Failed)) {
            return Change::InClone;
        }
        let Some(branches) = self.branches(repo_root) else {
            return Change::RepoGone;
        };
        match branches.iter().find(|b| &b.name == branch) {
            Some(found) if found.in_head => Change::Applied,
            Some(found) => {
                let picked = Oid::parse(base_commit).is_some_and(|base| {
                    UserRepo::at(repo_root).picked_into_head(&base, &found.tip)
                });
                if picked {
                    Change::Applied
                } else {
                    Change::HasChanges
                }
            }
            None => match handed {
                Some(HandOver::NoChanges) => Change::NoChanges,
                Some(HandOver::Branch { .. }) if clone_kept => Change::BranchGone,
                // Neither branch nor clone: what `wright discard` leaves (an older one
                // left no marker).
                _ => Change::Discarded,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_over_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(HandOver::read(dir.path()), None);
        let handed = HandOver::Committed {
            commit: "ab".repeat(20),
        };
        let text = serde_json::to_string(&handed).unwrap();
        std::fs::write(dir.path().join(HANDED_OVER), text).unwrap();
        assert_eq!(HandOver::read(dir.path()), Some(handed));
    }

    #[test]
    fn work_is_kept_when_in_doubt() {
        let dir = tempfile::tempdir().unwrap();
        let clone = tempfile::tempdir().unwrap();
        let record = Record::Clone {
            repo_root: dir.path().join("no-repo"),
            clone_root: clone.path().to_path_buf(),
            workspace: clone.path().to_path_buf(),
            branch: "wright/x".into(),
            base_commit: "ab".repeat(20),
        };
        let mut repos = Repos::default();
        // No word of a hand-over, or a failed one, or a run not ended: the clone holds it.
        assert_eq!(
            repos.change_of(dir.path(), Some(&record), true),
            Change::InClone
        );
        assert_eq!(
            repos.change_of(dir.path(), Some(&record), false),
            Change::InClone
        );
        std::fs::write(dir.path().join(HANDED_OVER), r#"{"kind":"failed"}"#).unwrap();
        assert_eq!(
            repos.change_of(dir.path(), Some(&record), true),
            Change::InClone
        );
        std::fs::write(dir.path().join(DISCARDED), "").unwrap();
        assert_eq!(
            repos.change_of(dir.path(), Some(&record), true),
            Change::Discarded
        );
    }
}
