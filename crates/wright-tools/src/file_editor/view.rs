//! `view`: a file as numbered lines (a range of it, or its start when it is long), or a
//! directory two levels deep without hidden and build directories.
//!
//! A file is read as a stream, never whole: only the lines shown are kept, each cut at
//! `MAX_LINE_BYTES`, so viewing a 200 MB file of one line costs a few kilobytes. A
//! directory is walked through descriptors beneath the workspace, never through a link.

use super::content::binary_error;
use super::content::looks_binary;
use crate::ToolError;
use cap_std::fs::Dir;
use std::io::Read;
use wright_protocol::count;

/// Lines shown when a long file is viewed without a range, and at most with one.
const MAX_LINES: usize = 400;
const MAX_RANGE_LINES: usize = 2000;
/// Bytes of one line shown; the rest of a longer line is cut and counted.
const MAX_LINE_BYTES: usize = 2000;
const MAX_ENTRIES: usize = 300;
const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    "__pycache__",
    "venv",
    "dist",
    "build",
];

pub fn numbered(text: &str, first_line: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (offset, line) in text.split('\n').enumerate() {
        out.push_str(&format!("{:>6}\t{}\n", first_line + offset, line));
    }
    out
}

/// A line as kept: its first bytes, and its whole length.
struct Line {
    kept: Vec<u8>,
    length: usize,
}

/// The lines of a file numbered `first..first + count`, and how many lines it has.
struct Scanned {
    lines: Vec<Line>,
    total: usize,
}

fn scan(
    mut file: impl Read,
    shown: &str,
    first: usize,
    count: usize,
) -> Result<Scanned, ToolError> {
    let read_error = |err: std::io::Error| ToolError::Model(format!("cannot read {shown}: {err}"));
    let mut buffer = vec![0u8; 64 * 1024];
    let mut lines = Vec::new();
    let mut current = Line {
        kept: Vec::new(),
        length: 0,
    };
    let mut number = 1;
    let mut size: u64 = 0;
    let last = first.saturating_add(count);
    loop {
        let n = file.read(&mut buffer).map_err(read_error)?;
        if n == 0 {
            break;
        }
        if size == 0 && looks_binary(&buffer[..n]) {
            return Err(binary_error(shown, n as u64, &buffer[..n]));
        }
        size += n as u64;
        for piece in buffer[..n].split_inclusive(|b| *b == b'\n') {
            let (body, ends) = match piece.split_last() {
                Some((b'\n', body)) => (body, true),
                _ => (piece, false),
            };
            if (first..last).contains(&number) {
                let room = MAX_LINE_BYTES.saturating_sub(current.kept.len());
                current
                    .kept
                    .extend_from_slice(&body[..body.len().min(room)]);
            }
            current.length += body.len();
            if ends {
                let done = std::mem::replace(
                    &mut current,
                    Line {
                        kept: Vec::new(),
                        length: 0,
                    },
                );
                if (first..last).contains(&number) {
                    lines.push(done);
                }
                number += 1;
            }
        }
    }
    // A last line without a final newline still counts.
    if current.length > 0 {
        if (first..last).contains(&number) {
            lines.push(current);
        }
        number += 1;
    }
    Ok(Scanned {
        lines,
        total: number - 1,
    })
}

/// A kept line as text: CR of CRLF dropped, cut lines marked, invalid UTF-8 refused.
fn line_text(line: &Line, number: usize, shown: &str) -> Result<String, ToolError> {
    let kept = line.kept.strip_suffix(b"\r").unwrap_or(&line.kept);
    let cut = line.length > line.kept.len();
    let text = match std::str::from_utf8(kept) {
        Ok(text) => text.to_string(),
        // The cut may fall inside a character: keep what is whole.
        Err(err) if cut && err.error_len().is_none() => {
            String::from_utf8_lossy(&kept[..err.valid_up_to()]).into_owned()
        }
        Err(_) => {
            return Err(ToolError::Model(format!(
                "{shown} is not valid UTF-8 (line {number}); file_editor will not show it as text. Convert it first, e.g. `iconv -f latin1 -t utf-8`"
            )))
        }
    };
    if cut {
        Ok(format!("{text} … [line cut: {} bytes in all]", line.length))
    } else {
        Ok(text)
    }
}

