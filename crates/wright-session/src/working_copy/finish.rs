//! The end of a run on a working copy: what the agent changed, read in the sandbox, and
//! for a clone its commit and hand-over as the conversation's branch.

use super::git_entries::quarantine_new;
use super::AgentClone;
use super::InPlace;
use super::Quarantine;
use super::WorkingCopy;
use crate::sandbox_setup::SandboxSetup;
use std::path::PathBuf;
use wright_sandbox::git::AgentRepo;
use wright_sandbox::git::Oid;
use wright_sandbox::Sandbox;

/// What the run left, for the report.
pub enum Outcome {
    /// Not a git repository: the changes against the snapshot taken at the start (none
    /// without one); any repository the agent made, set aside.
    NotGit {
        quarantine: Quarantine,
        diff: Option<String>,
    },
    /// `--in-place`: the agent's changes in the checkout, and what wright did with them.
    InPlace {
        diff: String,
        commit: InPlaceCommit,
        quarantine: Quarantine,
        /// The agent changed `.wright/config.toml`: not committed, left to the user.
        left_config: bool,
    },
    NoChanges,
    Branch {
        branch: String,
        /// The branch's commit.
        tip: Oid,
        diff: String,
        /// Files of it that configure git or git-lfs (`wright apply` asks about them).
        configuring: Vec<String>,
    },
    /// The changes could not be handed over; the clone keeps them.
    Failed {
        reason: String,
        kept: PathBuf,
    },
}

impl Outcome {
    /// The same, its diff masked of the granted secrets: what the report shows and the
    /// log records (the files themselves are the agent's work, left as they are).
    pub fn masked(mut self, masker: &wright_tools::Masker) -> Self {
        match &mut self {
            Outcome::NotGit { diff, .. } => {
                if let Some(diff) = diff {
                    *diff = masker.mask(diff);
                }
            }
            Outcome::InPlace { diff, .. } | Outcome::Branch { diff, .. } => {
                *diff = masker.mask(diff);
            }
            Outcome::NoChanges | Outcome::Failed { .. } => {}
        }
        self
    }
}

/// What became of an in-place run's changes.
pub enum InPlaceCommit {
    /// Committed by wright (in a sandbox) on the current branch.
    Made(Oid),
    /// Nothing changed.
    NothingToCommit,
    /// Left uncommitted: the tree had changes of the user's at the start (`--force`).
    LeftWithYours,
}

/// The most pack data a branch may bring into the user's repository.
const MAX_PACK_BYTES: u64 = 4 << 30;

impl WorkingCopy {
    /// Reads the agent's changes and commits them: for a clone, on its branch, handed to
    /// the user's repository; in place, on the current branch when the tree was clean at
    /// the start. Every git command over what the agent wrote runs in a sandbox.
    /// The end of a clone whose checkout failed (see `crate::checkout`): nothing of the
    /// agent's ran in it, so it goes, with its record of steps; nothing was made.
    pub(crate) fn remove_unmade(&self) -> Outcome {
        if let WorkingCopy::Clone(clone) = self {
            if let Err(err) = std::fs::remove_dir_all(&clone.clone_root) {
                return Outcome::Failed {
                    reason: format!(
                        "the agent's clone was never checked out, and cannot be removed: {err}"
                    ),
                    kept: clone.clone_root.clone(),
                };
            }
            crate::clone_step::forget(&clone.clone_root);
        }
        Outcome::NoChanges
    }

    pub fn finish(&self, message: &str, setup: &SandboxSetup) -> Outcome {
        // Nothing of the agent's may change the work while it is read and committed.
        if let Err(err) = setup.stop_leftovers() {
            return Outcome::Failed {
                reason: format!("{err:#}"),
                kept: self.workspace().to_path_buf(),
            };
        }
        let outcome = match self {
            WorkingCopy::Direct {
                root,
                git_before,
                record_dir,
            } => {
                let quarantine = quarantine_new(root, git_before);
                if quarantine.failed.is_empty() {
                    super::mark_settled(record_dir);
                }
                let diff = super::direct::end(root, record_dir, git_before).map(|diff| {
                    diff.unwrap_or_else(|err| format!("(the changes could not be read: {err:#})"))
                });
                Outcome::NotGit { quarantine, diff }
            }
            WorkingCopy::InPlace(in_place) => {
                // Before the commit, which leaves what is set aside out; and after it, in
                // case its filters (the repository's own) made one.
                let before = quarantine_new(&in_place.workspace, &in_place.git_before);
                let result = in_place.commit(message, setup);
                let quarantine =
                    before.and(quarantine_new(&in_place.workspace, &in_place.git_before));
                if quarantine.failed.is_empty() {
                    super::mark_settled(&in_place.record_dir);
                }
                match result {
                    InPlaceResult::Done {
                        diff,
                        commit,
                        left_config,
                    } => Outcome::InPlace {
                        diff,
                        commit,
                        quarantine,
                        left_config,
                    },
                    InPlaceResult::Failed(outcome) => outcome,
                }
            }
            WorkingCopy::Clone(clone) => clone.hand_over(message, &setup.sandbox, &setup.env),
        };
        // For `ls`, `rm`, `gc` and `diff`: what became of the changes.
        super::status::HandOver::record(self, &outcome);
        outcome
    }
}

