//! What people teach the agent, as the log records it: the repository's instructions
//! (`AGENTS.md` and its kin) a conversation started with, the skills it may draw on, each
//! skill added to the history, and each hook that ran with what it decided. The texts are
//! in the log itself, so the history stays a pure function of it (a resumed conversation
//! reads nothing again from a repository that may have changed).

use serde::Deserialize;
use serde::Serialize;
use std::fmt;

/// A file of always-on instructions that went into the system prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionFile {
    /// Where it was read: relative to the repository's top (`AGENTS.md`,
    /// `src/AGENTS.md`), or `~/…` for the user's own.
    pub path: String,
    /// Characters of it in the prompt.
    pub chars: u64,
    /// Whether it was cut to fit the instructions' bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

/// A skill a conversation may draw on: its text comes into the history when a trigger
/// fits (a keyword in a user message, a path the agent touches), or when the model asks
/// for it by name (those with only a description).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillEntry {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Where it was read (as `InstructionFile::path`).
    pub path: String,
    /// Words that add it when a user message says one of them (whole words, any case).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<String>,
    /// Globs that add it the first time the agent touches a matching file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Its body (the front matter left out), as it comes into the history.
    pub text: String,
}

impl SkillEntry {
    /// A skill with no trigger: listed in the system prompt, read when the model asks.
    pub fn on_demand(&self) -> bool {
        self.triggers.is_empty() && self.paths.is_empty()
    }
}

/// Why a skill came into the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SkillCause {
    /// A user message said this trigger.
    Keyword { word: String },
    /// The agent touched this file, which one of the skill's globs matches.
    Path { path: String },
}

impl fmt::Display for SkillCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkillCause::Keyword { word } => write!(f, "the message says \"{word}\""),
            SkillCause::Path { path } => write!(f, "the agent touched {path}"),
        }
    }
}

/// When a hook runs: the events of Claude Code's and OpenHands' hooks, by their names, and
/// the repository's setup script (`Setup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    Stop,
    SessionEnd,
    /// The repository's setup script, before the first step of a new conversation.
    Setup,
}

impl HookEvent {
    /// The events a hooks file may name.
    pub const CONFIGURABLE: [HookEvent; 6] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Stop,
        HookEvent::SessionEnd,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Stop => "Stop",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Setup => "Setup",
        }
    }

    /// An event by its name in a hooks file: `PreToolUse`, or OpenHands' older
    /// `pre_tool_use`.
    pub fn parse(name: &str) -> Option<Self> {
        let plain: String = name.chars().filter(|c| *c != '_').collect();
        Self::CONFIGURABLE
            .into_iter()
            .find(|event| event.as_str().eq_ignore_ascii_case(&plain))
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whose hook it is, which decides where it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOrigin {
    /// The user's own file: runs as the user, on the host (or in the sandbox when it asks).
    User,
    /// The repository's: runs in the sandbox, and only once the user allowed its content.
    Repository,
}

impl HookOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            HookOrigin::User => "user",
            HookOrigin::Repository => "repository",
        }
    }
}

/// What a hook's run came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOutcome {
    /// It let the action go on (exit 0, or an explicit allow).
    Allowed,
    /// It blocked the action (exit 2, or a deny / block answer): the reason goes back to
    /// the model.
    Blocked,
    /// It failed (another exit code, or it could not start): reported, not fatal.
    Failed,
    /// It ran past its timeout and was killed: reported, not fatal.
    TimedOut,
}

impl HookOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            HookOutcome::Allowed => "allowed",
            HookOutcome::Blocked => "blocked",
            HookOutcome::Failed => "failed",
            HookOutcome::TimedOut => "timed_out",
        }
    }
}

/// One hook's run, as logged (a `hook` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRun {
    pub event: HookEvent,
    pub origin: HookOrigin,
    /// The command, as configured (clipped).
    pub command: String,
    /// The tool call it was about (PreToolUse, PostToolUse, a refused `finish`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    pub outcome: HookOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Why it blocked, or what went wrong (for the user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What it adds to the model's history (`additionalContext`, a failed setup script's
    /// output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}