/// Characters of a file shown per token of context window (about a third of the window):
/// more would leave no room for the work.
const SHOWN_PER_WINDOW_TOKEN: u64 = 1;
/// Characters of a file shown at most, and at least, whatever the window.
const MAX_SHOWN: usize = 64_000;
const MIN_SHOWN: usize = 2_000;

/// Characters of a file shown on a context window of `tokens`.
pub fn shown_chars(tokens: u64) -> usize {
    usize::try_from(tokens.saturating_mul(SHOWN_PER_WINDOW_TOKEN))
        .unwrap_or(usize::MAX)
        .clamp(MIN_SHOWN, MAX_SHOWN)
}

/// The numbered lines of a file (its start, or `range`), at most `budget` characters of
/// them (always one line at least).
pub fn view_file(
    file: std::fs::File,
    shown: &str,
    range: Option<Vec<i64>>,
    budget: usize,
) -> Result<String, ToolError> {
    let (first, count) = match &range {
        Some(range) => {
            let start = range.first().copied().unwrap_or(1).max(1);
            (usize::try_from(start).unwrap_or(1), MAX_RANGE_LINES)
        }
        None => (1, MAX_LINES),
    };
    let scanned = scan(file, shown, first, count)?;
    let total = scanned.total;
    if total == 0 {
        return Ok(format!("{shown} is empty."));
    }
    let (start, end, note) = match range {
        Some(range) => {
            let (start, end) = parse_range(&range, total)?;
            let shown_end = end.min(start + MAX_RANGE_LINES - 1);
            let note = (shown_end < end).then(|| {
                format!("[shown {start}-{shown_end} of the {start}-{end} asked; view the rest in another range]\n")
            });
            (start, shown_end, note)
        }
        None if total > MAX_LINES => (
            1,
            MAX_LINES,
            Some(format!(
                "[{shown} has {total} lines; shown 1-{MAX_LINES}. Use view_range to see more.]\n"
            )),
        ),
        None => (1, total, None),
    };
    let mut texts = Vec::with_capacity(end + 1 - start);
    let mut used = 0;
    for (offset, line) in scanned.lines.iter().take(end + 1 - start).enumerate() {
        let text = line_text(line, start + offset, shown)?;
        used += text.chars().count() + 8;
        if used > budget && !texts.is_empty() {
            break;
        }
        texts.push(text);
    }
    let mut out = numbered(&texts.join("\n"), start);
    let last_shown = start + texts.len() - 1;
    if last_shown < end {
        out.push_str(&format!(
            "[shown {start}-{last_shown} of the {} of {shown}: more would crowd the context window. View the rest with view_range [{}, {end}] or a narrower range]\n",
            wright_protocol::count(total as u64, "line"),
            last_shown + 1
        ));
    } else if let Some(note) = note {
        out.push_str(&note);
    }
    Ok(out)
}

fn parse_range(range: &[i64], total: usize) -> Result<(usize, usize), ToolError> {
    let bad = |why: &str| {
        ToolError::Model(format!(
            "view_range {range:?} {why}; the file has {}. Use [start, end] with 1 <= start <= end, or end = -1 for the last line",
            count(total as u64, "line")
        ))
    };
    let [start, end] = range else {
        return Err(bad("must have two numbers"));
    };
    let start = usize::try_from(*start).map_err(|_| bad("starts before line 1"))?;
    if start == 0 {
        return Err(bad("starts before line 1"));
    }
    if start > total {
        return Err(bad("starts after the last line"));
    }
    let end = if *end == -1 {
        total
    } else {
        usize::try_from(*end)
            .map_err(|_| bad("ends before it starts"))?
            .min(total)
    };
    if end < start {
        return Err(bad("ends before it starts"));
    }
    Ok((start, end))
}

