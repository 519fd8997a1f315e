//! The conversations on disk, as their logs and records tell them: every id, and one
//! conversation's summary (state, task, steps, where it worked). What `wright ls`, `wright
//! rm` and a server's listing read; each log is read once, nothing is written.

use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;
use std::time::SystemTime;
use wright_core::conversations_dir;
use wright_protocol::read_log;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_protocol::Source;

use crate::working_copy::status::Change;
use crate::working_copy::status::Repos;
use crate::working_copy::Record;

/// Where a conversation's log says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// The last state its log records (`running` only while a process holds its lock).
    Logged(AgentState),
    /// The log says running, and no process holds its lock: it died without a word.
    Interrupted,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Logged(state) => state.as_str(),
            RunState::Interrupted => "interrupted",
        }
    }

    /// Whether its last run came to an end (and handed its changes over).
    pub fn ended(self) -> bool {
        match self {
            RunState::Logged(state) => state != AgentState::Running,
            RunState::Interrupted => false,
        }
    }
}

/// One conversation, as its log and record tell it.
pub struct Summary {
    pub id: String,
    pub dir: PathBuf,
    pub state: RunState,
    /// The first line of the first message of the user's.
    pub task: String,
    pub steps: u32,
    /// The model it is on now: its start's, or the last switch's (to a fallback
    /// profile, or to a model named when it went on).
    pub model: String,
    pub torn: bool,
    /// When its log was last written.
    pub last_active: Option<SystemTime>,
    pub record: Option<Record>,
    /// The action waiting for the user's answer, when it waits for one.
    pub pending: Option<wright_core::confirm::Pending>,
    /// The group it was started in with others on one task (`wright run --parallel`, or
    /// a reviewer's `review-of-ID`).
    pub group: Option<String>,
    /// Nothing was done in it: a chat left before its first message, a fork never gone
    /// on with. Its clone holds nothing of its own.
    pub untouched: bool,
}

impl Summary {
    pub fn read(id: &str) -> Result<Self> {
        let dir = conversations_dir().join(id);
        let log = dir.join("events.jsonl");
        let parsed = read_log(&log)?;
        let mut state = AgentState::Running;
        let mut task = String::new();
        let mut steps = 0;
        let mut model = String::new();
        let mut group = None;
        let mut forked_at = None;
        let mut asked = false;
        for event in &parsed.events {
            match &event.body {
                EventBody::State { state: s, .. } => state = *s,
                EventBody::Start(start) => {
                    model = start.model.clone();
                    group = start.group.clone();
                    forked_at = start.forked_from.as_deref().map(fork_point);
                }
                EventBody::ModelSwitch(switch) => model = switch.to.model.clone(),
                EventBody::Message { .. } if event.source == Source::User => {
                    asked = true;
                    if task.is_empty() {
                        if let EventBody::Message { text, .. } = &event.body {
                            task = text.lines().next().unwrap_or("").to_string();
                        }
                    }
                }
                EventBody::Usage(_) => steps += 1,
                _ => {}
            }
        }
        let last_id = parsed.events.last().map_or(0, |e| e.id);
        let untouched = match forked_at {
            // A fork: nothing after the events it was given. An unreadable fork point
            // counts as gone on with.
            Some(at) => at.is_some_and(|at| last_id <= at),
            None => !asked && steps == 0,
        };
        // A log that says "running" is only true while a process holds its lock.
        let state = if state == AgentState::Running && wright_core::lock_holder(&dir).is_none() {
            RunState::Interrupted
        } else {
            RunState::Logged(state)
        };
        // Killed or stopped while it waited, it still waits.
        let pending = match state {
            RunState::Logged(AgentState::AwaitingConfirmation | AgentState::Stopped)
            | RunState::Interrupted => wright_core::confirm::pending_in(&parsed.events),
            RunState::Logged(_) => None,
        };
        // Stopped while it waited (a server stopping, an interrupt), it waits still: its
        // state says so, beside the action it waits for.
        let state = match (state, &pending) {
            (RunState::Logged(AgentState::Stopped), Some(_)) => {
                RunState::Logged(AgentState::AwaitingConfirmation)
            }
            (state, _) => state,
        };
        Ok(Self {
            pending,
            id: id.to_string(),
            last_active: std::fs::metadata(&log).and_then(|m| m.modified()).ok(),
            record: Record::read(&dir).ok(),
            dir,
            state,
            task,
            steps,
            model,
            torn: parsed.torn.is_some(),
            group,
            untouched,
        })
    }

