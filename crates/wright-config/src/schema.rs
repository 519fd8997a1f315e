//! Every key wright's configuration knows, with its type, what it does, and whether a
//! repository's own file may set it without the user's approval. The table of
//! keys in docs/configuration.md is this list; an unknown key is an error that names the closest known one.

/// What a key holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Str,
    /// A whole number, at least the given minimum.
    Int {
        min: i64,
    },
    /// A number within the range.
    Float {
        min: f64,
        max: f64,
    },
    Bool,
    /// One of these words.
    OneOf(&'static [&'static str]),
    /// A table of anything, passed on as it is (extra request fields).
    Table,
    /// A list of environment variable names (secrets granted).
    Names,
    /// A list of names (profiles), none empty.
    List,
    /// A list of strings (hosts allowed; each is checked where it is used).
    Strings,
    /// A list of these words.
    Words(&'static [&'static str]),
}

/// May a repository's `.wright/config.toml` set it on its own?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepoRule {
    /// Harmless: how long to run, how to talk to the model chosen.
    Allowed,
    /// Weakens the sandbox, opens the network, names hosts or secrets: only once the user
    /// has approved that file's exact content.
    NeedsApproval,
    /// Only the user's own file may set it.
    UserOnly,
    /// A limit: a repository's file may lower it (below your own value, or wright's
    /// default) on its own; raising it needs approval, as above.
    Lower,
}

use crate::assist;
use crate::assist::Level;
use wright_protocol::edit_distance;

pub struct Key {
    /// Dotted path; `*` stands for a name the user chooses (a profile, a repository).
    pub path: &'static str,
    pub kind: Kind,
    pub repo: RepoRule,
    pub doc: &'static str,
}

const TOOL_CALLING: &[&str] = &["auto", "native", "text"];
const CONSTRAIN: &[&str] = &["auto", "off"];
const SANDBOX: &[&str] = &["auto", "landlock", "namespaces", "docker", "none"];
const DOCKER_WORKSPACE: &[&str] = &["bind", "copy"];
const EGRESS: &[&str] = &["local_only", "ask", "any"];
const CONFIRM: &[&str] = &["never", "risky", "always"];
const AUTOMATION_ON: &[&str] = &["webhook", "schedule"];
const AUTOMATION_MISSED: &[&str] = &["run_once", "skip"];
const AUTOMATION_FORGES: &[&str] = &["github", "gitlab", "gitea"];
const AUTOMATION_BUSY: &[&str] = &["queue", "skip"];
/// The settings of a server's conversation that widen what its run reaches.
pub const WIDENING: &[&str] = &["sandbox", "allow_hosts", "base_url", "agent"];
const AUTOMATION_EVENTS: &[&str] = &["issue", "check_run", "comment", "push"];

