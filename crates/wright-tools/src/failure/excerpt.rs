//! What a failing command's output comes to when wright quotes it again (the first look's
//! command run after an edit or before a `finish`): the first failure's lines, as the
//! reading's question shows them, and the output's last line (the test runner's count),
//! bounded; or, when the output names no place of the workspace, its last lines.

use super::failing_place;
use super::places;
use super::question::failure_block;
use super::MARK;
use crate::Workspace;

/// Lines kept from the end of an output that names no place of the workspace.
const TAIL_LINES: usize = 15;
/// The excerpt's characters at most.
const EXCERPT_CHARS: usize = 2000;

/// The excerpt of `shown`, a failing command's output as the terminal tool gave it.
pub fn excerpt(shown: &str, workspace: &Workspace) -> String {
    let lines: Vec<&str> = shown.lines().collect();
    let marked: Vec<_> = places(shown, workspace)
        .into_iter()
        .filter(|(n, _)| lines[*n].starts_with(MARK))
        .collect();
    let mut text = match failing_place(shown, &marked) {
        Some((at, _)) => failure_block(&lines, at, workspace),
        None => {
            let root = format!("{}/", workspace.root().display());
            let from = lines.len().saturating_sub(TAIL_LINES);
            lines[from..].join("\n").replace(&root, "")
        }
    };
    if let Some(last) = lines.iter().rev().map(|l| l.trim()).find(|l| !l.is_empty()) {
        if !text.contains(last) {
            text.push_str("\n…\n");
            text.push_str(last);
        }
    }
    if text.chars().count() > EXCERPT_CHARS {
        let cut: String = text.chars().take(EXCERPT_CHARS).collect();
        text = format!("{cut}\n…");
    }
    text.trim_end().to_string()
}

/// The output's last line that is not blank: a test runner's count ("1 failed, 2 passed").
pub fn last_line(output: &str) -> Option<&str> {
    output.lines().rev().map(str::trim).find(|l| !l.is_empty())
}