    /// The repository (or directory) it worked on.
    pub fn repository(&self) -> Option<&Path> {
        self.record.as_ref().map(worked_on)
    }

    pub fn change(&self, repos: &mut Repos) -> Change {
        // Nothing of its own to keep. (`rm` and `gc` hold its lock: nothing can start in
        // it while they look.)
        if self.untouched {
            return Change::NoChanges;
        }
        repos.change_of(&self.dir, self.record.as_ref(), self.state.ended())
    }

    /// How long ago its log was last written.
    pub fn age(&self) -> Option<Duration> {
        self.last_active
            .and_then(|at| SystemTime::now().duration_since(at).ok())
    }
}

/// The event a fork was cut at, from its start's `forked_from` ("ID@EVENT").
fn fork_point(forked_from: &str) -> Option<u64> {
    forked_from.rsplit_once('@')?.1.parse().ok()
}

/// The repository a conversation worked on, or its directory when it is not one.
pub fn worked_on(record: &Record) -> &Path {
    match record {
        Record::Direct { workspace, .. } => workspace,
        Record::InPlace { repo_root, .. } | Record::Clone { repo_root, .. } => repo_root,
    }
}

/// Every conversation's id, newest first.
pub fn conversation_ids() -> Result<Vec<String>> {
    let dir = conversations_dir();
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut ids: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .flatten()
        .filter(|e| e.path().join("events.jsonl").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    ids.sort();
    ids.reverse();
    Ok(ids)
}

/// Whether `id` can name a conversation's directory: letters, digits and dashes only (no
/// separator, no `..`), as every id wright makes is.
pub fn is_plain_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Where the conversations' directories are (each its log, its records, its lock): for
/// the front ends, which find a conversation by its id.
pub fn conversations_root() -> PathBuf {
    conversations_dir()
}

/// The home the external agent of conversation `id` keeps across its runs (whether or
/// not it exists): see `wright_core::agent_homes_dir`.
pub fn agent_home_dir(id: &str) -> PathBuf {
    wright_core::agent_homes_dir().join(id)
}

/// The directory of conversation `id` (whether or not it exists).
pub fn conversation_dir(id: &str) -> PathBuf {
    conversations_dir().join(id)
}

/// Appends `body` to the log of conversation `id` after its run ended (what the server did
/// with the result: an automation's push, pull request, comment). The conversation's lock
/// is taken first, so this never writes beside a run: while one runs, it fails and says so.
pub fn append_after_run(id: &str, source: Source, body: EventBody) -> Result<()> {
    let dir = conversation_dir(id);
    let _lock = wright_core::RunLock::conversation(&dir, id)?;
    let (mut log, _torn) = wright_core::EventLog::open(&dir.join("events.jsonl"))
        .with_context(|| format!("cannot open the log of {id}"))?;
    log.append(source, body)
        .with_context(|| format!("cannot append to the log of {id}"))?;
    Ok(())
}

/// Where repositories cloned from a URL for a conversation are kept (the server's
/// `repository_url`), one directory per conversation.
pub fn repositories_root() -> PathBuf {
    wright_core::repositories_dir()
}

/// A new conversation's id: sorts by time, unique enough for one user's machine.
pub fn new_id() -> String {
    wright_core::new_conversation_id()
}