pub const KEYS: &[Key] = &[
    Key { path: "version", kind: Kind::Int { min: 1 }, repo: RepoRule::Allowed, doc: "format version of the file: 1" },
    Key { path: "profile", kind: Kind::Str, repo: RepoRule::NeedsApproval, doc: "the profile used when none is named (--profile, WRIGHT_PROFILE)" },
    Key { path: "fallback", kind: Kind::List, repo: RepoRule::NeedsApproval, doc: "the profiles a conversation goes on with, in order, when the one in use cannot: its server down or overloaded after the retries, the request too large for it, or the model stuck (--fallback a,b)" },
    Key { path: "egress", kind: Kind::OneOf(EGRESS), repo: RepoRule::NeedsApproval, doc: "where this repository's code may go: local_only (loopback servers only), ask (the first request to another server asks), any; a repository's file may always choose local_only" },
    Key { path: "base_url", kind: Kind::Str, repo: RepoRule::NeedsApproval, doc: "the OpenAI-compatible server (--base-url, OPENAI_BASE_URL, OLLAMA_HOST); default: the local servers that answer" },
    Key { path: "model_file", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "run this GGUF model file (or a name from `wright model ls`) in wright's embedded engine instead of asking a server (--model-file, WRIGHT_MODEL_FILE; the user's file only: llama.cpp parses it on the host)" },
    Key { path: "model", kind: Kind::Str, repo: RepoRule::NeedsApproval, doc: "the model's name on that server (--model, OPENAI_MODEL); default: the server's only model" },
    Key { path: "api_key_env", kind: Kind::Str, repo: RepoRule::NeedsApproval, doc: "the environment variable holding the API key, never the key itself (--api-key and OPENAI_API_KEY give one directly)" },
    Key { path: "context_window", kind: Kind::Int { min: 256 }, repo: RepoRule::Lower, doc: "never send more than this many tokens, even if the server's window is larger (--context-window)" },
    Key { path: "tool_calling", kind: Kind::OneOf(TOOL_CALLING), repo: RepoRule::Allowed, doc: "how tool calls travel: auto (probe once), native, text (--tool-calling); default auto" },
    Key { path: "constrain", kind: Kind::OneOf(CONSTRAIN), repo: RepoRule::Allowed, doc: "hold every reply of a run to a tool call where the server enforces it (tool_choice required, a JSON schema): auto (probe once), off (--constrain); default auto" },
    Key { path: "tools", kind: Kind::Str, repo: RepoRule::Allowed, doc: "the model's tools (--tools): auto (small for a model whose name says 8B or less, else full), small (terminal, file_editor, think, finish), full (those and grep, glob, task_tracker), or names separated by commas; default auto" },
    Key { path: "temperature", kind: Kind::Float { min: 0.0, max: 2.0 }, repo: RepoRule::Allowed, doc: "sampling temperature (--temperature); default: the server's" },
    Key { path: "max_reply_tokens", kind: Kind::Int { min: 0 }, repo: RepoRule::Lower, doc: "most tokens one reply may generate, 0 for the server's (--max-reply-tokens); default 4096" },
    Key { path: "extra", kind: Kind::Table, repo: RepoRule::NeedsApproval, doc: "extra fields sent in every request body (a table)" },
    Key { path: "price_in", kind: Kind::Float { min: 0.0, max: 1.0e6 }, repo: RepoRule::NeedsApproval, doc: "price per million prompt tokens, for max_cost" },
    Key { path: "price_out", kind: Kind::Float { min: 0.0, max: 1.0e6 }, repo: RepoRule::NeedsApproval, doc: "price per million generated tokens, for max_cost" },
    Key { path: "max_cost", kind: Kind::Float { min: 0.0, max: 1.0e9 }, repo: RepoRule::NeedsApproval, doc: "stop a conversation once its cost, by price_in and price_out, reaches this (--max-cost)" },
    Key { path: "confirm", kind: Kind::OneOf(CONFIRM), repo: RepoRule::NeedsApproval, doc: "when to ask before an action runs (--confirm): never, risky (high or unknown risk), always; default risky for chat, the server and `acp`, never for run; resume and fork: as the conversation last ran (see [Confirmation](safety.md#confirmation-of-risky-actions))" },
    Key { path: "run.max_steps", kind: Kind::Int { min: 1 }, repo: RepoRule::Lower, doc: "model steps per run (--max-steps); default 50" },
    Key { path: "run.max_tokens", kind: Kind::Int { min: 1 }, repo: RepoRule::Lower, doc: "prompt plus completion tokens of a conversation (--max-tokens)" },
    Key { path: "run.max_time", kind: Kind::Int { min: 1 }, repo: RepoRule::Lower, doc: "seconds per run (--max-time)" },
    Key { path: "run.condense_at", kind: Kind::Float { min: 0.3, max: 0.95 }, repo: RepoRule::Allowed, doc: "share of the window at which the history is condensed (--condense-at); default 0.75" },
    Key { path: "run.idle_timeout", kind: Kind::Int { min: 1 }, repo: RepoRule::Lower, doc: "seconds of silence from the server before a request is given up (--idle-timeout); default 600" },
    Key { path: "run.stream", kind: Kind::Bool, repo: RepoRule::Allowed, doc: "ask for streamed replies (false: --no-stream); default true" },
    Key { path: "assist.level", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: assist::LEVEL_DOC },
    Key { path: "assist.map", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: assist::MAP_DOC },
    Key { path: "assist.first_look", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: assist::FIRST_LOOK_DOC },
    Key { path: "assist.last_change", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: assist::LAST_CHANGE_DOC },
    Key { path: "assist.reading", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: assist::READING_DOC },
    Key { path: "assist.candidates", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: assist::CANDIDATES_DOC },
    Key { path: "assist.retest", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: assist::RETEST_DOC },
    Key { path: "assist.account", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: assist::ACCOUNT_DOC },
    Key { path: "assist.file_versions", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: assist::FILE_VERSIONS_DOC },
    Key { path: "assist.next_look", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: assist::NEXT_LOOK_DOC },
    Key { path: "assist.stop_when_done", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: assist::STOP_WHEN_DONE_DOC },
    Key { path: "map", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: "deprecated: use assist.map" },
    Key { path: "run.first_look", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: "deprecated: use assist.first_look" },
    Key { path: "run.last_change", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: "deprecated: use assist.last_change" },
    Key { path: "run.reading", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: "deprecated: use assist.reading" },
    Key { path: "run.candidates", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: "deprecated: use assist.candidates" },
    Key { path: "run.retest", kind: Kind::OneOf(Level::WORDS), repo: RepoRule::Allowed, doc: "deprecated: use assist.retest" },
    Key { path: "review.profile", kind: Kind::Str, repo: RepoRule::NeedsApproval, doc: "a second agent on this profile reviews the change before `finish` is taken, seeing only the task, the repository and the diff (--review PROFILE); default: no review" },
    Key { path: "review.rounds", kind: Kind::Int { min: 0 }, repo: RepoRule::Lower, doc: "how many times the reviewer's findings go back to the working agent before its finish is taken anyway; default 1" },
    Key { path: "route.run", kind: Kind::Str, repo: RepoRule::NeedsApproval, doc: "the profile `wright run` starts on when none is named by hand" },
    Key { path: "route.chat", kind: Kind::Str, repo: RepoRule::NeedsApproval, doc: "the profile `wright chat` starts on when none is named by hand" },
    Key { path: "route.large_repo_files", kind: Kind::Int { min: 1 }, repo: RepoRule::NeedsApproval, doc: "a repository of at least this many files (at the start commit) is large: it starts on route.large_repo, before the command's rule" },
    Key { path: "route.large_repo", kind: Kind::Str, repo: RepoRule::NeedsApproval, doc: "the profile a large repository starts on (with route.large_repo_files)" },
    Key { path: "sandbox.level", kind: Kind::OneOf(SANDBOX), repo: RepoRule::NeedsApproval, doc: "confinement of the model's commands (--sandbox); default auto" },
    Key { path: "sandbox.network", kind: Kind::Bool, repo: RepoRule::NeedsApproval, doc: "let the model's commands use the network (--network); default false" },
    Key { path: "sandbox.allow_hosts", kind: Kind::Strings, repo: RepoRule::NeedsApproval, doc: "hosts the model's commands may reach through wright's proxy, with the network otherwise off (--allow-host, repeatable): HOST (ports 80 and 443), HOST:PORT, or globs such as \"*.pythonhosted.org\"; needs a network namespace (sandbox auto or namespaces); default none" },
    Key { path: "sandbox.docker_image", kind: Kind::Str, repo: RepoRule::NeedsApproval, doc: "image for the docker level (--docker-image, WRIGHT_DOCKER_IMAGE)" },
    Key { path: "sandbox.docker_host", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "the Docker engine of the docker level (--docker-host, DOCKER_HOST): unix:///PATH or tcp://HOST:PORT; default unix:///var/run/docker.sock (the user's file only: the workspace goes to that engine)" },
    Key { path: "sandbox.docker_workspace", kind: Kind::OneOf(DOCKER_WORKSPACE), repo: RepoRule::NeedsApproval, doc: "how the workspace reaches the docker level's container (--docker-workspace): bind (mounted; the engine must see this machine's files) or copy (through the engine's archive API, kept in step around each command); default bind for a unix:// engine, copy for any other" },
    Key { path: "sandbox.max_processes", kind: Kind::Int { min: 1 }, repo: RepoRule::Lower, doc: "most processes at once (--max-processes); default 512" },
    Key { path: "sandbox.max_memory", kind: Kind::Int { min: 1 }, repo: RepoRule::Lower, doc: "MiB of memory for all commands (--max-memory); default half the RAM, at most 16 GiB" },
    Key { path: "sandbox.max_file_size", kind: Kind::Int { min: 1 }, repo: RepoRule::Lower, doc: "MiB, the largest file a command may write (--max-file-size); default 4096" },
    Key { path: "sandbox.max_disk", kind: Kind::Int { min: 1 }, repo: RepoRule::Lower, doc: "MiB the agent's files may grow by (--max-disk); default half the free space" },
    Key { path: "profiles.*.model_file", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "the profile's GGUF model file for the embedded engine (the user's file only)" },
    Key { path: "profiles.*.base_url", kind: Kind::Str, repo: RepoRule::NeedsApproval, doc: "the profile's OpenAI-compatible server" },
    Key { path: "profiles.*.model", kind: Kind::Str, repo: RepoRule::NeedsApproval, doc: "the model's name on that server" },
    Key { path: "profiles.*.api_key_env", kind: Kind::Str, repo: RepoRule::NeedsApproval, doc: "the environment variable holding the API key (never the key itself)" },
    Key { path: "profiles.*.context_window", kind: Kind::Int { min: 256 }, repo: RepoRule::NeedsApproval, doc: "never send more than this many tokens (--context-window)" },
    Key { path: "profiles.*.tool_calling", kind: Kind::OneOf(TOOL_CALLING), repo: RepoRule::NeedsApproval, doc: "how tool calls travel (--tool-calling)" },
    Key { path: "profiles.*.temperature", kind: Kind::Float { min: 0.0, max: 2.0 }, repo: RepoRule::NeedsApproval, doc: "sampling temperature (--temperature)" },
    Key { path: "profiles.*.max_reply_tokens", kind: Kind::Int { min: 0 }, repo: RepoRule::NeedsApproval, doc: "most tokens one reply may generate, 0 for the server's (--max-reply-tokens)" },
    Key { path: "profiles.*.extra", kind: Kind::Table, repo: RepoRule::NeedsApproval, doc: "extra fields sent in every request body (a table)" },
    Key { path: "profiles.*.price_in", kind: Kind::Float { min: 0.0, max: 1.0e6 }, repo: RepoRule::NeedsApproval, doc: "price per million prompt tokens, for max_cost" },
    Key { path: "profiles.*.price_out", kind: Kind::Float { min: 0.0, max: 1.0e6 }, repo: RepoRule::NeedsApproval, doc: "price per million generated tokens, for max_cost" },
    Key { path: "profiles.*.max_cost", kind: Kind::Float { min: 0.0, max: 1.0e9 }, repo: RepoRule::NeedsApproval, doc: "stop a conversation once its cost reaches this (with price_in and price_out)" },
    Key { path: "agents.*.command", kind: Kind::Strings, repo: RepoRule::UserOnly, doc: "an external agent that speaks the Agent Client Protocol, driven instead of wright's own loop (`wright run --agent NAME`, a server conversation's `\"settings\": {\"agent\": \"NAME\"}`; see [External agents](external-agents.md)): its program and arguments, run inside the conversation's sandbox, in its clone" },
    Key { path: "agents.*.env", kind: Kind::Table, repo: RepoRule::UserOnly, doc: "variables the agent gets besides the sandbox's own (a table of strings)" },
    Key { path: "agents.*.allow_hosts", kind: Kind::Strings, repo: RepoRule::UserOnly, doc: "hosts the agent (and so the conversation's commands) may reach through wright's proxy, as sandbox.allow_hosts writes them; name its model server's HOST:PORT, loopback included; default none" },
    Key { path: "server.database", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "the PostgreSQL database of `wright serve`, `wright user` and `wright database` when no --database is given: postgres://USER@HOST:PORT/NAME, the URL only (one holding a password is refused: the password comes from PGPASSWORD or --database-password-file)" },
    Key { path: "server.git_store", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "a directory every replica of `wright serve` reaches (shared storage: NFS or the like), when no --git-store is given: the files of each step of a conversation working in a clone are pushed there, in the background, to a bare repository of its own, so that a replica taking the conversation over without its clone makes it again with the files of the last step pushed (see [Replicas](replicas.md)); an absolute path; default none" },
    Key { path: "server.users_may", kind: Kind::Words(WIDENING), repo: RepoRule::UserOnly, doc: "the settings of `wright serve`'s conversations that widen what a run reaches which a user's key (`wright user add`) may set all the same: sandbox (another level than the server's), allow_hosts (hosts beyond the server's), base_url (another model server than the server's: the server connects to it), agent (an external agent, with its hosts); default none: only the server key may" },
    Key { path: "server.automations_repository", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "a repository on the server (absolute path) whose .wright/automations.toml, read from server.automations_branch only, defines automations too — once you allowed its exact content (`wright allow repo-automations -C PATH`); until then `GET /api/automations` lists it as waiting and nothing of it fires (see [Automations](automations.md))" },
    Key { path: "server.automations_branch", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "the branch of server.automations_repository its .wright/automations.toml is read from (never another, nor the checked-out work tree); default main" },
    Key { path: "automations.*.on", kind: Kind::OneOf(AUTOMATION_ON), repo: RepoRule::UserOnly, doc: "what starts the automation (see [Automations](automations.md)): webhook (a forge's POST to /hooks/NAME) or schedule" },
    Key { path: "automations.*.schedule", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "with on = \"schedule\": when, in cron syntax (5 fields: minute hour day month weekday)" },
    Key { path: "automations.*.timezone", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "the time zone of the schedule: UTC, a fixed offset such as +02:00, or a zone such as Europe/Paris (its daylight-saving changes neither skip nor double a time); default UTC" },
    Key { path: "automations.*.missed", kind: Kind::OneOf(AUTOMATION_MISSED), repo: RepoRule::UserOnly, doc: "a schedule's time that passed while the server was down: run_once (fire once at start) or skip; default run_once" },
    Key { path: "automations.*.forge", kind: Kind::OneOf(AUTOMATION_FORGES), repo: RepoRule::UserOnly, doc: "with on = \"webhook\": whose webhooks come, and so how they are signed and which API its results go through: github, gitlab or gitea (Forgejo too); with on = \"schedule\": the API its results go through (default github)" },
    Key { path: "automations.*.secret_env", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "with on = \"webhook\": the environment variable of `wright serve` holding the webhook's secret (never the secret itself)" },
    Key { path: "automations.*.repository", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "the repository each firing works on: a URL wright clones (https, http, ssh, git), or the absolute path of a repository on the server" },
    Key { path: "automations.*.event", kind: Kind::OneOf(AUTOMATION_EVENTS), repo: RepoRule::UserOnly, doc: "with on = \"webhook\": the event it fires on: issue (an issue opened or labelled), check_run (a check that failed on a branch: GitHub's check_run, GitLab's failed pipeline), comment (a comment on a pull or merge request mentioning the bot) or push (a push to a branch); default issue" },
    Key { path: "automations.*.task", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "the task, with the event's fields by name (issue: {issue.title}, {issue.body}, {issue.number}, {issue.url}; check_run: {check_run.name}, {check_run.url}, {check_run.output}, {check_run.log}, {branch}, {commit}; comment: {comment.body}, {comment.url}, {issue.number}, {issue.title}, {issue.url}; push: {branch}, {commit}, {commits}; every event: {sender}, {repository}); the event's text reaches the model marked as untrusted content" },
    Key { path: "automations.*.label", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "with event = \"issue\": fire only for an issue labelled so (the label just added)" },
    Key { path: "automations.*.branch", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "with event = \"check_run\" or \"push\": fire only for this branch (its exact name); default any branch" },
    Key { path: "automations.*.mention", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "with event = \"comment\": the bot's name a comment must mention (@NAME) to fire it; default wright" },
    Key { path: "automations.*.authors", kind: Kind::Strings, repo: RepoRule::UserOnly, doc: "whose issues and comments fire it, by the payload's author association: owner, member, collaborator, contributor, first_time_contributor, none (a comment from GitLab or Gitea, which say no association, counts as none); default owner, member, collaborator" },
    Key { path: "automations.*.tests", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "the test command (as the agent runs it in the terminal, such as python3 -m unittest) whose last run in a firing's conversation says whether the tests fail, for result.issue" },
    Key { path: "automations.*.profile", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "the profile its conversations run on; default: the server's" },
    Key { path: "automations.*.max_steps", kind: Kind::Int { min: 1 }, repo: RepoRule::UserOnly, doc: "model steps per firing; default: the server's" },
    Key { path: "automations.*.max_time", kind: Kind::Int { min: 1 }, repo: RepoRule::UserOnly, doc: "seconds per firing; default: the server's" },
    Key { path: "automations.*.max_tokens", kind: Kind::Int { min: 1 }, repo: RepoRule::UserOnly, doc: "prompt plus completion tokens per firing; default: the server's" },
    Key { path: "automations.*.max_running", kind: Kind::Int { min: 1 }, repo: RepoRule::UserOnly, doc: "most firings of this automation running at once; default 1" },
    Key { path: "automations.*.when_busy", kind: Kind::OneOf(AUTOMATION_BUSY), repo: RepoRule::UserOnly, doc: "a firing while max_running run: queue (it waits its turn) or skip (it is recorded and dropped); default queue" },
    Key { path: "automations.*.result.push", kind: Kind::Bool, repo: RepoRule::UserOnly, doc: "push the conversation's branch (wright/ID) to the repository's URL, from wright's own copy; default false" },
    Key { path: "automations.*.result.issue", kind: Kind::Bool, repo: RepoRule::UserOnly, doc: "when the conversation's last run of tests failed, open an issue saying so through the forge's API, or comment on the one it opened before while that is open; a passing run opens nothing (needs tests and api_repository); default false" },
    Key { path: "automations.*.result.pull_request", kind: Kind::Bool, repo: RepoRule::UserOnly, doc: "open (or, for the same issue, update) a pull request (GitLab: merge request) of the pushed branch through the forge's API (GitHub, GitLab, Gitea; needs push); default false" },
    Key { path: "automations.*.result.comment", kind: Kind::Bool, repo: RepoRule::UserOnly, doc: "with on = \"webhook\": comment on the issue that fired it, saying what came of it (the pull request, the branch pushed, or why nothing was handed back), through the forge's API (GitHub, GitLab, Gitea; needs api_repository); default false" },
    Key { path: "automations.*.result.token_secret", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "the secret (`wright secrets set NAME`) holding the forge token used for the push over https and for the API, on the host only, never given to the sandbox" },
    Key { path: "automations.*.result.api_url", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "the forge's REST API, in the shape of the automation's forge: default https://api.github.com; GitLab's (https://HOST/api/v4) and Gitea's or Forgejo's (https://HOST/api/v1) must be given" },
    Key { path: "automations.*.result.api_repository", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "OWNER/NAME of the repository on the forge, for its API (needed by pull_request)" },
    Key { path: "automations.*.result.base", kind: Kind::Str, repo: RepoRule::UserOnly, doc: "the branch a pull request asks to merge into; default main" },
    Key { path: "repos.*.egress", kind: Kind::OneOf(EGRESS), repo: RepoRule::UserOnly, doc: "egress for the repository at this path (the user's file only)" },
    Key { path: "repos.*.secrets", kind: Kind::Names, repo: RepoRule::UserOnly, doc: "secrets (stored with `wright secrets set`) granted to every conversation on the repository at this path, as environment variables of its shell (the user's file only)" },
];