enum InPlaceResult {
    Done {
        diff: String,
        commit: InPlaceCommit,
        left_config: bool,
    },
    Failed(Outcome),
}

impl InPlace {
    /// Commits the agent's changes for it: made in the agent's own sandbox, where `.git`
    /// is read-only (the index and new objects aside), then taken into the repository as
    /// a checked pack and the branch moved to the commit by value. What is shown is the
    /// diff of that commit, so it is what was committed.
    fn commit(&self, message: &str, setup: &SandboxSetup) -> InPlaceResult {
        let failed = |reason: String| {
            InPlaceResult::Failed(Outcome::Failed {
                reason,
                kept: self.workspace.clone(),
            })
        };
        let git = AgentRepo::new(&setup.sandbox, &setup.env, &self.workspace);
        if self.forced {
            return match git.changes_since(&self.base) {
                Ok(diff) if diff.trim().is_empty() => InPlaceResult::Done {
                    diff,
                    commit: InPlaceCommit::NothingToCommit,
                    left_config: false,
                },
                Ok(diff) => InPlaceResult::Done {
                    diff,
                    commit: InPlaceCommit::LeftWithYours,
                    left_config: false,
                },
                Err(err) => failed(format!("could not read the changes: {err}")),
            };
        }
        let commit = match git.commit_aside(&self.base, message) {
            Ok(commit) => commit,
            Err(err) => return failed(format!("could not commit the changes: {err}")),
        };
        let tip = commit.tip.clone();
        let left_config = commit.left_config;
        if let Err(err) =
            git.send_objects(&tip, &self.base, Some(&commit), &self.repo, MAX_PACK_BYTES)
        {
            return failed(format!(
                "could not commit the changes (their objects did not pass): {err}"
            ));
        }
        match self.repo.same_tree(&self.base, &tip) {
            Ok(true) => {
                return InPlaceResult::Done {
                    diff: String::new(),
                    commit: InPlaceCommit::NothingToCommit,
                    left_config,
                }
            }
            Ok(false) => {}
            Err(err) => return failed(format!("could not commit the changes: {err}")),
        }
        if let Err(err) = self.repo.advance_head(&self.base, &tip) {
            return failed(format!(
                "could not commit the changes on your branch: {err}"
            ));
        }
        let diff = self
            .repo
            .diff(&self.base, &tip)
            .unwrap_or_else(|err| format!("(the diff could not be shown: {err})"));
        InPlaceResult::Done {
            diff,
            commit: InPlaceCommit::Made(tip),
            left_config,
        }
    }
}

impl AgentClone {
    fn hand_over(&self, message: &str, sandbox: &Sandbox, env: &[(String, String)]) -> Outcome {
        let failed = |reason: String| Outcome::Failed {
            reason,
            kept: self.clone_root.clone(),
        };
        let git = AgentRepo::new(sandbox, env, &self.clone_root);
        if let Err(err) = git.commit_all(message) {
            return failed(format!(
                "could not commit the agent's changes in its clone: {err}"
            ));
        }
        let tip = match git.head() {
            Ok(tip) => tip,
            Err(err) => return failed(format!("could not commit the agent's changes: {err}")),
        };
        if let Err(err) = git.send_objects(&tip, &self.base, None, &self.repo, MAX_PACK_BYTES) {
            return failed(format!(
                "could not commit the agent's changes to your repository (its objects did not pass): {err}"
            ));
        }
        if !self.repo.has_commit(&tip) {
            return failed(format!(
                "could not commit the agent's changes: commit {tip} did not reach your repository"
            ));
        }
        match self.repo.same_tree(&self.base, &tip) {
            Ok(true) => {
                if self.repo.branch_exists(&self.branch) {
                    let _ = self.repo.delete_branch(&self.branch);
                }
                Outcome::NoChanges
            }
            Ok(false) => {
                if let Err(err) = self.repo.set_branch(&self.branch, &tip) {
                    return failed(format!("could not commit the agent's changes: {err}"));
                }
                let diff = self
                    .repo
                    .diff(&self.base, &tip)
                    .unwrap_or_else(|err| format!("(the diff could not be shown: {err})"));
                let pointed = self.repo.configured_paths();
                let configuring = self
                    .repo
                    .paths_touched(&self.base, tip.as_str())
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|path| super::configures_git(path, &pointed))
                    .collect();
                Outcome::Branch {
                    branch: self.branch.clone(),
                    tip,
                    diff,
                    configuring,
                }
            }
            Err(err) => failed(format!("could not commit the agent's changes: {err}")),
        }
    }
}
