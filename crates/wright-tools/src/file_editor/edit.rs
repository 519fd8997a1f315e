//! The text operations of the editor, on strings only: exact replacement that must match
//! once (or, failing that, once with its quotes read as the file has them), insertion
//! after a line, and the numbered snippet shown after a change.

use super::view::numbered;
use crate::ToolError;
use wright_protocol::count;

/// Lines of context shown around a change.
const CONTEXT: usize = 4;

pub struct Edited {
    pub text: String,
    /// First and last line (1-based) of the changed region in the new text.
    pub first_line: usize,
    pub last_line: usize,
    /// What was read otherwise than written, to tell the model (see `quote_blind`).
    pub note: Option<String>,
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte].matches('\n').count() + 1
}

pub fn str_replace(text: &str, old: &str, new: &str, shown: &str) -> Result<Edited, ToolError> {
    if old.is_empty() {
        return Err(ToolError::Model(
            "old_str is empty; give the exact text to replace (use insert to add text)".into(),
        ));
    }
    let hits: Vec<usize> = text.match_indices(old).map(|(at, _)| at).collect();
    // A small model that believes it is done sometimes "edits" a line into itself, over
    // and over; each such call must say so instead of counting as a change.
    if old == new && !hits.is_empty() {
        return Err(ToolError::Model(format!(
            "old_str and new_str are the same: this edit would change nothing in {shown}. If the work is done, call finish; otherwise put the new text in new_str"
        )));
    }
    match hits.as_slice() {
        [] => match quote_blind(text, old, new) {
            Some((at, new, note)) => {
                if text[at..at + old.len()] == new {
                    return Err(ToolError::Model(format!(
                        "old_str and new_str are the same (read with the quotes {shown} has): this edit would change nothing. If the work is done, call finish; otherwise put the new text in new_str"
                    )));
                }
                let mut edited = str_replace(text, &text[at..at + old.len()], &new, shown)?;
                edited.note = Some(note);
                Ok(edited)
            }
            None => Err(no_match(text, old, shown)),
        },
        [at] => {
            let mut out = String::with_capacity(text.len() + new.len());
            out.push_str(&text[..*at]);
            out.push_str(new);
            out.push_str(&text[at + old.len()..]);
            let first_line = line_of(text, *at);
            let last_line = first_line + new.matches('\n').count();
            Ok(Edited {
                text: out,
                first_line,
                last_line,
                note: None,
            })
        }
        many => {
            let lines: Vec<String> = many
                .iter()
                .map(|at| line_of(text, *at).to_string())
                .collect();
            Err(ToolError::Model(format!(
                "old_str occurs {} times in {shown} (lines {}); include more surrounding lines so it matches exactly once",
                many.len(),
                lines.join(", ")
            )))
        }
    }
}

/// No exact match, but exactly one when `'` and `"` are read alike: where, `new` as it
/// goes in, and what to tell the model. Small models swap quotes to keep them out of the
/// JSON string they write (the 1.5B wrote `';'` for the file's `";"` and never matched).
/// When every quote of `old` was swapped the same way and `new` holds none of the file's
/// kind, `new`'s quotes are swapped back too: a Rust or Go `';'` is a character, not the
/// string the file had.
fn quote_blind(text: &str, old: &str, new: &str) -> Option<(usize, String, String)> {
    let blind = |c: u8| if c == b'\'' { b'"' } else { c };
    let wanted: Vec<u8> = old.bytes().map(blind).collect();
    if !old.contains(['\'', '"']) || wanted.len() > text.len() {
        return None;
    }
    let bytes = text.as_bytes();
    let mut hits = (0..=bytes.len() - wanted.len()).filter(|&at| {
        bytes[at..at + wanted.len()]
            .iter()
            .zip(&wanted)
            .all(|(have, want)| blind(*have) == *want)
    });
    let at = hits.next()?;
    if hits.next().is_some() || !text.is_char_boundary(at + old.len()) {
        return None;
    }
    let found = &text[at..at + old.len()];
    let swaps: Vec<(char, char)> = old
        .chars()
        .zip(found.chars())
        .filter(|(written, has)| written != has)
        .collect();
    let (written, has) = *swaps.first()?;
    // Every quote of `old` swapped, and the same way: none of them was meant as written.
    let one_way = swaps.iter().all(|swap| *swap == (written, has))
        && old.matches(written).count() == swaps.len();
    let swap_new = one_way && !new.contains(has) && new.contains(written);
    let (new, swapped_new) = if swap_new {
        (new.replace(written, &has.to_string()), " (new_str's too)")
    } else {
        (new.to_string(), "")
    };
    let note = format!("old_str matched only with its {written} read as the file's {has}{swapped_new}: copy quotes as the file has them");
    Some((at, new, note))
}