/// Tables a file may open: sections, and the named tables under them.
const TABLES: &[&str] = &[
    "assist",
    "run",
    "review",
    "route",
    "sandbox",
    "profiles",
    "profiles.*",
    "repos",
    "repos.*",
    "agents",
    "agents.*",
    "automations",
    "automations.*",
    "automations.*.result",
    "server",
];

#[cfg(test)]
impl Kind {
    /// How the reference names the type.
    pub fn words(self) -> String {
        match self {
            Kind::Str => "string".into(),
            Kind::Int { .. } => "integer".into(),
            Kind::Float { .. } => "number".into(),
            Kind::Bool => "boolean".into(),
            Kind::OneOf(words) => words.join(" / "),
            Kind::Table => "table".into(),
            Kind::Names => "list of names".into(),
            Kind::List => "list of profiles".into(),
            Kind::Strings => "list of strings".into(),
            Kind::Words(words) => format!("list of {}", words.join(" / ")),
        }
    }
}

#[cfg(test)]
impl RepoRule {
    /// How the reference says what a repository's own file may do with the key.
    pub fn words(self) -> &'static str {
        match self {
            RepoRule::Allowed => "yes",
            RepoRule::NeedsApproval => "approved",
            RepoRule::UserOnly => "no",
            RepoRule::Lower => "lower",
        }
    }
}

