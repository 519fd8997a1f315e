//! The files of each step that may have changed them, kept in the agent's clone for
//! `wright fork --at`: one commit per such step on a chain of wright's own (the first on
//! the start commit), made in the sandbox with a private index — the agent's index and
//! branch never move — and kept by the hidden ref `refs/wright/steps`, which stays in the
//! clone: the branch handed to the user grows from the start commit and holds none of it.
//!
//! Which events each commit belongs to is written in `steps.jsonl`, in the conversation's
//! directory, which the agent cannot reach: a fork trusts that list, never the clone's
//! ref (the agent can move it, and only its own files would come of it anyway).
//!
//! A step that changed nothing costs no git: at its end the tree's stat data is looked at
//! (`wright_tools::TreeStamp`, no file opened), and when nothing changed since the last
//! look, the step is kept as the last commit. A step that wrote files has them copied at
//! once (`stage`: the files the stat data says changed, and the ignore and attribute
//! rules above them) and committed from the copy by a thread of its own, while the next
//! step runs; the commits queue behind one another, the end of the run waits for them
//! (`settle`), and a step whose commit was never made (the process killed) is missing
//! from `steps.jsonl`, so a fork says it does not know its files. When the change is not
//! one of files alone (a link, a nested repository, a `.gitignore` or `.gitattributes`,
//! the repository's configuration and rules under `.git`), is too big to copy, or there
//! was no look before (the first step of a process), the step is committed from the
//! whole tree, waited for. (The clone's `.git/config` and `.git/info` are read when the
//! copy is committed: a change to them in the very next step may already count.) Either way the look comes before
//! anything reads the tree, so the commit holds at least what the look saw: a change
//! made meanwhile (by a process left running) shows at the next look.

use super::stage;
use super::AgentClone;
use super::WorkingCopy;
use crate::sandbox_setup::SandboxSetup;
use serde::Deserialize;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_sandbox::git::AgentRepo;
use wright_sandbox::git::Oid;
use wright_sandbox::git::StepCommit;
use wright_sandbox::Sandbox;
use wright_tools::TreeStamp;

/// What a look at the tree leaves out: the clone's git directory, whose own files are not
/// the step's, but for those that decide what git keeps of the tree.
const NOT_THE_TREE: &[&str] = &[".git"];
const GIT_RULES: &[&str] = &[".git/config", ".git/info/exclude", ".git/info/attributes"];

/// The hidden ref that keeps the chain in the clone (and, in a fork's clone, the part of
/// it the fork started from).
pub const REF: &str = "refs/wright/steps";

const FILE: &str = "steps.jsonl";

/// One step's files, as `steps.jsonl` has them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    /// The first and last event of the step's calls that may have changed files: the
    /// files are kept as they were after `last`.
    pub first: u64,
    pub last: u64,
    #[serde(flatten)]
    pub saved: Saved,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Saved {
    /// The commit of the files.
    Commit(String),
    /// Why they could not be kept.
    Failed(String),
}