/// No exact match: say whether it would match if whitespace were ignored, and where.
fn no_match(text: &str, old: &str, shown: &str) -> ToolError {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let wanted = squash(old);
    let old_lines = old.trim_matches('\n').split('\n').count().max(1);
    let lines: Vec<&str> = text.split('\n').collect();
    let near = (0..lines.len().saturating_sub(old_lines - 1))
        .find(|&i| squash(&lines[i..i + old_lines].join("\n")) == wanted);
    match near {
        Some(i) => ToolError::Model(format!(
            "old_str was not found exactly in {shown}, but lines {}-{} match it apart from whitespace or indentation. View those lines and copy them exactly",
            i + 1,
            i + old_lines
        )),
        None => ToolError::Model(format!(
            "old_str was not found in {shown}. View the file and copy the text to replace exactly, including indentation"
        )),
    }
}

/// Inserts `new` after line `after` (0 = at the top).
pub fn insert(text: &str, after: i64, new: &str, shown: &str) -> Result<Edited, ToolError> {
    let had_final_newline = text.ends_with('\n') || text.is_empty();
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut lines: Vec<&str> = if body.is_empty() && text.len() <= 1 {
        Vec::new()
    } else {
        body.split('\n').collect()
    };
    let after = usize::try_from(after)
        .ok()
        .filter(|&n| n <= lines.len())
        .ok_or_else(|| {
            ToolError::Model(format!(
                "insert_line {after} is out of range: {shown} has {}; use 0 to insert at the top, {} for the end",
                count(lines.len() as u64, "line"),
                lines.len()
            ))
        })?;
    let new_body = new.strip_suffix('\n').unwrap_or(new);
    let new_lines: Vec<&str> = new_body.split('\n').collect();
    let count = new_lines.len();
    lines.splice(after..after, new_lines);
    let mut out = lines.join("\n");
    if had_final_newline {
        out.push('\n');
    }
    Ok(Edited {
        text: out,
        first_line: after + 1,
        last_line: after + count,
        note: None,
    })
}

/// The changed lines with a few lines of context, numbered as in the file.
pub fn snippet(text: &str, first_line: usize, last_line: usize) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let start = first_line.saturating_sub(CONTEXT).max(1);
    let end = (last_line + CONTEXT).min(lines.len());
    if start > end {
        return String::new();
    }
    numbered(&lines[start - 1..end].join("\n"), start)
}

/// The lines of `now` (1-based, inclusive) that differ from `before`: all but the lines
/// both share at the start and at the end. `None` when nothing differs or the change only
/// took lines away.
pub fn changed_lines(before: &str, now: &str) -> Option<(usize, usize)> {
    let old: Vec<&str> = before.split('\n').collect();
    let new: Vec<&str> = now.split('\n').collect();
    let same_start = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let room = old.len().min(new.len()) - same_start;
    let same_end = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let last = new.len() - same_end;
    (last > same_start).then_some((same_start + 1, last))
}