/// The table of every key, as docs/configuration.md shows it (generated from `KEYS`; a
/// test keeps the page in step).
#[cfg(test)]
fn reference_table() -> String {
    let mut table = String::from(
        "| key | type | repository file | what it does |\n| --- | --- | --- | --- |\n",
    );
    for key in KEYS {
        let shown = key
            .path
            .replace("repos.*", "repos.\"PATH\"")
            .replace('*', "NAME");
        table.push_str(&format!(
            "| `{shown}` | {} | {} | {} |\n",
            key.kind.words(),
            key.repo.words(),
            key.doc.replace('|', "\\|")
        ));
    }
    table
}

fn matches(pattern: &str, path: &[&str]) -> bool {
    let parts: Vec<&str> = pattern.split('.').collect();
    parts.len() == path.len() && parts.iter().zip(path).all(|(p, k)| *p == "*" || p == k)
}

/// The key at `path` (its segments, a chosen name included as it is).
pub fn key(path: &[&str]) -> Option<&'static Key> {
    KEYS.iter().find(|key| matches(key.path, path))
}

pub fn is_table(path: &[&str]) -> bool {
    TABLES.iter().any(|table| matches(table, path))
}

/// The known key or table closest to an unknown `path`, to suggest.
pub fn closest(path: &[&str]) -> Option<String> {
    let wanted = path.join(".");
    let shape = |pattern: &str| -> String {
        // A pattern with the user's own names in place of `*`.
        pattern
            .split('.')
            .enumerate()
            .map(|(n, part)| match (part, path.get(n)) {
                ("*", Some(name)) => (*name).to_string(),
                (part, _) => part.to_string(),
            })
            .collect::<Vec<_>>()
            .join(".")
    };
    KEYS.iter()
        .map(|key| key.path)
        .chain(TABLES.iter().copied())
        .map(shape)
        .map(|candidate| (edit_distance(&wanted, &candidate), candidate))
        .filter(|(distance, candidate)| *distance <= candidate.len().max(4) / 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_suggestions() {
        assert!(key(&["run", "max_steps"]).is_some());
        assert!(key(&["profiles", "local", "model"]).is_some());
        assert!(key(&["profiles", "model"]).is_none());
        assert!(is_table(&["profiles", "hosted"]));
        assert_eq!(
            closest(&["run", "max_step"]).as_deref(),
            Some("run.max_steps")
        );
        assert_eq!(
            closest(&["profiles", "local", "modle"]).as_deref(),
            Some("profiles.local.model")
        );
        assert_eq!(
            closest(&["sandbox", "netwrok"]).as_deref(),
            Some("sandbox.network")
        );
        assert_eq!(closest(&["completely", "different", "thing"]), None);
    }

    /// The key table of docs/configuration.md is generated from `KEYS`; with
    /// `UPDATE_REFERENCE=1` this test rewrites it.
    #[test]
    fn the_configuration_page_documents_every_key() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
        let page = std::fs::read_to_string(path).unwrap();
        let start = page.find(TABLE_START).expect("the page's table marker") + TABLE_START.len();
        let end = start
            + page[start..]
                .find(TABLE_END)
                .expect("the page's table end marker");
        let generated = format!("\n{}", reference_table());
        if std::env::var_os("UPDATE_REFERENCE").is_some() {
            let updated = format!("{}{generated}{}", &page[..start], &page[end..]);
            std::fs::write(path, updated).unwrap();
            return;
        }
        assert_eq!(
            page[start..end],
            generated,
            "docs/configuration.md's key table is not the one KEYS gives: run \
             UPDATE_REFERENCE=1 cargo test -p wright-config the_configuration_page"
        );
    }

    const TABLE_START: &str = "<!-- generated from crates/wright-config/src/schema.rs: keys -->";
    const TABLE_END: &str = "<!-- end of the generated keys -->";
}
