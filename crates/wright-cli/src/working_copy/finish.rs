//! The end of a run on a working copy: what the agent changed, read in the sandbox, and
//! for a clone its commit and hand-over as the conversation's branch.

use super::AgentClone;
use super::WorkingCopy;
use std::path::PathBuf;
use wright_sandbox::git::AgentRepo;
use wright_sandbox::Sandbox;

/// What the run left, for the report.
pub enum Outcome {
    /// Not a git repository: no diff to show.
    NotGit,
    /// `--in-place`: the agent's changes, uncommitted in the checkout.
    InPlace {
        diff: String,
    },
    NoChanges,
    Branch {
        branch: String,
        diff: String,
    },
    /// The changes could not be handed over; the clone keeps them.
    Failed {
        reason: String,
        kept: PathBuf,
    },
}

/// The most pack data a branch may bring into the user's repository.
const MAX_PACK_BYTES: u64 = 4 << 30;

impl WorkingCopy {
    /// Reads (and for a clone commits and hands over) the agent's changes. Every git
    /// command over the agent's repository runs in `sandbox`.
    pub fn finish(&self, task: &str, sandbox: &Sandbox, env: &[(String, String)]) -> Outcome {
        match self {
            WorkingCopy::Direct { .. } => Outcome::NotGit,
            WorkingCopy::InPlace(in_place) => {
                let git = AgentRepo::new(sandbox, env, &in_place.workspace);
                match git.changes_since(&in_place.base) {
                    Ok(diff) => Outcome::InPlace { diff },
                    Err(err) => Outcome::Failed {
                        reason: format!("could not read the changes: {err}"),
                        kept: in_place.workspace.clone(),
                    },
                }
            }
            WorkingCopy::Clone(clone) => clone.hand_over(task, sandbox, env),
        }
    }
}

impl AgentClone {
    fn hand_over(&self, task: &str, sandbox: &Sandbox, env: &[(String, String)]) -> Outcome {
        let failed = |reason: String| Outcome::Failed {
            reason,
            kept: self.clone_root.clone(),
        };
        let title: String = task.lines().next().unwrap_or("").chars().take(72).collect();
        let git = AgentRepo::new(sandbox, env, &self.clone_root);
        if let Err(err) = git.commit_all(&format!("wright: {title}")) {
            return failed(format!(
                "could not commit the agent's changes in its clone: {err}"
            ));
        }
        let tip = match git.head() {
            Ok(tip) => tip,
            Err(err) => return failed(format!("could not commit the agent's changes: {err}")),
        };
        if let Err(err) = git.send_objects(&tip, &self.base, &self.repo, MAX_PACK_BYTES) {
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
                match self.repo.diff(&self.base, &tip) {
                    Ok(diff) => Outcome::Branch {
                        branch: self.branch.clone(),
                        diff,
                    },
                    Err(err) => Outcome::Branch {
                        branch: self.branch.clone(),
                        diff: format!("(the diff could not be shown: {err})"),
                    },
                }
            }
            Err(err) => failed(format!("could not commit the agent's changes: {err}")),
        }
    }
}
