//! Making program output fit for a model: terminal control sequences removed, carriage
//! returns resolved the way a terminal shows them, long text cut to its head and tail.

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

/// Cuts `text` to at most `head + tail` characters, keeping both ends and saying what was
/// left out in between (`note` is added to that line, e.g. where the full text is).
pub fn head_and_tail(text: &str, head: usize, tail: usize, note: &str) -> String {
    let total = text.chars().count();
    if total <= head + tail {
        return text.to_string();
    }
    let head_end = text.char_indices().nth(head).map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(total - tail)
        .map_or(text.len(), |(i, _)| i);
    let omitted = &text[head_end..tail_start];
    let lines = omitted.matches('\n').count();
    format!(
        "{}\n[... {} characters ({} lines) omitted{} ...]\n{}",
        &text[..head_end],
        total - head - tail,
        lines,
        note,
        &text[tail_start..]
    )
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
    }
}
