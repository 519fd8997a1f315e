//! The git store replicas share (`server.git_store`, see `docs/replicas.md`): the files
//! of each step of a conversation working in a clone — the commits `working_copy::steps`
//! keeps on its hidden ref for `wright fork --at` — pushed to a bare repository of the
//! conversation's own under a directory every replica reaches, so that a replica taking
//! over a conversation whose clone it does not have makes it again with the files of the
//! last step pushed.
//!
//! What it guarantees:
//! - Off the critical path: a step hands its commit to a thread of the conversation's own
//!   and goes on; only the last commit offered is pushed (each is on the chain after the
//!   ones before, so it carries them). A failed push is written to `git-store.log` in the
//!   conversation's directory (the takeover says what it cost), never fails the run; the
//!   end of the run waits for the push under way, at most `SETTLE`.
//! - No program of the agent's runs on the host: the objects leave the clone as a pack
//!   made in the sandbox (`AgentRepo::send_objects`), checked by `index-pack --strict`
//!   in the store, a repository wright made; files come back into a new clone through the
//!   sandbox too (`AgentRepo::files_from`). Nothing reads the clone's `.git` on the host.
//! - What was pushed is said by `pushed.json` beside the repository, written by wright
//!   once the ref is moved: the step (its events) whose files the ref holds. A takeover
//!   trusts it, and says which file-changing calls of the log came after it: their files
//!   were lost, and the model is told so.

use crate::repo_config::RepoConfigSource;
use crate::sandbox_setup::SandboxSetup;
use crate::working_copy::steps;
use crate::working_copy::steps::Kept;
use crate::working_copy::steps::Saved;
use crate::working_copy::Record;
use crate::SandboxChoice;
use anyhow::Context;
use serde::Deserialize;
use serde::Serialize;
use std::path::Path;
use std::path::PathBuf;
use wright_protocol::EventBody;
use wright_sandbox::git::AgentRepo;
use wright_sandbox::git::Oid;
use wright_sandbox::git::UserRepo;

mod push;

pub(crate) use push::Pusher;

/// The ref of the store's repository that holds the last step pushed.
const REF: &str = "refs/wright/steps";

/// The directory all replicas share, with one directory per conversation: `steps.git`
/// (bare) and `pushed.json`.
#[derive(Debug, Clone)]
pub struct GitStore {
    root: PathBuf,
}

/// The step whose files the store holds, as `pushed.json` says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pushed {
    pub first: u64,
    pub last: u64,
    pub commit: String,
}

impl GitStore {
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
        }
    }

    fn dir(&self, id: &str) -> PathBuf {
        self.root.join(id)
    }

    /// The bare repository of conversation `id`.
    pub fn repository(&self, id: &str) -> PathBuf {
        self.dir(id).join("steps.git")
    }

    /// The step of `id` whose files were pushed last, if any (and its commit is there).
    pub fn pushed(&self, id: &str) -> Option<Pushed> {
        let text = std::fs::read_to_string(self.dir(id).join("pushed.json")).ok()?;
        let pushed: Pushed = serde_json::from_str(&text).ok()?;
        let commit = Oid::parse(&pushed.commit)?;
        let repository = self.repository(id);
        (repository.join("HEAD").is_file() && UserRepo::at(&repository).has_commit(&commit))
            .then_some(pushed)
    }

    fn write_pushed(&self, id: &str, pushed: &Pushed) -> std::io::Result<()> {
        let dir = self.dir(id);
        let temporary = dir.join(format!("pushed.json.{}", std::process::id()));
        std::fs::write(
            &temporary,
            serde_json::to_vec(pushed).map_err(std::io::Error::other)?,
        )?;
        // A reader sees the old record or the new one, never half of one.
        std::fs::rename(&temporary, dir.join("pushed.json"))
    }
}

/// A file-changing call of the log whose files did not reach the store.
#[derive(Debug, Clone, PartialEq)]
pub struct LostCall {
    pub event: u64,
    pub tool: String,
}

/// What a takeover found of the conversation's files.
#[derive(Debug, Clone, PartialEq)]
pub enum Restored {
    /// Nothing to make: it works in place or directly, or its clone is here.
    Here,
    /// Its clone was made again, with the files of `from` (none pushed: the start
    /// commit's); the calls of `lost` changed files after it.
    Made {
        from: Option<Pushed>,
        lost: Vec<LostCall>,
    },
}

