//! Making program output fit for a model: terminal control sequences removed, carriage
//! returns resolved the way a terminal shows them, long text cut to its head and tail
//! with a true account of what was left out.

use wright_protocol::count;

/// Decodes bytes (invalid UTF-8 replaced), drops ANSI escape sequences, turns `\r\n`
/// into `\n` and keeps only what a terminal would show after a bare `\r` (progress bars).
pub fn clean_terminal_output(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    continue;
                }
                if chars.peek().is_some() {
                    line.clear();
                }
            }
            '\n' => {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            '\u{8}' => {
                line.pop();
            }
            c if c.is_control() && c != '\t' => {}
            c => line.push(c),
        }
    }
    out.push_str(&line);
    out
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.peek() {
        // CSI: parameters then one final byte in @..~
        Some('[') => {
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        // OSC: up to BEL or ESC \
        Some(']') => {
            chars.next();
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    chars.next();
                    break;
                }
            }
        }
        Some(_) => {
            chars.next();
        }
        None => {}
    }
}

/// Cuts `text` to at most `head + tail` characters, keeping both ends and saying how much
/// was left out in between (`note` is added to that line, e.g. where the full text is).
pub fn head_and_tail(text: &str, head: usize, tail: usize, note: &str) -> String {
    let Some((start, omitted, end)) = split_ends(text, head, tail) else {
        return text.to_string();
    };
    format!(
        "{start}\n[... {} ({}) omitted{note} ...]\n{end}",
        count(omitted.chars().count() as u64, "character"),
        count(omitted.matches('\n').count() as u64, "line"),
    )
}

/// Like `head_and_tail`, for a command that failed: the tail comes first, since the
/// failure is at the end of the output and a small model reads the first lines most.
pub fn tail_first(text: &str, head: usize, tail: usize, note: &str) -> String {
    let Some((start, omitted, end)) = split_ends(text, head, tail) else {
        return text.to_string();
    };
    format!(
        "[The end of the output first:]\n{end}\n[... {} ({}) omitted{note}; the beginning of the output: ...]\n{start}",
        count(omitted.chars().count() as u64, "character"),
        count(omitted.matches('\n').count() as u64, "line"),
    )
}

/// Like `head_and_tail` for a `text` that is itself only the two ends of a larger whole:
/// what is omitted cannot be counted from it, so `whole` says what the whole was.
pub fn ends_of_larger(text: &str, head: usize, tail: usize, whole: &str) -> String {
    match split_ends(text, head, tail) {
        Some((start, _, end)) => {
            format!("{start}\n[... the middle is omitted; {whole} ...]\n{end}")
        }
        None => format!("{text}\n[... the middle is omitted; {whole} ...]"),
    }
}

/// The first `head` characters, the middle and the last `tail`, if there is a middle.
fn split_ends(text: &str, head: usize, tail: usize) -> Option<(&str, &str, &str)> {
    let total = text.chars().count();
    if total <= head + tail {
        return None;
    }
    let head_end = text.char_indices().nth(head).map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(total - tail)
        .map_or(text.len(), |(i, _)| i);
    Some((
        &text[..head_end],
        &text[head_end..tail_start],
        &text[tail_start..],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_sequences_and_progress_bars_are_resolved() {
        let raw = b"\x1b[31mred\x1b[0m\r\n10%\r50%\r100%\ndone\x1b]0;title\x07!";
        assert_eq!(clean_terminal_output(raw), "red\n100%\ndone!");
    }

    #[test]
    fn long_text_keeps_both_ends() {
        let text = "a\n".repeat(100);
        let cut = head_and_tail(&text, 10, 10, "; see f.txt");
        assert!(cut.starts_with(
            "a\na\na\na\na\n\n[... 180 characters (90 lines) omitted; see f.txt ...]\n"
        ));
        assert!(cut.ends_with("a\na\na\na\na\n"));
        assert_eq!(head_and_tail("short", 10, 10, ""), "short");
        let one = head_and_tail("ab\ncd", 2, 2, "");
        assert_eq!(one, "ab\n[... 1 character (1 line) omitted ...]\ncd");
    }

    #[test]
    fn the_ends_of_a_larger_output_say_what_the_whole_was() {
        let text = format!("{}\n{}", "h".repeat(50), "t".repeat(50));
        let cut = ends_of_larger(&text, 10, 10, "52428800 bytes (3326000 lines) in all");
        assert_eq!(
            cut,
            "hhhhhhhhhh\n[... the middle is omitted; 52428800 bytes (3326000 lines) in all ...]\ntttttttttt"
        );
    }
}