/// Lines `first`-`last` of `text` numbered, as `snippet` shows them, when they are few
/// enough to read in a reply; otherwise their first and last `SHOWN_AT_MOST / 2` lines,
/// without context.
pub fn snippet_capped(text: &str, first: usize, last: usize) -> String {
    const SHOWN_AT_MOST: usize = 40;
    if last - first < SHOWN_AT_MOST {
        return snippet(text, first, last);
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let half = SHOWN_AT_MOST / 2;
    let head = numbered(&lines[first - 1..first - 1 + half].join("\n"), first);
    let tail = numbered(&lines[last - half..last].join("\n"), last + 1 - half);
    format!("{head}     …\n{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lines_are_those_between_the_shared_start_and_end() {
        let before = "def f(n):\n    if n % 15 == 0:\n        return 1\n    return 0\n";
        let now = "def f(n):\n    if n % 3 == 0 and n % 5 == 0:\n        return 1\n    return 0\n";
        assert_eq!(changed_lines(before, now), Some((2, 2)));
        let longer = "def f(n):\n    a = 1\n    b = 2\n    return 0\n";
        assert_eq!(
            changed_lines("def f(n):\n    return 0\n", longer),
            Some((2, 3))
        );
        // Lines only taken away, or nothing changed: no line of the new text to show.
        assert_eq!(changed_lines(longer, "def f(n):\n    return 0\n"), None);
        assert_eq!(changed_lines(now, now), None);
        // A repeated line at the seam is counted once, not twice.
        assert_eq!(changed_lines("a\na\n", "a\na\na\n"), Some((3, 3)));
    }

    #[test]
    fn a_long_change_is_shown_by_its_ends() {
        let text: String = (1..=100).map(|n| format!("line {n}\n")).collect();
        let shown = snippet_capped(&text, 11, 90);
        assert!(shown.starts_with("    11\tline 11\n"), "{shown}");
        assert!(
            shown.contains("    30\tline 30\n     …\n    71\tline 71\n"),
            "{shown}"
        );
        assert!(shown.ends_with("    90\tline 90\n"), "{shown}");
        assert_eq!(shown.lines().count(), 41);
    }

    #[test]
    fn replace_needs_exactly_one_match() {
        let text = "a = 1\nb = 2\na = 1\n";
        let err = str_replace(text, "a = 1", "x", "f.py")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("occurs 2 times in f.py (lines 1, 3)"), "{err}");
        let err = str_replace(text, "c", "x", "f.py")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("not found"), "{err}");
        let edited = str_replace(text, "b = 2", "b = 3\nc = 4", "f.py").unwrap();
        assert_eq!(edited.text, "a = 1\nb = 3\nc = 4\na = 1\n");
        assert_eq!((edited.first_line, edited.last_line), (2, 3));
    }

    #[test]
    fn whitespace_near_miss_is_located() {
        let text = "def f():\n    return 1\n";
        let err = str_replace(text, "def f():\n  return 1", "x", "f.py")
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("lines 1-2 match it apart from whitespace"),
            "{err}"
        );
    }

    #[test]
    fn quotes_swapped_by_the_model_match_once_and_are_told() {
        let text = "def line(r):\n    return \";\".join(r)\n";
        // The file's kind in new_str: it goes in as written.
        let edited =
            str_replace(text, "return ';'.join(r)", "return \",\".join(r)", "f.py").unwrap();
        assert_eq!(edited.text, "def line(r):\n    return \",\".join(r)\n");
        assert_eq!((edited.first_line, edited.last_line), (2, 2));
        let note = edited.note.unwrap();
        assert_eq!(note, "old_str matched only with its ' read as the file's \": copy quotes as the file has them");
        // Swapped the same way in both: new_str's are swapped back (a `','` in Rust is a char).
        let rust = "fn line(r: &[String]) -> String {\n    r.join(\";\")\n}\n";
        let edited = str_replace(rust, "r.join(';')", "r.join(',')", "f.rs").unwrap();
        assert_eq!(
            edited.text,
            "fn line(r: &[String]) -> String {\n    r.join(\",\")\n}\n"
        );
        assert!(edited.note.unwrap().contains("(new_str's too)"));
        // A real ' in old_str (a lifetime): new_str is left as written.
        let life = "fn f<'a>(s: &'a str) -> &'a str {\n    s.trim_matches(\";\")\n}\n";
        let edited = str_replace(
            life,
            "&'a str {\n    s.trim_matches(';')",
            "&'a str {\n    s.trim_matches(',')",
            "f.rs",
        )
        .unwrap();
        assert!(
            edited.text.contains("s.trim_matches(',')"),
            "{}",
            edited.text
        );
        // Twice read alike, or the same text once swapped back: no edit.
        let twice = "a = \"x\"\nb = \"x\"\n";
        let err = str_replace(twice, "= 'x'", "= 1", "f.py")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("not found"), "{err}");
        let same = str_replace(text, "return ';'.join(r)", "return ';'.join(r)", "f.py")
            .err()
            .unwrap()
            .to_string();
        assert!(same.contains("would change nothing"), "{same}");
    }

    #[test]
    fn insert_keeps_final_newline_state() {
        assert_eq!(insert("a\nb\n", 1, "x", "f").unwrap().text, "a\nx\nb\n");
        assert_eq!(insert("a\nb", 2, "x\n", "f").unwrap().text, "a\nb\nx");
        assert_eq!(insert("a\n", 0, "x", "f").unwrap().text, "x\na\n");
        assert_eq!(insert("", 0, "x", "f").unwrap().text, "x\n");
        assert!(insert("a\n", 5, "x", "f").is_err());
    }
}
