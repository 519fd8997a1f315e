//! The last commit's change, shown to the model right after a failing first look: a
//! test that fails "since the last commit" most often fails because of what that commit
//! changed, and a small model does not think of `git show` itself; a person debugging a
//! regression looks there first. Rendered once from the start commit's own diff (see
//! `UserRepo::last_change`), so it is a fixed part of the first message.
//!
//! Guarantees: bounded (`MAX_SHOWN_BYTES` of diff; past it only the changed files are
//! named), deterministic, every line made printable; the diff's `diff --git` and `index`
//! lines, which tell a model nothing, are left out.

use super::clean;
use wright_sandbox::git::LastChange;

/// The diff read from git at most (a little more than is shown, to know it was cut).
pub const MAX_DIFF_BYTES: usize = 4096;
/// The diff shown at most, in bytes: about 400 tokens.
const MAX_SHOWN_BYTES: usize = 1600;
/// A diff line is clipped at this many characters.
const MAX_LINE_CHARS: usize = 160;
/// Files named at most when the diff is too long to show.
const MAX_FILES_NAMED: usize = 8;

/// The text shown after a failing first look for `change`.
pub fn render_last_change(change: &LastChange) -> String {
    let commit = format!("`{} {}`", clean(&change.id, 12), clean(&change.subject, 72));
    let lines: Vec<String> = change
        .diff
        .lines()
        .filter(|line| !line.starts_with("diff --git ") && !line.starts_with("index "))
        .map(diff_line)
        .collect();
    let shown = lines.join("\n");
    if !change.cut && shown.len() <= MAX_SHOWN_BYTES {
        return format!("[The last commit, {commit}, changed:]\n```diff\n{shown}\n```");
    }
    let files = changed_files(&change.diff);
    let named: Vec<String> = files
        .iter()
        .take(MAX_FILES_NAMED)
        .map(|f| clean(f, 80))
        .collect();
    let more = match files.len().saturating_sub(MAX_FILES_NAMED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let id = clean(&change.id, 12);
    format!(
        "[The last commit, {commit}, changed {}{more}; its diff is too long to show here (`git show {id}` prints it).]",
        named.join(", ")
    )
}

/// A diff line made printable and clipped; its tabs kept, as the file has them (a model
/// quotes these lines back in its edits).
fn diff_line(line: &str) -> String {
    let printable = wright_protocol::printable(line);
    match printable.char_indices().nth(MAX_LINE_CHARS) {
        Some((at, _)) => format!("{}…", &printable[..at]),
        None => printable.into_owned(),
    }
}

/// The files a diff's `+++ b/…` (or, for a removed file, `--- a/…`) lines name, in order.
fn changed_files(diff: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    let mut removed: Option<String> = None;
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("--- a/") {
            removed = Some(path.to_string());
        } else if let Some(path) = line.strip_prefix("+++ b/") {
            files.push(path.to_string());
            removed = None;
        } else if line == "+++ /dev/null" {
            files.extend(removed.take());
        }
    }
    files.dedup();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(diff: &str, cut: bool) -> LastChange {
        LastChange {
            id: "abc1234".into(),
            subject: "Sort the header".into(),
            diff: diff.into(),
            cut,
        }
    }

    const DIFF: &str = "diff --git a/export.py b/export.py\nindex 1111111..2222222 100644\n--- a/export.py\n+++ b/export.py\n@@ -1,3 +1,3 @@\n def header(columns):\n-    return \",\".join(columns)\n+    return \",\".join(sorted(columns))\n";

    #[test]
    fn a_small_change_is_shown_as_a_diff_without_its_git_lines() {
        let text = render_last_change(&change(DIFF, false));
        assert!(text.starts_with("[The last commit, `abc1234 Sort the header`, changed:]\n```diff\n--- a/export.py\n"), "{text}");
        assert!(
            text.contains("+    return \",\".join(sorted(columns))\n```"),
            "{text}"
        );
        assert!(
            !text.contains("index 1111111") && !text.contains("diff --git"),
            "{text}"
        );
    }

    #[test]
    fn a_long_or_cut_change_names_its_files_only() {
        let long: String = (0..200).map(|n| format!("+line {n}\n")).collect();
        let diff = format!("{DIFF}--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n--- /dev/null\n+++ b/new.py\n{long}");
        let text = render_last_change(&change(&diff, false));
        assert_eq!(
            text,
            "[The last commit, `abc1234 Sort the header`, changed export.py, gone.py, new.py; its diff is too long to show here (`git show abc1234` prints it).]"
        );
        let text = render_last_change(&change(DIFF, true));
        assert!(
            text.contains("changed export.py; its diff is too long"),
            "{text}"
        );
    }

    #[test]
    fn hostile_text_is_made_printable() {
        let mut hostile = change("--- a/x\n+++ b/x\n+\u{1b}[2Jcleared\n", false);
        hostile.subject = "subject\u{7}\nsecond line".into();
        let text = render_last_change(&hostile);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text:?}"
        );
        assert!(text.contains("`abc1234 subject"), "{text}");
    }
}