/// What `steps.jsonl` in `conversation_dir` lists (nothing when there is none: a
/// conversation from before wright kept them, or one not in a clone). A line that does
/// not read (torn by a kill) is skipped.
pub fn read(conversation_dir: &Path) -> Vec<Kept> {
    std::fs::read_to_string(conversation_dir.join(FILE))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Appends `kept` to `steps.jsonl` in `conversation_dir`.
pub fn append(conversation_dir: &Path, kept: &[Kept]) -> std::io::Result<()> {
    let mut text = String::new();
    for one in kept {
        text.push_str(&serde_json::to_string(one).map_err(std::io::Error::other)?);
        text.push('\n');
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(conversation_dir.join(FILE))?
        .write_all(text.as_bytes())
}

/// Takes the snapshots of a conversation working in a clone.
pub struct StepFiles {
    shared: Arc<Shared>,
    /// The clone's top, to look at its stat data (none when it could not be opened: then
    /// every step is committed from the whole tree).
    root: Option<cap_std::fs::Dir>,
    /// The commit of the last copied step, still being made: the next waits for it.
    pending: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Copies made so far, to name the next.
    copies: AtomicU64,
}

/// What the commits are made with, shared with the thread that makes them.
struct Shared {
    sandbox: Sandbox,
    env: Vec<(String, String)>,
    clone_root: PathBuf,
    conversation_dir: PathBuf,
    chain: Mutex<Chain>,
    /// Where each step's files go besides (`server.git_store`), if anywhere.
    pusher: Option<crate::git_store::Pusher>,
}

/// Where the chain is.
struct Chain {
    /// The last commit of the chain (the start commit before the first).
    previous: StepCommit,
    /// The look at the tree the chain's files were last taken from: just before `previous`
    /// was made from the whole tree, or when the last step's files were copied (none
    /// before the first commit of this process, or after one failed: the next step is
    /// committed from the whole tree).
    looked: Option<TreeStamp>,
    /// A commit made from a copy failed: those queued after it cannot build on it.
    broken: bool,
}

/// How a step's files are kept.
enum Plan {
    /// Nothing changed: as the last commit.
    Same,
    /// Its written files are copied: committed from the copy while the next step runs.
    Copied(stage::Staged),
    /// Committed from the whole tree, now.
    Whole,
}

/// The keeper of a conversation's step files: only a clone has them (in place, the
/// repository is the user's and its `.git` read-only to the agent; a plain directory has
/// no git).
pub fn keeper(
    working_copy: &WorkingCopy,
    setup: &SandboxSetup,
    conversation_dir: &Path,
) -> Option<Arc<dyn wright_core::StepSnapshot>> {
    match working_copy {
        WorkingCopy::Clone(clone) => Some(Arc::new(StepFiles::new(
            clone,
            setup,
            conversation_dir,
            None,
        ))),
        WorkingCopy::InPlace(_) | WorkingCopy::Direct { .. } => None,
    }
}

impl StepFiles {
    /// The keeper of a clone's step files that also pushes them to the git store.
    pub(crate) fn pushing(
        clone: &AgentClone,
        setup: &SandboxSetup,
        conversation_dir: &Path,
        pusher: crate::git_store::Pusher,
    ) -> Self {
        Self::new(clone, setup, conversation_dir, Some(pusher))
    }

    fn new(
        clone: &AgentClone,
        setup: &SandboxSetup,
        conversation_dir: &Path,
        pusher: Option<crate::git_store::Pusher>,
    ) -> Self {
        let previous = read(conversation_dir)
            .iter()
            .rev()
            .find_map(|kept| match &kept.saved {
                Saved::Commit(commit) => Oid::parse(commit),
                Saved::Failed(_) => None,
            })
            .unwrap_or_else(|| clone.base.clone());
        Self {
            shared: Arc::new(Shared {
                sandbox: setup.sandbox.clone(),
                env: setup.env.clone(),
                clone_root: clone.clone_root.clone(),
                conversation_dir: conversation_dir.to_path_buf(),
                chain: Mutex::new(Chain {
                    previous: StepCommit {
                        commit: previous,
                        tree: None,
                    },
                    looked: None,
                    broken: false,
                }),
                pusher,
            }),
            root: cap_std::fs::Dir::open_ambient_dir(
                &clone.clone_root,
                cap_std::ambient_authority(),
            )
            .ok(),
            pending: Mutex::new(None),
            copies: AtomicU64::new(0),
        }
    }

    /// How to keep the files seen by `looked`, against the chain's last look.
    fn plan(&self, looked: &Option<TreeStamp>) -> Plan {
        let (Some(root), Some(now)) = (&self.root, looked) else {
            return Plan::Whole;
        };
        let Ok(mut chain) = self.shared.chain.lock() else {
            return Plan::Whole;
        };
        let Some(then) = &chain.looked else {
            return Plan::Whole;
        };
        if now.unchanged_since(then) {
            return Plan::Same;
        }
        let Some(delta) = now.delta_since(then) else {
            return Plan::Whole;
        };
        // Directories alone (git keeps no directory): the same files.
        if delta.files.is_empty() && delta.removed.is_empty() {
            return Plan::Same;
        }
        let name = format!(
            "{}-{}",
            std::process::id(),
            self.copies.fetch_add(1, Ordering::Relaxed)
        );
        match stage::copy(root, now, delta, &name) {
            Some(staged) => {
                // The next step's changes are those since this copy.
                chain.looked = Some(now.clone());
                Plan::Copied(staged)
            }
            None => Plan::Whole,
        }
    }
}

impl Shared {
    fn record(&self, first: u64, last: u64, saved: Saved) {
        // Not written, a fork says it does not know the files here: never wrong ones.
        let kept = Kept { first, last, saved };
        let _ = append(&self.conversation_dir, std::slice::from_ref(&kept));
        if let Some(pusher) = &self.pusher {
            pusher.offer(&kept);
        }
    }

    /// Commits the copied files of the step (events `first` to `last`) on the chain.
    fn commit_copy(&self, staged: &stage::Staged, first: u64, last: u64) {
        // Not held while git runs: the next step's look takes the lock on the critical
        // path. Only this queue's jobs, one at a time, move `previous`.
        let previous = match self.chain.lock() {
            Ok(chain) if !chain.broken => chain.previous.clone(),
            Ok(_) => {
                let why = "the files of the step before could not be kept";
                return self.record(first, last, Saved::Failed(why.into()));
            }
            Err(_) => return,
        };
        let git = AgentRepo::new(&self.sandbox, &self.env, &self.clone_root);
        let message = format!("wright: the files after event {last}");
        let made = git.snapshot_staged(
            &previous,
            &staged.dir,
            &staged.written,
            &staged.removed,
            &message,
            REF,
        );
        let Ok(mut chain) = self.chain.lock() else {
            return;
        };
        let saved = match made {
            Ok(made) => {
                let saved = Saved::Commit(made.commit.to_string());
                chain.previous = made;
                saved
            }
            Err(err) => {
                chain.broken = true;
                chain.looked = None;
                Saved::Failed(err.to_string())
            }
        };
        drop(chain);
        self.record(first, last, saved);
    }

    /// Commits the whole tree as the step's files (nothing is being committed meanwhile).
    fn commit_whole(&self, looked: Option<TreeStamp>, first: u64, last: u64) {
        let Ok(mut chain) = self.chain.lock() else {
            return;
        };
        let git = AgentRepo::new(&self.sandbox, &self.env, &self.clone_root);
        let message = format!("wright: the files after event {last}");
        let saved = match git.snapshot_step(&chain.previous, &message, REF) {
            Ok(made) => {
                let saved = Saved::Commit(made.commit.to_string());
                chain.previous = made;
                chain.looked = looked;
                chain.broken = false;
                saved
            }
            Err(err) => {
                chain.looked = None;
                Saved::Failed(err.to_string())
            }
        };
        self.record(first, last, saved);
    }

    /// Records the step as the chain's last commit (or its failure).
    fn same(&self, first: u64, last: u64) {
        let Ok(chain) = self.chain.lock() else {
            return;
        };
        let saved = if chain.broken {
            Saved::Failed("the files of the step before could not be kept".into())
        } else {
            Saved::Commit(chain.previous.commit.to_string())
        };
        self.record(first, last, saved);
    }
}

impl wright_core::StepSnapshot for StepFiles {
    fn take(&self, first: u64, last: u64) {
        // One step at a time decides; the commits queue behind one another.
        let Ok(mut pending) = self.pending.lock() else {
            return;
        };
        // Before anything reads the tree: whatever is kept, this look saw no more of it.
        let looked = self
            .root
            .as_ref()
            .and_then(|root| TreeStamp::take(root, NOT_THE_TREE, GIT_RULES).ok());
        let before = pending.take();
        let shared = self.shared.clone();
        let job: Box<dyn FnOnce() + Send> = match self.plan(&looked) {
            Plan::Same if before.is_none() => {
                shared.same(first, last);
                return;
            }
            Plan::Same => Box::new(move || shared.same(first, last)),
            Plan::Copied(staged) => Box::new(move || shared.commit_copy(&staged, first, last)),
            Plan::Whole => {
                if let Some(before) = before {
                    let _ = before.join();
                }
                shared.commit_whole(looked, first, last);
                return;
            }
        };
        let spawned = std::thread::Builder::new()
            .name("wright-step-files".into())
            .stack_size(256 << 10)
            .spawn(move || {
                if let Some(before) = before {
                    let _ = before.join();
                }
                job();
            });
        // No thread: the step is not recorded, and a fork says it does not know its files.
        *pending = spawned.ok();
    }

    fn settle(&self) {
        let before = self
            .pending
            .lock()
            .ok()
            .and_then(|mut pending| pending.take());
        if let Some(before) = before {
            let _ = before.join();
        }
        if let Some(pusher) = &self.shared.pusher {
            pusher.settle();
        }
    }
}

/// What a fork at an event gets for its files.
#[derive(Debug, Clone, PartialEq)]
pub enum FilesAt {
    /// No file had changed by then: the start commit.
    Start,
    /// The step's files kept after event `after` (the last change before the fork point).
    Kept { commit: Oid, after: u64 },
    /// The fork point is inside a step that changed files (events `first` to `last`).
    InsideStep { first: u64, last: u64 },
    /// Not known: the files as they are now.
    Unknown(Unknown),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Unknown {
    /// Not asked for: the files as they are now.
    AsNow,
    /// The step that changed them last ran before wright kept step files (or its
    /// snapshot was never written: the run was killed first).
    NotKept { event: u64 },
    /// Its snapshot failed.
    Failed { event: u64, why: String },
}

/// The files at event `at`, from the log's events and what `steps.jsonl` lists. An action
/// is logged before its tool runs, so at an action the files are those before it ran.
pub fn files_at(events: &[Event], kept: &[Kept], at: u64) -> FilesAt {
    let changes = events
        .iter()
        .filter(|e| match &e.body {
            EventBody::Action {
                tool, arguments, ..
            } => wright_tools::may_change_files(tool, arguments),
            _ => false,
        })
        .map(|e| e.id)
        // A change between steps (chat's /undo) is a step of its own.
        .chain(kept.iter().map(|k| k.first));
    let Some(last_change) = changes.filter(|id| *id < at).max() else {
        return FilesAt::Start;
    };
    if let Some(step) = kept.iter().find(|k| k.first < at && at < k.last) {
        return FilesAt::InsideStep {
            first: step.first,
            last: step.last,
        };
    }
    let step = kept
        .iter()
        .rev()
        .find(|k| k.first <= last_change && last_change <= k.last && k.last <= at);
    match step.map(|k| &k.saved) {
        Some(Saved::Commit(commit)) => match Oid::parse(commit) {
            Some(commit) => FilesAt::Kept {
                commit,
                after: step.map_or(last_change, |k| k.last),
            },
            None => FilesAt::Unknown(Unknown::Failed {
                event: last_change,
                why: "its record is damaged".into(),
            }),
        },
        Some(Saved::Failed(why)) => FilesAt::Unknown(Unknown::Failed {
            event: last_change,
            why: why.clone(),
        }),
        None => FilesAt::Unknown(Unknown::NotKept { event: last_change }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
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

    fn kept(first: u64, last: u64, commit: &str) -> Kept {
        Kept {
            first,
            last,
            saved: Saved::Commit(commit.repeat(40)),
        }
    }

    #[test]
    fn the_files_are_those_of_the_last_change_before_the_fork_point() {
        let events = vec![
            action(3, "file_editor", json!({"command": "view", "path": "a"})),
            action(6, "file_editor", json!({"command": "create", "path": "a"})),
            action(9, "think", json!({"thought": "hm"})),
            action(12, "terminal", json!({"command": "echo v2 > a"})),
        ];
        let steps = vec![kept(6, 7, "a"), kept(12, 13, "b")];
        let at = |event| files_at(&events, &steps, event);
        assert_eq!(at(5), FilesAt::Start);
        // At the action, the tool had not run yet.
        assert_eq!(at(6), FilesAt::Start);
        let first = FilesAt::Kept {
            commit: Oid::parse(&"a".repeat(40)).unwrap(),
            after: 7,
        };
        assert_eq!(at(7), first);
        assert_eq!(at(12), first);
        assert_eq!(
            at(13),
            FilesAt::Kept {
                commit: Oid::parse(&"b".repeat(40)).unwrap(),
                after: 13
            }
        );
        assert_eq!(at(20), at(13));
    }

    #[test]
    fn what_is_not_known_is_said() {
        let events = vec![
            action(2, "terminal", json!({"command": "make"})),
            action(5, "terminal", json!({"command": "make"})),
            action(8, "file_editor", json!({"command": "create"})),
        ];
        let mut steps = vec![
            Kept {
                first: 5,
                last: 6,
                saved: Saved::Failed("disk full".into()),
            },
            Kept {
                first: 8,
                last: 11,
                saved: Saved::Commit("c".repeat(40)),
            },
        ];
        assert_eq!(
            files_at(&events, &steps, 4),
            FilesAt::Unknown(Unknown::NotKept { event: 2 })
        );
        assert_eq!(
            files_at(&events, &steps, 7),
            FilesAt::Unknown(Unknown::Failed {
                event: 5,
                why: "disk full".into()
            })
        );
        assert_eq!(
            files_at(&events, &steps, 10),
            FilesAt::InsideStep { first: 8, last: 11 }
        );
        // A change between steps (chat's /undo), kept on its own.
        steps.push(kept(14, 14, "d"));
        assert_eq!(
            files_at(&events, &steps, 15),
            FilesAt::Kept {
                commit: Oid::parse(&"d".repeat(40)).unwrap(),
                after: 14
            }
        );
    }

    #[test]
    fn the_list_reads_back_and_skips_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let steps = vec![
            kept(1, 2, "e"),
            Kept {
                first: 3,
                last: 4,
                saved: Saved::Failed("no".into()),
            },
        ];
        append(dir.path(), &steps).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(FILE))
            .unwrap()
            .write_all(b"{\"first\": 5, \"la")
            .unwrap();
        assert_eq!(read(dir.path()), steps);
        assert_eq!(read(&dir.path().join("none")), Vec::new());
    }
}
