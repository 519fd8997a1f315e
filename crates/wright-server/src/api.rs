//! The API's bodies, as clients send and read them (and as `/openapi.json` describes
//! them). Unknown fields are refused: a misspelt limit must not be silently ignored.

use serde::Deserialize;
use serde::Serialize;
use utoipa::ToSchema;
use wright_protocol::AgentState;
use wright_protocol::Event;

/// A new conversation: where, what, and the settings it may choose (the server's own
/// flags, configuration and the repository's `.wright/config.toml` give the rest, as for
/// `wright run`).
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewConversation {
    /// A local directory (a git repository's is worked on in a clone on a new branch);
    /// or give `repository_url`. A user's must lie under one of their roots
    /// (`wright user allow NAME --root DIR`).
    #[serde(default)]
    pub workspace: Option<String>,
    /// A git repository to clone (https://, http://, ssh://, git:// or user@host:path):
    /// the server clones it for this conversation, which then works on it as on a local
    /// one (its branch is handed over to, and taken into, that clone).
    #[serde(default)]
    pub repository_url: Option<String>,
    /// With `repository_url`: the branch to clone and work from (its default branch
    /// when none); a plain branch name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_branch: Option<String>,
    /// What to do, in plain words.
    pub task: String,
    /// What differs from the server's settings.
    #[serde(default)]
    pub settings: Settings,
}

/// What a conversation may set for itself; each as the flag of `wright run` it names.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// `--model`
    pub model: Option<String>,
    /// `--base-url`
    pub base_url: Option<String>,
    /// `--profile`
    pub profile: Option<String>,
    /// `--sandbox`: auto, landlock, namespaces, docker or none.
    pub sandbox: Option<String>,
    /// `--max-steps`
    pub max_steps: Option<i64>,
    /// `--max-time`, in seconds.
    pub max_time: Option<i64>,
    /// `--max-tokens`
    pub max_tokens: Option<i64>,
    /// `--tool-calling`: auto, native or text.
    pub tool_calling: Option<String>,
    /// `--tools`
    pub tools: Option<String>,
    /// `--confirm`: never, risky or always (the server's default: risky).
    pub confirm: Option<String>,
    /// `--allow-host`, each: hosts the conversation's commands (and `fetch`) may reach
    /// through wright's proxy, with the network otherwise off.
    #[serde(default)]
    pub allow_hosts: Option<Vec<String>>,
    /// `wright run --agent`: the external agent `[agents.NAME]` of the server's own
    /// configuration file runs the conversation instead of wright's own loop (a name,
    /// never a command: only that file defines one).
    pub agent: Option<String>,
}

/// The answer about the action a conversation waits for.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Confirm {
    /// The action answered (`pending.call_id`): when given and another action waits,
    /// the answer is refused (409), so an answer to what a page showed a moment ago
    /// never approves another.
    #[serde(default)]
    pub call_id: Option<String>,
    /// The action answered, by its event (`pending.action`): when given and another
    /// action waits, the answer is refused (409). Safer than `call_id`, which some
    /// model servers repeat from one step to the next.
    #[serde(default)]
    pub action: Option<u64>,
    /// Run it (`true`), or not (`false`: the model is told, with `reason`).
    pub approve: bool,
    /// Why, told to the model when it is not run.
    #[serde(default)]
    pub reason: Option<String>,
    /// With `approve`: every later call of the same tool in this conversation runs
    /// without asking.
    #[serde(default)]
    pub always: Option<bool>,
}

/// An action waiting for the user's answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PendingAction {
    /// The model's id for the call (some servers repeat it from step to step).
    pub call_id: String,
    /// The id of the call's `action` event: unique in the conversation; answer with it.
    pub action: u64,
    pub tool: String,
    /// The arguments as the model wrote them (secrets masked).
    #[schema(value_type = Object)]
    pub arguments: serde_json::Value,
    /// `low`, `medium`, `unknown` or `high`.
    pub risk: String,
    /// Why it is that risky.
    pub reason: String,
    /// What wright flagged about it (a possible prompt injection).
    pub flag: Option<String>,
}

/// A message to a conversation: it goes on with it, as `wright resume ID MESSAGE`.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub text: String,
    /// What differs from the server's settings for this run (the model server is never
    /// taken from the log: name it here when it is not the server's own).
    #[serde(default)]
    pub settings: Settings,
    /// Condense the history before the first request of this run.
    #[serde(default)]
    pub condense: bool,
}

/// Going on without a message: the settings of that run (all optional).
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Run {
    #[serde(default)]
    pub settings: Settings,
}

/// Condensing a conversation's history, then going on (with a message, or from where
/// its log ends).
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Condense {
    pub message: Option<String>,
    #[serde(default)]
    pub settings: Settings,
}

/// Where a conversation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Waiting for a free run (`--max-runs`).
    Queued,
    /// Its session is being prepared (model, clone, sandbox).
    Starting,
    Running,
    AwaitingConfirmation,
    Finished,
    Stopped,
    Stuck,
    Failed,
    /// Its log says running, and no process runs it: it died (resume it with a message).
    Interrupted,
}

impl From<AgentState> for State {
    fn from(state: AgentState) -> Self {
        match state {
            AgentState::Running => State::Running,
            AgentState::AwaitingConfirmation => State::AwaitingConfirmation,
            AgentState::Finished => State::Finished,
            AgentState::Stopped => State::Stopped,
            AgentState::Stuck => State::Stuck,
            AgentState::Failed => State::Failed,
        }
    }
}

