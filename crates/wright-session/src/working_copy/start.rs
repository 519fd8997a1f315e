//! Where a new conversation starts: the repositories earlier runs' agents made there set
//! aside first (a crash or a kill may have left them), the directory, the user's
//! repository and its commit found, and the user's uncommitted work given to the agent
//! as a snapshot commit or left out, as the user chose.

use super::git_entries;
use super::Record;
use crate::front::Front;
use crate::repo_config::RepoConfigSource;
use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use wright_sandbox::git::Oid;
use wright_sandbox::git::UserRepo;

/// What to do with the user's uncommitted work when the agent gets a clone of HEAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UncommittedChoice {
    /// Give the agent a snapshot of it (`--include-uncommitted`).
    Include,
    /// Leave it out, saying so.
    Leave,
    /// Ask (a person is there to answer).
    Ask,
}

/// The user's uncommitted work at the start of a conversation in a clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uncommitted {
    /// None, or not known (a resumed conversation).
    Nothing,
    /// This many paths the agent does not see.
    Left(usize),
    /// In the clone, as a snapshot commit on the agent's branch.
    Included(wright_sandbox::git::Snapshot),
}

impl Uncommitted {
    /// The header's line about it, if any.
    pub fn describe(&self) -> Option<String> {
        match self {
            Uncommitted::Nothing => None,
            Uncommitted::Left(n) => Some(format!(
                "your checkout has {} the agent does not see: it works on your last commit (--include-uncommitted gives them to it)",
                wright_protocol::count(*n as u64, "uncommitted change")
            )),
            Uncommitted::Included(snapshot) => {
                let mut line = format!(
                    "your {} are in the agent's clone (commit {} on its branch only; your checkout is not touched)",
                    wright_protocol::count(snapshot.taken as u64, "uncommitted change"),
                    &snapshot.commit.as_str()[..12]
                );
                if !snapshot.left_out.is_empty() {
                    line.push_str(&format!("; left out: {}", snapshot.left_out.join(", ")));
                }
                Some(line)
            }
        }
    }
}

/// The most file content a snapshot of uncommitted work may hold.
const MAX_SNAPSHOT_BYTES: u64 = 256 << 20;

/// The marker a conversation working directly leaves once its end set aside the
/// repositories its agent made.
const SETTLED: &str = "settled";

/// Marks the conversation in `record_dir` as settled.
pub(crate) fn mark_settled(record_dir: &Path) {
    let _ = std::fs::write(record_dir.join(SETTLED), "");
}

/// Finishes what earlier conversations in `workspace` did not (a crash, a kill, a second
/// Ctrl-C): the repositories their agents made are set aside before anyone trusts them.
pub(super) fn settle_earlier_runs(workspace: &Path, current: &Path, front: &dyn Front) {
    let Ok(entries) = std::fs::read_dir(wright_core::conversations_dir()) else {
        return;
    };
    for dir in entries.flatten().map(|e| e.path()) {
        if dir == current || dir.join(SETTLED).exists() {
            continue;
        }
        let Ok(record) = Record::read(&dir) else {
            continue;
        };
        let earlier = record.workspace();
        // The same directory, or one holding it or held in it.
        let overlaps = workspace.starts_with(earlier) || earlier.starts_with(workspace);
        let Some(before) = record.git_before().filter(|_| overlaps) else {
            continue;
        };
        let done = git_entries::quarantine_new(earlier, before);
        for (repo, moved) in &done.moved {
            front.notice(wright_protocol::Notice::AgentRepoSetAside {
                repo: repo.clone(),
                moved_to: moved.clone(),
            });
        }
        if done.failed.is_empty() {
            mark_settled(&dir);
        }
    }
}

/// Where a new conversation starts: the directory, the user's repository it is in (if
/// any) and that repository's current commit. Finding it first settles earlier runs
/// there, so no repository an agent made is taken for the user's.
#[derive(Debug, Clone)]
pub struct StartPoint {
    pub workspace: PathBuf,
    pub repo: Option<UserRepo>,
    pub head: Option<Oid>,
}

impl StartPoint {
    pub fn find(workspace: &Path, front: &dyn Front) -> Self {
        settle_earlier_runs(workspace, Path::new(""), front);
        let (repo, head) = match UserRepo::discover_with_head(workspace) {
            Some((repo, head)) => (Some(repo), head),
            None => (None, None),
        };
        Self {
            workspace: workspace.to_path_buf(),
            repo,
            head,
        }
    }

    /// Where the repository's own configuration is read: at the start commit, whose
    /// files read before the first request are listed here in one go (`prelist`).
    pub fn config_source(&self) -> RepoConfigSource {
        match (&self.repo, &self.head) {
            (Some(repo), Some(head)) => {
                let source = RepoConfigSource::Commit {
                    repo: repo.clone(),
                    commit: head.clone(),
                };
                let sub = self
                    .workspace
                    .strip_prefix(repo.top())
                    .unwrap_or(Path::new(""));
                source.prelist(&sub.to_string_lossy());
                source
            }
            (Some(repo), None) => RepoConfigSource::Nothing {
                top: repo.top().to_path_buf(),
            },
            (None, _) => RepoConfigSource::Directory(self.workspace.clone()),
        }
    }
}

/// The commit the agent's clone starts from: HEAD, or a snapshot of the user's
/// uncommitted work on top of it when they want the agent to have it.
pub(super) fn take_uncommitted(
    repo: &UserRepo,
    head: Oid,
    choice: UncommittedChoice,
    front: &dyn Front,
) -> Result<(Oid, Uncommitted)> {
    let paths = repo
        .uncommitted_paths()
        .context("cannot list your uncommitted changes")?;
    if paths.is_empty() {
        return Ok((head, Uncommitted::Nothing));
    }
    let include = match choice {
        UncommittedChoice::Include => true,
        UncommittedChoice::Leave => false,
        UncommittedChoice::Ask => front.confirm(&wright_protocol::Question::GiveUncommitted {
            repo: repo.top().to_path_buf(),
            changes: paths.len() as u64,
        }),
    };
    if !include {
        return Ok((head, Uncommitted::Left(paths.len())));
    }
    let snapshot = repo
        .snapshot_uncommitted(
            &head,
            &paths,
            MAX_SNAPSHOT_BYTES,
            "wright: your uncommitted changes at the start",
        )
        .context("cannot give the agent your uncommitted changes: commit them yourself, or start without --include-uncommitted")?;
    Ok((snapshot.commit.clone(), Uncommitted::Included(snapshot)))
}