impl Restored {
    /// What the model is told, when files were lost.
    pub fn for_the_model(&self) -> Option<String> {
        let Restored::Made { from, lost } = self else {
            return None;
        };
        if lost.is_empty() {
            return None;
        }
        let whence = match from {
            Some(pushed) => format!("as they were after event {}", pushed.last),
            None => "as they were at the start (no step's files had been kept)".to_string(),
        };
        let calls: Vec<String> = lost
            .iter()
            .map(|call| format!("{} (event {})", call.tool, call.event))
            .collect();
        Some(format!(
            "note: this conversation was taken over by another server, which did not have its workspace. The files were restored {whence}; what these later calls did to the files was lost: {}. Look at the files again and redo what is missing before you go on.",
            calls.join(", ")
        ))
    }

    /// What the people watching are told.
    pub fn describe(&self) -> Option<String> {
        let Restored::Made { from, lost } = self else {
            return None;
        };
        let whence = match from {
            Some(pushed) => format!("the files after event {} from the git store", pushed.last),
            None => "the start commit's files (the git store held no step)".to_string(),
        };
        let lost = match lost.as_slice() {
            [] => String::new(),
            calls => format!(
                "; the files of the steps of events {} were lost (not pushed yet)",
                calls
                    .iter()
                    .map(|call| call.event.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        Some(format!(
            "the workspace was not on this replica: it was made again with {whence}{lost}"
        ))
    }
}

/// Makes the clone of the conversation in `conversation_dir` again when it is not there
/// (or is one this machine kept from before the store's last step: see `clone_step`),
/// with the files of the last step pushed to `store`; `sandbox_for` gives the sandbox
/// that fills it (for the repository's configuration at the start commit). A clone that
/// could not be made whole is removed.
pub fn restore(
    store: &GitStore,
    conversation_dir: &Path,
    sandbox_for: &dyn Fn(&RepoConfigSource) -> anyhow::Result<SandboxChoice>,
) -> anyhow::Result<Restored> {
    let Ok(Record::Clone {
        repo_root,
        clone_root,
        branch,
        base_commit,
        ..
    }) = Record::read(conversation_dir)
    else {
        return Ok(Restored::Here);
    };
    let id = conversation_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pushed = store.pushed(&id);
    if clone_root.symlink_metadata().is_ok() {
        // Kept from an earlier run here: older than the store's last step, it is made
        // again; else (or not known) it is taken as it is.
        let stale = matches!(
            (crate::clone_step::held(&clone_root), &pushed),
            (Some(held), Some(pushed)) if held < pushed.last
        );
        if !stale {
            return Ok(Restored::Here);
        }
        crate::clone_step::remove(&clone_root)
            .with_context(|| format!("cannot remove the old clone {}", clone_root.display()))?;
    }
    let base = Oid::parse(&base_commit).context("the record's base commit is damaged")?;
    let events = wright_protocol::read_log(&conversation_dir.join("events.jsonl"))?.events;
    let repo = UserRepo::at(&repo_root);
    if let Some(parent) = clone_root.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let made = fill(
        store,
        &id,
        &repo,
        &clone_root,
        &branch,
        &base,
        pushed.as_ref(),
        sandbox_for,
    );
    if let Err(err) = made {
        let _ = std::fs::remove_dir_all(&clone_root);
        return Err(err);
    }
    // The chain goes on from the files restored (a change between steps, at the last
    // event): the steps after the one pushed are not in this clone.
    let last = events.last().map_or(0, |e| e.id);
    let commit = pushed
        .as_ref()
        .map_or_else(|| base.to_string(), |p| p.commit.clone());
    steps::append(
        conversation_dir,
        &[Kept {
            first: last,
            last,
            saved: Saved::Commit(commit),
        }],
    )?;
    crate::clone_step::mark(&clone_root, last);
    let lost = lost_calls(&events, pushed.as_ref().map(|p| p.last));
    Ok(Restored::Made { from: pushed, lost })
}

/// The calls of `events` that may have changed files after event `after` (every one, when
/// no step was pushed).
fn lost_calls(events: &[wright_protocol::Event], after: Option<u64>) -> Vec<LostCall> {
    events
        .iter()
        .filter(|e| after.is_none_or(|after| e.id > after))
        .filter_map(|e| match &e.body {
            EventBody::Action {
                tool, arguments, ..
            } if wright_tools::may_change_files(tool, arguments) => Some(LostCall {
                event: e.id,
                tool: tool.clone(),
            }),
            _ => None,
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn fill(
    store: &GitStore,
    id: &str,
    repo: &UserRepo,
    clone_root: &Path,
    branch: &str,
    base: &Oid,
    pushed: Option<&Pushed>,
    sandbox_for: &dyn Fn(&RepoConfigSource) -> anyhow::Result<SandboxChoice>,
) -> anyhow::Result<()> {
    repo.clone_shared(clone_root)?;
    let choice = sandbox_for(&RepoConfigSource::Commit {
        repo: repo.clone(),
        commit: base.clone(),
    })?;
    let repository = store.repository(id);
    let setup = SandboxSetup::for_git(
        &choice,
        clone_root.to_path_buf(),
        vec![repo.top().join(".git").join("objects"), repository.clone()],
        &format!("{id}-restore"),
    )?;
    let git = AgentRepo::new(&setup.sandbox, &setup.env, clone_root);
    match pushed.and_then(|p| Oid::parse(&p.commit)) {
        None => git.check_out_new_branch(branch, base)?,
        Some(commit) => {
            git.start_branch_keeping_files(branch, base)?;
            git.files_from(&repository, &commit, base, steps::REF)
                .context("cannot bring the files back from the git store")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wright_protocol::Event;
    use wright_protocol::Source;

    fn action(id: u64, tool: &str, arguments: serde_json::Value) -> Event {
        Event {
            id,
            ts: String::new(),
            source: Source::Agent,
            body: EventBody::Action {
                step: 1,
                call_id: format!("c{id}"),
                tool: tool.into(),
                arguments,
                risk: None,
                risk_reason: None,
            },
        }
    }

    #[test]
    fn the_calls_lost_are_those_that_may_have_changed_files_after_the_step_pushed() {
        let events = vec![
            action(3, "file_editor", json!({"command": "create", "path": "a"})),
            action(6, "file_editor", json!({"command": "view", "path": "a"})),
            action(8, "terminal", json!({"command": "echo b > a"})),
            action(11, "think", json!({"thought": "hm"})),
            action(
                13,
                "file_editor",
                json!({"command": "str_replace", "path": "a"}),
            ),
        ];
        let lost = |after| {
            lost_calls(&events, after)
                .into_iter()
                .map(|call| call.event)
                .collect::<Vec<_>>()
        };
        assert_eq!(lost(Some(4)), vec![8, 13]);
        assert_eq!(lost(Some(13)), Vec::<u64>::new());
        assert_eq!(lost(None), vec![3, 8, 13]);
    }

    #[test]
    fn the_model_is_told_only_of_files_lost_and_each_call_is_named() {
        let pushed = Pushed {
            first: 3,
            last: 4,
            commit: "a".repeat(40),
        };
        let nothing_lost = Restored::Made {
            from: Some(pushed.clone()),
            lost: Vec::new(),
        };
        assert_eq!(nothing_lost.for_the_model(), None);
        assert!(nothing_lost.describe().unwrap().contains("after event 4"));
        assert_eq!(Restored::Here.describe(), None);
        let lost = Restored::Made {
            from: Some(pushed),
            lost: vec![
                LostCall {
                    event: 8,
                    tool: "terminal".into(),
                },
                LostCall {
                    event: 13,
                    tool: "file_editor".into(),
                },
            ],
        };
        let told = lost.for_the_model().unwrap();
        assert!(told.contains("after event 4"), "{told}");
        assert!(
            told.contains("terminal (event 8), file_editor (event 13)"),
            "{told}"
        );
        assert!(lost.describe().unwrap().contains("events 8, 13"));
        let from_start = Restored::Made {
            from: None,
            lost: vec![LostCall {
                event: 3,
                tool: "file_editor".into(),
            }],
        };
        assert!(from_start.for_the_model().unwrap().contains("at the start"));
    }

    #[test]
    fn a_record_of_a_push_whose_commit_is_not_in_the_store_is_not_trusted() {
        let root = tempfile::tempdir().unwrap();
        let store = GitStore::new(root.path());
        assert_eq!(store.pushed("c1"), None);
        std::fs::create_dir_all(root.path().join("c1")).unwrap();
        let pushed = Pushed {
            first: 1,
            last: 2,
            commit: "b".repeat(40),
        };
        store.write_pushed("c1", &pushed).unwrap();
        // No repository, or one without that commit: as if nothing was pushed.
        assert_eq!(store.pushed("c1"), None);
        let like = UserRepo::at(root.path());
        UserRepo::bare_store(&store.repository("c1"), &like).unwrap();
        assert_eq!(store.pushed("c1"), None);
    }
}
