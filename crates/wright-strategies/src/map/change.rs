//! The last commit's change, shown to the model right after a failing first look: a
//! test that fails "since the last commit" most often fails because of what that commit
//! changed, and a small model does not think of `git show` itself; a person debugging a
//! regression looks there first. Rendered once from the start commit's own diff (see
//! `UserRepo::last_change`), so it is a fixed part of the first message.
//!
//! Said in words, not as a diff: asked about one, the 1.5B read its `-` and `+` the wrong
//! way round (it "fixed" the code by making the commit's change again), so each changed
//! run of lines is shown as it reads now, with its line numbers, then as it read before.
//! When the change is one run of lines in one file that is not a test, the `file_editor`
//! call that undoes it follows: shown words alone, the 1.5B named the right line and then
//! wrote a different fix; shown the call, it made it (9 runs of 9).
//!
//! Guarantees: bounded (`MAX_SHOWN_BYTES`; past it only the changed files are named),
//! deterministic, every line made printable (its tabs kept, as the file has them).

use super::clean;
use wright_sandbox::git::LastChange;

/// The diff read from git at most (a little more than is shown, to know it was cut).
pub const MAX_DIFF_BYTES: usize = 4096;
/// What is shown at most, in bytes (the undo call included): about 400 tokens.
const MAX_SHOWN_BYTES: usize = 1600;
/// A diff line is clipped at this many characters.
const MAX_LINE_CHARS: usize = 160;
/// Files named at most when the diff is too long to show.
const MAX_FILES_NAMED: usize = 8;

