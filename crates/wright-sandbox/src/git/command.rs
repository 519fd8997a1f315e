//! How wright runs git on the host: the hardened options every call gets, the user's
//! environment minus what would point git elsewhere, and a command's output read as text
//! or as a failure that says what git said.

use super::GitError;
use super::LOCATING_VARIABLES;
use crate::run::Captured;
use std::path::Path;
use std::process::Command;

/// Options every host git gets: no fsmonitor program, no hooks (wright's own operations
/// are not the user's commits), no pager, no prompt, names as they are (not octal
/// escapes; what is printed is made safe for a terminal by the front end).
pub(super) const HARDENED: &[&str] = &[
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.pager=cat",
    "-c",
    "core.quotePath=false",
];

/// `git -C DIR` with the user's environment, minus what would point git elsewhere.
pub(super) fn base_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command.arg("-C").arg(dir);
    for variable in LOCATING_VARIABLES {
        command.env_remove(variable);
    }
    command.env("GIT_TERMINAL_PROMPT", "0");
    command
}

pub(super) fn failed(args: &[&str], said: &str) -> GitError {
    GitError::Failed {
        command: args.join(" "),
        said: said.trim().to_string(),
    }
}

/// A diff's text: when it passed the output bound, its beginning and a line saying so.
pub(super) fn diff_text(args: &[&str], captured: Captured) -> Result<String, GitError> {
    if captured.stdout_cut {
        let mut text = String::from_utf8_lossy(&captured.stdout).into_owned();
        text.push_str("\n[the diff goes on; it was cut here]\n");
        return Ok(text);
    }
    text_of(args, captured)
}

pub(super) fn text_of(args: &[&str], captured: Captured) -> Result<String, GitError> {
    if !captured.success() {
        return Err(failed(args, &captured.said()));
    }
    Ok(String::from_utf8_lossy(&captured.stdout).into_owned())
}
