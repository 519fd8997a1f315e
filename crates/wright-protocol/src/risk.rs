//! The vocabulary of confirming risky actions: how risky a call is, when the user is asked
//! before one runs, what the user answered, and what wright flags. Logged with the
//! actions (version 5 on), so every field name here is part of the log format.

use serde::Deserialize;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// How risky a call is. Ordered: `Unknown` (wright could not read what the call does) is
/// above `Medium` and below `High`, so "the higher of two" is `max`, and `risky` asks for
/// everything from `Unknown` up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Reads only: views, listings, searches, `git status`.
    Low,
    /// Changes the workspace, or runs the project's own code in the sandbox.
    Medium,
    /// What the call does could not be read (a command built at run time, input typed
    /// into a running program, a tool wright does not know).
    Unknown,
    /// Deletes many files, pushes, installs packages, needs the network, writes outside
    /// the workspace, pipes a download into a shell, changes permissions or git's
    /// configuration, runs as root.
    High,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::Unknown => "unknown",
            Risk::High => "high",
        }
    }

    /// The level a model stated (`security_risk`: `LOW`, `medium`, …), when it is one.
    pub fn stated(text: &str) -> Option<Risk> {
        match text.trim().to_ascii_lowercase().as_str() {
            "low" => Some(Risk::Low),
            "medium" => Some(Risk::Medium),
            "high" => Some(Risk::High),
            "unknown" => Some(Risk::Unknown),
            _ => None,
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// When the user is asked before an action runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfirmMode {
    /// Nothing is asked.
    Never,
    /// Actions whose risk is `high` or `unknown`.
    Risky,
    /// Every action that runs something or changes files (not `think`, `finish` or the
    /// plan, which touch nothing).
    Always,
}

impl ConfirmMode {
    pub const NAMES: &'static [&'static str] = &["never", "risky", "always"];

    pub fn as_str(self) -> &'static str {
        match self {
            ConfirmMode::Never => "never",
            ConfirmMode::Risky => "risky",
            ConfirmMode::Always => "always",
        }
    }

    /// Whether a call of `tool` at `risk` waits for the user's answer in this mode.
    pub fn asks(self, tool: &str, risk: Risk) -> bool {
        match self {
            ConfirmMode::Never => false,
            ConfirmMode::Risky => risk >= Risk::Unknown,
            ConfirmMode::Always => !matches!(tool, "think" | "finish" | "task_tracker"),
        }
    }
}

impl FromStr for ConfirmMode {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "never" => Ok(ConfirmMode::Never),
            "risky" => Ok(ConfirmMode::Risky),
            "always" => Ok(ConfirmMode::Always),
            other => Err(format!("confirm is never, risky or always, not {other:?}")),
        }
    }
}

impl fmt::Display for ConfirmMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the user answered about a pending action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run it.
    Approved,
    /// Do not run it; the model is told, with the user's reason.
    Rejected,
    /// Run it, and every later call of the same tool in this conversation without asking.
    Always,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approved => "approved",
            Decision::Rejected => "rejected",
            Decision::Always => "always",
        }
    }

    pub fn runs(self) -> bool {
        match self {
            Decision::Approved | Decision::Always => true,
            Decision::Rejected => false,
        }
    }
}

/// Something wright flags about an action (version 5 on).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Flag {
    /// A risky action (`high` or `unknown`) came after the agent read text that looks like
    /// instructions addressed to it (a README telling "the AI" to push, say): a possible
    /// prompt injection. `source` is the observation's event id, `excerpt` the words.
    PromptInjection { source: u64, excerpt: String },
}

impl fmt::Display for Flag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Flag::PromptInjection { source, excerpt } => write!(
                f,
                "possible prompt injection: this risky action follows text the agent read that looks like instructions to it (event {source}: \"{excerpt}\")"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_ranks_between_medium_and_high() {
        assert!(Risk::Low < Risk::Medium);
        assert!(Risk::Medium < Risk::Unknown);
        assert!(Risk::Unknown < Risk::High);
        assert_eq!(Risk::Medium.max(Risk::High), Risk::High);
        assert_eq!(Risk::stated("HIGH"), Some(Risk::High));
        assert_eq!(Risk::stated("critical"), None);
    }

    #[test]
    fn what_each_mode_asks() {
        assert!(!ConfirmMode::Never.asks("terminal", Risk::High));
        assert!(ConfirmMode::Risky.asks("terminal", Risk::High));
        assert!(ConfirmMode::Risky.asks("terminal", Risk::Unknown));
        assert!(!ConfirmMode::Risky.asks("terminal", Risk::Medium));
        assert!(ConfirmMode::Always.asks("file_editor", Risk::Low));
        assert!(!ConfirmMode::Always.asks("finish", Risk::Low));
        assert_eq!("risky".parse::<ConfirmMode>(), Ok(ConfirmMode::Risky));
        assert!("sometimes".parse::<ConfirmMode>().is_err());
    }
}
