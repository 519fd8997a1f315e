//! The change a conversation handed over, read back from the user's repository: its
//! branch against the commit it started from, or the commit wright made in place — as the
//! end of a run shows it (no textconv, no external diff, bounded); outside git, the
//! directory against the snapshot taken before the agent. What `wright diff` and
//! a server's diff route print; why there is none is typed, for the front end to word.

use crate::stored::Summary;
use crate::working_copy::status::Change;
use crate::working_copy::status::HandOver;
use crate::working_copy::status::Repos;
use crate::working_copy::Record;
use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use wright_sandbox::git::Oid;
use wright_sandbox::git::UserRepo;

/// What a conversation handed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handed {
    /// The unified diff (never empty).
    Diff(String),
    NoChanges,
    /// Why no diff can be shown.
    Missing(Missing),
}

/// Why a conversation has no diff to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// It worked in a directory that is not a git repository and kept no snapshot of it
    /// (`--no-snapshot`, or an older wright).
    NotGit(PathBuf),
    /// Its branch is not there (`change` says what became of it).
    NoBranch { branch: String, change: Change },
    /// It worked in place and left its changes uncommitted among the user's.
    LeftInTree(PathBuf),
    /// It worked in place and no commit of wright's is recorded (its run did not end).
    NoCommit,
}

/// The change the conversation in `dir` handed over.
pub fn handed_over(dir: &Path) -> Result<Handed> {
    let id = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let record = Record::read(dir)?;
    let (repo_root, base_commit) = match &record {
        Record::Direct {
            workspace,
            git_before,
        } => {
            // The snapshot taken before the agent, against the directory as it is now:
            // what the end of its run showed, and what `discard` compares.
            return match crate::working_copy::direct_changes(workspace, dir, git_before) {
                None => Ok(Handed::Missing(Missing::NotGit(workspace.clone()))),
                Some(Err(err)) => Err(err),
                Some(Ok(text)) if text.trim().is_empty() => Ok(Handed::NoChanges),
                Some(Ok(text)) => Ok(Handed::Diff(text)),
            };
        }
        Record::InPlace {
            repo_root,
            base_commit,
            ..
        }
        | Record::Clone {
            repo_root,
            base_commit,
            ..
        } => (repo_root, base_commit),
    };
    let repo = UserRepo::at(repo_root);
    let base = Oid::parse(base_commit).context("the record's base commit is damaged")?;
    let tip = match &record {
        Record::Clone { branch, .. } => match repo.branch_tip(branch) {
            Some(tip) => tip,
            None => {
                let summary = Summary::read(&id)?;
                let change = summary.change(&mut Repos::default());
                if change == Change::NoChanges {
                    return Ok(Handed::NoChanges);
                }
                return Ok(Handed::Missing(Missing::NoBranch {
                    branch: branch.clone(),
                    change,
                }));
            }
        },
        Record::InPlace { .. } | Record::Direct { .. } => match HandOver::read(dir) {
            Some(HandOver::Committed { commit }) => {
                Oid::parse(&commit).context("the recorded commit is damaged")?
            }
            Some(HandOver::NoChanges) => return Ok(Handed::NoChanges),
            Some(HandOver::LeftInTree) => {
                return Ok(Handed::Missing(Missing::LeftInTree(repo_root.clone())))
            }
            _ => return Ok(Handed::Missing(Missing::NoCommit)),
        },
    };
    let text = repo
        .diff(&base, &tip)
        .with_context(|| format!("cannot read the changes in {}", repo_root.display()))?;
    Ok(match text.trim().is_empty() {
        true => Handed::NoChanges,
        false => Handed::Diff(text),
    })
}

/// The files a unified diff of git's changes (each `diff --git a/X b/Y` header's new
/// path, as git wrote it).
pub fn changed_files(diff: &str) -> Vec<String> {
    diff.lines()
        .filter_map(|line| line.strip_prefix("diff --git "))
        .filter_map(|paths| paths.rsplit_once(" b/").map(|(_, new)| new.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_of_a_diff() {
        let diff = "diff --git a/x.py b/x.py\nindex 1..2\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/d/old b/d/new\n";
        assert_eq!(changed_files(diff), vec!["x.py", "d/new"]);
    }
}