/// The text shown after a failing first look for `change`.
pub fn render_last_change(change: &LastChange) -> String {
    let commit = format!("`{} {}`", clean(&change.id, 12), clean(&change.subject, 72));
    let files = parse(&change.diff);
    let changed: Vec<String> = files.iter().map(|f| clean(&f.path, 80)).collect();
    let what = match changed.as_slice() {
        [one] => one.clone(),
        _ => format!("{} files", changed.len()),
    };
    let body: String = files.iter().map(FileChange::render).collect();
    if !change.cut && !files.is_empty() && body.len() <= MAX_SHOWN_BYTES {
        // The call repeats the lines: it goes only when all of it stays within the bound.
        let undo = undo_call(&files)
            .map(|call| {
                format!("\nIf that change is what makes the tests fail, this call puts those lines back as they were:\n{call}")
            })
            .filter(|undo| body.len() + undo.len() <= MAX_SHOWN_BYTES)
            .unwrap_or_default();
        return format!(
            "[The last commit, {commit}, changed {what}:]\n{}{undo}",
            body.trim_end()
        );
    }
    let named: Vec<&str> = changed
        .iter()
        .take(MAX_FILES_NAMED)
        .map(String::as_str)
        .collect();
    let more = match changed.len().saturating_sub(MAX_FILES_NAMED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let id = clean(&change.id, 12);
    format!(
        "[The last commit, {commit}, changed {}{more}; the change is too long to show here (`git show {id}` prints it).]",
        named.join(", ")
    )
}

/// The `file_editor` call that undoes the change, when it is one run of lines replaced in
/// one file that is not a test (undoing a test's change would weaken it), every line
/// whole: a small model copies a call it is shown more surely than it writes one.
fn undo_call(files: &[FileChange]) -> Option<String> {
    let mut runs = files
        .iter()
        .filter(|file| !wright_tools::is_test_file(&file.path))
        .flat_map(|file| file.blocks.iter().map(move |block| (file, block)));
    let (file, block) = runs.next()?;
    if runs.next().is_some()
        || clean(&file.path, 80) != file.path
        || files.iter().any(|f| f.binary)
        || block.clipped
        || block.removed.is_empty()
        || block.added.is_empty()
    {
        return None;
    }
    let call = serde_json::json!({
        "name": "file_editor",
        "arguments": {
            "command": "str_replace",
            "path": file.path,
            "old_str": block.added.join("\n"),
            "new_str": block.removed.join("\n"),
        }
    });
    Some(call.to_string())
}

/// One file of a diff: its path and its changed runs of lines.
#[derive(Debug, Default)]
struct FileChange {
    path: String,
    binary: bool,
    blocks: Vec<Block>,
}

/// A run of lines a commit replaced, added or removed: the lines as they were, and as
/// they are now (from line `new_start`).
#[derive(Debug)]
struct Block {
    new_start: usize,
    removed: Vec<String>,
    added: Vec<String>,
    /// A line of it was too long and is shown cut, or had to be made printable.
    clipped: bool,
}

impl FileChange {
    /// Each run said in words, the current lines first: a small model reads a diff's `-`
    /// and `+` the wrong way round as often as not, and quotes the first lines it sees.
    fn render(&self) -> String {
        let path = clean(&self.path, 80);
        if self.binary {
            return format!("{path}: a binary file changed.\n");
        }
        let mut text = String::new();
        for block in &self.blocks {
            let now = lines_named(block.new_start, block.added.len());
            let was = fenced(&block.removed);
            let is = fenced(&block.added);
            text.push_str(&match (block.removed.is_empty(), block.added.is_empty()) {
                (false, false) => {
                    let verb = if block.added.len() == 1 {
                        "reads"
                    } else {
                        "read"
                    };
                    let before = if block.removed.len() == 1 {
                        "it read"
                    } else {
                        "they read"
                    };
                    format!("{path}, {now}, now {verb}:\n{is}Before that commit {before}:\n{was}")
                }
                (true, false) => format!("{path}: it added {now}:\n{is}"),
                (false, true) => format!(
                    "{path}: it removed these lines (where line {} is now):\n{was}",
                    block.new_start
                ),
                (true, true) => String::new(),
            });
        }
        if text.is_empty() {
            text = format!("{path}: no line changed (its mode or type did).\n");
        }
        text
    }
}

/// "line 13" or "lines 13-15".
fn lines_named(start: usize, count: usize) -> String {
    match count {
        0 | 1 => format!("line {start}"),
        n => format!("lines {start}-{}", start + n - 1),
    }
}

fn fenced(lines: &[String]) -> String {
    format!("```\n{}\n```\n", lines.join("\n"))
}

/// The files of a unified diff and their runs of changed lines.
fn parse(diff: &str) -> Vec<FileChange> {
    let mut files: Vec<FileChange> = Vec::new();
    let mut old_path: Option<String> = None;
    // The next line's number in the file as it is now, inside a hunk.
    let mut at: Option<usize> = None;
    // Whether the last line was a changed one (the run goes on).
    let mut open = false;
    // Between a `diff --git` line and the first hunk: the file's own header lines (a
    // removed line of text may well begin with `--- ` too, so only read them there).
    let mut in_header = false;
    for line in diff.lines() {
        if line.starts_with("diff --git ") {
            (in_header, at, old_path) = (true, None, None);
            continue;
        }
        if line.starts_with("@@ ") {
            (in_header, at, open) = (false, hunk_start(line), false);
            continue;
        }
        if in_header {
            if let Some(rest) = line.strip_prefix("--- ") {
                old_path = rest.strip_prefix("a/").map(str::to_string);
            } else if let Some(rest) = line.strip_prefix("+++ ") {
                let path = rest.strip_prefix("b/").map(str::to_string);
                files.push(FileChange {
                    path: path.or_else(|| old_path.take()).unwrap_or_default(),
                    ..FileChange::default()
                });
            } else if let Some(rest) = line.strip_prefix("Binary files ") {
                let path = rest
                    .rsplit_once(" and b/")
                    .map(|(_, b)| b.trim_end_matches(" differ").to_string())
                    .unwrap_or_default();
                files.push(FileChange {
                    path,
                    binary: true,
                    ..FileChange::default()
                });
            }
            continue;
        }
        let (Some(new), Some(file)) = (at.as_mut(), files.last_mut()) else {
            continue;
        };
        let changed = match line.as_bytes().first() {
            Some(b'-') => Some(true),
            Some(b'+') => Some(false),
            Some(b' ') | None => None,
            // "\\ No newline at end of file": not a line of the file.
            _ => continue,
        };
        let Some(removed) = changed else {
            open = false;
            *new += 1;
            continue;
        };
        if !open {
            file.blocks.push(Block {
                new_start: *new,
                removed: Vec::new(),
                added: Vec::new(),
                clipped: false,
            });
            open = true;
        }
        if let Some(block) = file.blocks.last_mut() {
            let text = diff_line(&line[1..]);
            block.clipped |= text != line[1..];
            if removed {
                block.removed.push(text);
            } else {
                block.added.push(text);
                *new += 1;
            }
        }
    }
    files
}

/// The start line, in the file as it is now, of a `@@ -A,B +C,D @@` hunk header.
fn hunk_start(line: &str) -> Option<usize> {
    let new = line.split(' ').nth(2)?.strip_prefix('+')?;
    let start: usize = new.split(',').next()?.parse().ok()?;
    // A hunk that removes all of a file counts from line 0.
    Some(start.max(1))
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

    const DIFF: &str = "diff --git a/export.py b/export.py\nindex 1111111..2222222 100644\n--- a/export.py\n+++ b/export.py\n@@ -11,4 +11,4 @@ def header(columns):\n \n def export_csv(records, columns):\n-    lines = [header(columns)]\n+    lines = [header(sorted(columns))]\n     for record in records:\n";

    #[test]
    fn a_replaced_line_is_shown_as_it_reads_now_then_as_it_read() {
        let text = render_last_change(&change(DIFF, false));
        assert_eq!(
            text,
            "[The last commit, `abc1234 Sort the header`, changed export.py:]\nexport.py, line 13, now reads:\n```\n    lines = [header(sorted(columns))]\n```\nBefore that commit it read:\n```\n    lines = [header(columns)]\n```\nIf that change is what makes the tests fail, this call puts those lines back as they were:\n{\"name\":\"file_editor\",\"arguments\":{\"command\":\"str_replace\",\"path\":\"export.py\",\"old_str\":\"    lines = [header(sorted(columns))]\",\"new_str\":\"    lines = [header(columns)]\"}}"
        );
        // Never for a test's change: undoing it would weaken the test.
        let test = DIFF.replace("export.py", "test_export.py");
        assert!(!render_last_change(&change(&test, false)).contains("this call"));
    }

    #[test]
    fn added_removed_and_several_files_are_each_said() {
        let diff = "diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,4 @@\n x = 1\n+y = 2\n+z = 3\n-- sql comment\n--- not a header\n@@ -20,2 +21,2 @@\n \tkeep\n-\tgone\n+\tnew\ndiff --git a/old.py b/old.py\ndeleted file mode 100644\nindex 3..0000000\n--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-print(1)\n\\ No newline at end of file\ndiff --git a/logo.png b/logo.png\nindex 4..5 100644\nBinary files a/logo.png and b/logo.png differ\n";
        let text = render_last_change(&change(diff, false));
        assert_eq!(
            text,
            "[The last commit, `abc1234 Sort the header`, changed 3 files:]\na.py, lines 2-3, now read:\n```\ny = 2\nz = 3\n```\nBefore that commit they read:\n```\n- sql comment\n-- not a header\n```\na.py, line 22, now reads:\n```\n\tnew\n```\nBefore that commit it read:\n```\n\tgone\n```\nold.py: it removed these lines (where line 1 is now):\n```\nprint(1)\n```\nlogo.png: a binary file changed."
        );
        let added = "diff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1,2 @@\n+a\n+b\n";
        assert!(render_last_change(&change(added, false))
            .ends_with("n.py: it added lines 1-2:\n```\na\nb\n```"));
    }

    #[test]
    fn a_long_or_cut_change_names_its_files_only() {
        let long: String = (0..200).map(|n| format!("+line {n}\n")).collect();
        let diff = format!("{DIFF}diff --git a/new.py b/new.py\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,200 @@\n{long}");
        let text = render_last_change(&change(&diff, false));
        assert_eq!(
            text,
            "[The last commit, `abc1234 Sort the header`, changed export.py, new.py; the change is too long to show here (`git show abc1234` prints it).]"
        );
        let text = render_last_change(&change(DIFF, true));
        assert!(
            text.contains("changed export.py; the change is too long"),
            "{text}"
        );
        // Lines that fit once but not twice: shown, without the call that repeats them.
        let lines: String = (0..12)
            .map(|n| format!("value_{n} = compute_{n}(x, y, z)  # comment {n}\n"))
            .collect();
        let before: String = lines.lines().map(|l| format!("-{l}\n")).collect();
        let after: String = lines
            .lines()
            .map(|l| format!("+{}\n", l.replace('x', "w")))
            .collect();
        let diff = format!(
            "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,12 +1,12 @@\n{before}{after}"
        );
        let text = render_last_change(&change(&diff, false));
        assert!(text.contains("m.py, lines 1-12, now read:"), "{text}");
        assert!(
            !text.contains("this call") && text.len() <= MAX_SHOWN_BYTES + 100,
            "{text}"
        );
    }

    #[test]
    fn hostile_text_is_made_printable() {
        let mut hostile = change(
            "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+\u{1b}[2Jcleared\u{7}\n",
            false,
        );
        hostile.subject = "subject\u{7}\nsecond line".into();
        let text = render_last_change(&hostile);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text:?}"
        );
        assert!(
            text.contains("`abc1234 subject") && text.contains("\ncleared\n"),
            "{text}"
        );
    }
}
