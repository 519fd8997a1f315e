//! How risky a tool call is, read from the call itself, by rules: views, listings and
//! searches are `low`; edits inside the workspace and running the project's own code
//! `medium`; deleting many files, `git push`, package installs, anything that needs the
//! network, writing outside the workspace, a download piped into a shell, changing
//! permissions or git's configuration, running as root `high`; what cannot be read (a
//! program chosen at run time, input typed into a running program, a tool wright does not
//! know) `unknown`. The model may state a risk too (`security_risk`); the higher wins.
//!
//! It reads what the call says, not what it will do: a script of the workspace run by
//! `python3 x.py` is `medium` whatever the script holds. What a name runs depends on the
//! terminal's shell too (its aliases, functions, traps, `PATH`): see `shell_state`. It decides when the user is
//! asked (see `ConfirmMode`); the sandbox still bounds what anything can do.

mod commands;
mod files;
mod git;
mod lists;
mod packages;
mod paths;
mod shell;
mod shell_state;
mod stated;
#[cfg(test)]
mod tests;

pub(crate) use shell::simple_commands;
pub use shell_state::ShellState;
pub use stated::offers_stated_risk;

use serde_json::Value;
use std::path::Path;
use wright_protocol::Risk;

/// A call's risk and why, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    pub risk: Risk,
    pub reason: String,
}

/// One thing found about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub risk: Risk,
    pub reason: String,
    /// What it does to the persistent shell, when it changes what names run there.
    pub shell: Option<shell_state::ShellChange>,
}

impl Finding {
    pub(crate) fn new(risk: Risk, reason: impl Into<String>) -> Self {
        Self {
            risk,
            reason: reason.into(),
            shell: None,
        }
    }
}

/// The risk of calling `tool` with `arguments` in the workspace at `root`, in a fresh
/// shell (see `assess_in`).
pub fn assess(tool: &str, arguments: &Value, root: &Path) -> Assessment {
    assess_in(tool, arguments, root, &ShellState::default())
}

/// The risk of calling `tool` with `arguments` in the workspace at `root`, with the
/// terminal's shell as `shell` (what earlier commands gave it): the higher of wright's
/// reading and the level the model stated in `security_risk`.
pub fn assess_in(tool: &str, arguments: &Value, root: &Path, shell: &ShellState) -> Assessment {
    let read = read_call(tool, arguments, root, shell);
    let stated = arguments
        .get("security_risk")
        .and_then(Value::as_str)
        .and_then(Risk::stated);
    match stated {
        Some(stated) if stated > read.risk => Assessment {
            risk: stated,
            reason: format!("the model says {stated}; wright reads {}", read.reason),
        },
        _ => read,
    }
}

/// wright's own reading of a call.
fn read_call(tool: &str, arguments: &Value, root: &Path, shell: &ShellState) -> Assessment {
    let field = |key: &str| arguments.get(key).and_then(Value::as_str);
    match tool {
        "terminal" | "execute_bash" | "bash" => {
            let command = field("command").unwrap_or("");
            let is_input = matches!(arguments.get("is_input"), Some(v) if v == true || v == "true");
            if is_input {
                return match command.trim() {
                    "" | "C-c" | "C-d" | "C-z" | "C-\\" => {
                        summarize(vec![Finding::new(Risk::Low, "a control key")])
                    }
                    _ => summarize(vec![Finding::new(
                        Risk::Unknown,
                        "text typed into a running program",
                    )]),
                };
            }
            if command.trim().is_empty() {
                return summarize(vec![Finding::new(Risk::Low, "no command")]);
            }
            let mut findings = commands::read_line(command, &paths::Place::new(root), 0);
            findings.extend(shell.finding(command));
            summarize(findings)
        }
        "file_editor" | "str_replace_editor" => {
            let path = field("path").unwrap_or("");
            let place = paths::Place::new(root);
            match field("command") {
                Some("view") => summarize(vec![Finding::new(Risk::Low, "views a file")]),
                _ => summarize(vec![place.written(path, "edits")]),
            }
        }
        "grep" | "glob" => summarize(vec![Finding::new(Risk::Low, "searches the workspace")]),
        // The URL itself carries data out, to any host the run allows.
        "fetch" => summarize(vec![Finding::new(Risk::High, "reaches the network")]),
        "think" | "finish" | "task_tracker" => {
            summarize(vec![Finding::new(Risk::Low, "touches nothing")])
        }
        // The sandbox's own servers are the project's code; another host is the network
        // (the URL carries data out), and a page's own actions may send what it holds.
        "browser" => match field("action") {
            Some("goto") => {
                let url = reqwest::Url::parse(field("url").unwrap_or("")).ok();
                // Nothing leaves the sandbox: a blank page, a file of the workspace (the
                // tool refuses any other).
                match url.as_ref().map(reqwest::Url::scheme) {
                    Some("about") => {
                        return summarize(vec![Finding::new(Risk::Low, "opens a blank page")])
                    }
                    Some("file") => {
                        return summarize(vec![Finding::new(
                            Risk::Medium,
                            "opens a page of the workspace",
                        )])
                    }
                    _ => {}
                }
                let local = url
                    .as_ref()
                    .and_then(|u| u.host_str())
                    .is_some_and(|host| matches!(host, "localhost" | "127.0.0.1" | "[::1]"));
                if local {
                    summarize(vec![Finding::new(
                        Risk::Medium,
                        "opens the sandbox's own server",
                    )])
                } else {
                    summarize(vec![Finding::new(Risk::High, "reaches the network")])
                }
            }
            Some("read" | "console" | "screenshot" | "wait_for") => {
                summarize(vec![Finding::new(Risk::Low, "looks at the open page")])
            }
            _ => summarize(vec![Finding::new(Risk::Medium, "acts on the open page")]),
        },
        other => summarize(vec![Finding::new(
            Risk::Unknown,
            format!("{other} is a tool wright cannot read"),
        )]),
    }
}

/// The highest risk found, with the reasons found at that level.
fn summarize(findings: Vec<Finding>) -> Assessment {
    let risk = findings.iter().map(|f| f.risk).max().unwrap_or(Risk::Low);
    let mut reasons: Vec<&str> = Vec::new();
    for finding in findings.iter().filter(|f| f.risk == risk) {
        if !reasons.contains(&finding.reason.as_str()) {
            reasons.push(&finding.reason);
        }
    }
    let more = reasons.len().saturating_sub(3);
    reasons.truncate(3);
    let mut reason = reasons.join("; ");
    if more > 0 {
        reason.push_str(&format!("; and {more} more"));
    }
    Assessment { risk, reason }
}