pub fn view_dir(dir: &Dir, shown: &str) -> Result<String, ToolError> {
    let mut lines = Vec::new();
    let mut truncated = false;
    walk(dir, 0, &mut lines, &mut truncated)
        .map_err(|err| ToolError::Model(format!("cannot list {shown}: {err}")))?;
    let mut out = format!("{shown}/ (two levels, hidden and build directories left out)\n");
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    if truncated {
        out.push_str(&format!(
            "[more than {MAX_ENTRIES} entries; list subdirectories one by one]\n"
        ));
    }
    Ok(out)
}

fn walk(
    dir: &Dir,
    depth: usize,
    lines: &mut Vec<String>,
    truncated: &mut bool,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = dir.entries()?.flatten().collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if lines.len() >= MAX_ENTRIES {
            *truncated = true;
            return Ok(());
        }
        // The entry's own type: a link to a directory is listed, not entered.
        let kind = entry.file_type()?;
        let indent = "  ".repeat(depth + 1);
        if kind.is_dir() {
            lines.push(format!("{indent}{name}/"));
            if depth == 0 && !SKIPPED_DIRS.contains(&name.as_str()) {
                if let Ok(sub) = entry.open_dir() {
                    walk(&sub, depth + 1, lines, truncated)?;
                }
            }
        } else if kind.is_symlink() {
            lines.push(format!("{indent}{name}@"));
        } else {
            lines.push(format!("{indent}{name}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(text: &[u8], range: Option<Vec<i64>>) -> Result<String, ToolError> {
        view_within(text, range, MAX_SHOWN)
    }

    fn view_within(
        text: &[u8],
        range: Option<Vec<i64>>,
        budget: usize,
    ) -> Result<String, ToolError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, text).unwrap();
        view_file(std::fs::File::open(&path).unwrap(), "f", range, budget)
    }

    #[test]
    fn a_view_stays_within_its_share_of_the_window() {
        let text = "a line of forty characters, more or less\n".repeat(300);
        let shown = view_within(text.as_bytes(), None, shown_chars(4096)).unwrap();
        assert!(shown.len() <= 4096 + 200, "{}", shown.len());
        assert!(shown.starts_with("     1\ta line"), "{shown}");
        assert!(
            shown.ends_with(
                "[shown 1-85 of the 300 lines of f: more would crowd the context window. View the rest with view_range [86, 300] or a narrower range]\n"
            ),
            "{shown}"
        );
        // One line is shown, however long.
        let one = view_within(&[b'x'; 3000], None, 2000).unwrap();
        assert!(one.starts_with("     1\txxx"), "{one}");
        assert_eq!(shown_chars(u64::MAX), MAX_SHOWN);
    }

    #[test]
    fn lines_are_numbered_and_cut() {
        assert_eq!(view(b"a\nb\n", None).unwrap(), "     1\ta\n     2\tb\n");
        assert_eq!(view(b"a\r\nb", None).unwrap(), "     1\ta\n     2\tb\n");
        assert_eq!(view(b"", None).unwrap(), "f is empty.");
        assert_eq!(
            view(b"1\n2\n3\n4\n", Some(vec![2, 3])).unwrap(),
            "     2\t2\n     3\t3\n"
        );
        assert_eq!(
            view(b"1\n2\n3\n", Some(vec![3, -1])).unwrap(),
            "     3\t3\n"
        );
        assert!(view(b"1\n", Some(vec![2, 3])).is_err());
        let long = "é".repeat(5000);
        let shown = view(long.as_bytes(), None).unwrap();
        assert!(shown.len() < 2100, "{}", shown.len());
        assert!(
            shown.ends_with("… [line cut: 10000 bytes in all]\n"),
            "{shown}"
        );
        assert!(view(b"\x00\x01binary", None).is_err());
        assert!(view(b"ok\n\xff\xfe\n", None).is_err());
    }
}