/// Something the session said beside its events (a warning, a question answered no).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Notice {
    pub warning: bool,
    pub text: String,
}

/// A conversation, as the server and its log know it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Conversation {
    pub id: String,
    pub state: State,
    /// The first line of its task.
    pub task: String,
    pub steps: u32,
    /// The model it works with, once it started.
    pub model: Option<String>,
    /// The repository (or directory) it works on.
    pub repository: Option<String>,
    /// The branch its changes are handed over on (a clone's).
    pub branch: Option<String>,
    /// When its log was last written, in seconds since 1970.
    pub last_active: Option<u64>,
    /// Why it could not start or go on, when it could not.
    pub error: Option<String>,
    /// What went wrong, for programs, when the session could not start or reopen it:
    /// the codes of the error body (`unknown_profile`, `choose_model`, …).
    pub error_code: Option<String>,
    /// What its session said while the server ran it.
    pub notices: Vec<Notice>,
    /// The action it waits for the user's answer about (`POST …/confirm` answers).
    pub pending: Option<PendingAction>,
    /// The group it was started in with others on one task (`wright run --parallel`, or
    /// `review-of-ID` for a reviewer's own conversation).
    pub group: Option<String>,
}

/// A list of conversations, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct Conversations {
    pub conversations: Vec<Conversation>,
}

/// A page of a conversation's events, read from its log.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventsPage {
    /// The events after `after`, in order (each a line of the log: `id`, `ts`, `source`,
    /// `kind`, ...).
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<Event>,
    /// The `after` of the next page, when there may be one.
    pub next_after: Option<u64>,
}

/// `?after=ID&limit=N`
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct Page {
    /// Only the events whose id is greater.
    pub after: Option<u64>,
    /// At most this many (default 100, at most 1000).
    pub limit: Option<usize>,
}

/// `?after=ID` (and the key, on a socket).
#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct After {
    /// Only the events whose id is greater; without it, all from the first.
    pub after: Option<u64>,
}

/// The change a conversation handed over.
#[derive(Debug, Serialize, ToSchema)]
pub struct Diff {
    /// The unified diff, when there is one.
    pub diff: Option<String>,
    /// The files it changes.
    pub files: Vec<String>,
    /// Why there is no diff, when there is none.
    pub none: Option<String>,
}

impl Diff {
    /// A diff (or why there is none) with the files it changes.
    pub fn of(diff: Option<String>, none: Option<String>) -> Self {
        let files = diff
            .as_deref()
            .map(wright_session::handed_over::changed_files)
            .unwrap_or_default();
        Self { diff, files, none }
    }
}

/// The conversation's changes so far: while it runs, its working copy against the commit
/// it started from (read by git inside its sandbox); once it ended, what it handed over.
#[derive(Debug, Serialize, ToSchema)]
pub struct LiveDiff {
    /// Whether this is the working copy of a run in progress (else: what it handed over).
    pub live: bool,
    /// The unified diff, when there is one.
    pub diff: Option<String>,
    /// The files it changes.
    pub files: Vec<String>,
    /// Why there is no diff, when there is none.
    pub none: Option<String>,
}

/// The model server conversations use by default, and its models.
#[derive(Debug, Serialize, ToSchema)]
pub struct Models {
    pub base_url: String,
    pub models: Vec<String>,
}

/// `?state=STATE&q=TEXT`: which conversations to list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct Search {
    /// Only those in this state.
    pub state: Option<State>,
    /// Only those whose task contains this text (case ignored).
    pub q: Option<String>,
}

/// `{"at": EVENT, "message": TEXT}`: where to fork, and what to go on with.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Fork {
    /// Keep the events up to and including this one, and the files as they were then
    /// (default: all of them, and the files as they are now).
    pub at: Option<u64>,
    /// Go on at once with this message.
    pub message: Option<String>,
    /// The settings of the fork's run, when it goes on.
    #[serde(default)]
    pub settings: Settings,
}

/// How to take a conversation's changes.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Apply {
    /// Replay its commits one by one instead of merging its branch.
    #[serde(default)]
    pub cherry_pick: bool,
    /// Take it even when it changes files that configure git (`.gitattributes`,
    /// `.gitmodules`, `.lfsconfig`, wright's config): read them first.
    #[serde(default)]
    pub with_git_config: bool,
}

/// A conversation's changes, taken.
#[derive(Debug, Serialize, ToSchema)]
pub struct Applied {
    /// The branch taken.
    pub branch: String,
    /// The repository it was taken into (its current branch).
    pub into: String,
}

/// What discarding did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Discarded {
    /// `removed`: its branch and clone; `already_gone`: nothing was left;
    /// `restored`: a directory worked in directly is back as it was.
    pub outcome: DiscardOutcome,
    /// Its branch, when it had one.
    pub branch: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiscardOutcome {
    Removed,
    AlreadyGone,
    Restored,
}

/// `?path=RELATIVE`: a file of the conversation's workspace.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct FilePath {
    /// Relative to its workspace; it may not lead out (by `..` or a link).
    pub path: String,
}

/// `?model=&base_url=&profile=&sandbox=`: the setup `/api/doctor` checks (default: the
/// server's).
#[derive(Debug, Clone, Default, Deserialize, Serialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct DoctorQuery {
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub profile: Option<String>,
    pub sandbox: Option<String>,
}

impl DoctorQuery {
    /// These as a conversation's settings.
    pub fn settings(&self) -> Settings {
        Settings {
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            profile: self.profile.clone(),
            sandbox: self.sandbox.clone(),
            ..Settings::default()
        }
    }
}
