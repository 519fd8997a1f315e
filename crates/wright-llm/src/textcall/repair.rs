//! Conservative repair of the JSON small models break most, tried only after a strict
//! parse has failed (the happy path never comes here):
//!
//! - quotes left unescaped inside a string (`"command": "git config user.email "a@b""`);
//! - strings in single quotes (`{'name': 'terminal'}`);
//! - a comma before a closing bracket (`{"a": 1,}`);
//! - brackets left open at the end of the call (`{"name": "x", "arguments": {"a": 1}`);
//! - a raw line break or tab inside a string.
//!
//! A repair is made only when there is one reading: a quote inside a string is taken as
//! the string's end only when what follows can continue the JSON (`,` and the next key,
//! or the closing bracket), and the quotes taken as inside a string must pair up; a text
//! cut off inside a string or after a key is never completed. Anything else is refused
//! with the reason, and the caller sends the call back. The repaired text is always
//! checked by the strict parser before it is used.

use serde_json::Value;

use super::scan::snippet;

/// One kind of repair, reported with the call it was made to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fix {
    /// Quotes inside a string were escaped.
    UnescapedQuotes,
    /// Single-quoted strings were rewritten with double quotes.
    SingleQuotes,
    /// A comma before a closing bracket was dropped.
    TrailingCommas,
    /// Brackets left open at the end were closed.
    UnclosedBrackets,
    /// A code fence around the call was never closed.
    UnclosedFence,
    /// A line break or tab inside a string was escaped.
    RawControl,
}

impl Fix {
    /// What was done, for the note the model and the user see.
    pub fn describe(self) -> &'static str {
        match self {
            Fix::UnescapedQuotes => "the quotes inside a string were escaped",
            Fix::SingleQuotes => "strings in single quotes were given double quotes",
            Fix::TrailingCommas => "a comma before a closing bracket was dropped",
            Fix::UnclosedBrackets => "brackets left open were closed",
            Fix::UnclosedFence => "the ``` fence left open was closed",
            Fix::RawControl => "a line break inside a string was written as \\n",
        }
    }

    /// How to write it next time.
    pub fn advice(self) -> &'static str {
        match self {
            Fix::UnescapedQuotes => "escape a quote inside a JSON string as \\\"",
            Fix::SingleQuotes => "JSON strings take double quotes",
            Fix::TrailingCommas => "put no comma before } or ]",
            Fix::UnclosedBrackets => "close every { and [",
            Fix::UnclosedFence => "close the ``` fence",
            Fix::RawControl => "write a line break inside a JSON string as \\n",
        }
    }
}

/// A repaired JSON value at the start of a text.
#[derive(Debug)]
pub(crate) struct Repaired {
    pub value: Value,
    /// Bytes of the original text the value took.
    pub used: usize,
    pub fixes: Vec<Fix>,
}

/// Why a repair was refused, and how far the reader got (for stepping over the text).
#[derive(Debug)]
pub(crate) struct Refused {
    pub why: String,
    pub stop: usize,
}

/// How far to look past a quote for the key that would follow it.
const LOOKAHEAD: usize = 256;

#[derive(Clone, Copy, PartialEq)]
enum Expect {
    Key,
    Colon,
    Value,
    CommaOrClose,
}

struct Repairer<'t> {
    text: &'t str,
    bytes: &'t [u8],
    out: String,
    stack: Vec<u8>,
    fixes: Vec<Fix>,
    expect: Expect,
}

/// Repairs the JSON value (an object or a list) at the start of `text` (leading
/// whitespace allowed). `Err` when it holds no value to repair or the repair would be a
/// guess.
pub(crate) fn repair(text: &str) -> Result<Repaired, Refused> {
    let start = text.len() - text.trim_start().len();
    let mut repairer = Repairer {
        text,
        bytes: text.as_bytes(),
        out: String::with_capacity(text.len() + 16),
        stack: Vec::new(),
        fixes: Vec::new(),
        expect: Expect::Value,
    };
    let used = repairer.run(start)?;
    let Repairer { out, fixes, .. } = repairer;
    match serde_json::from_str::<Value>(&out) {
        Ok(value) => Ok(Repaired { value, used, fixes }),
        Err(err) => Err(Refused {
            why: format!("even repaired it is not JSON ({err})"),
            stop: used,
        }),
    }
}

impl Repairer<'_> {
    fn refuse(&self, at: usize, why: String) -> Refused {
        Refused { why, stop: at }
    }

    fn fix(&mut self, fix: Fix) {
        if !self.fixes.contains(&fix) {
            self.fixes.push(fix);
        }
    }

    /// Walks the value from `start`; returns the bytes used.
    fn run(&mut self, start: usize) -> Result<usize, Refused> {
        let mut pos = start;
        if !matches!(self.bytes.get(pos), Some(b'{' | b'[')) {
            return Err(self.refuse(pos, "it does not start with { or [".into()));
        }
        while let Some(&byte) = self.bytes.get(pos) {
            match byte {
                b' ' | b'\t' | b'\r' | b'\n' => {
                    self.out.push(byte as char);
                    pos += 1;
                }
                b'{' | b'[' if self.expect == Expect::Value => {
                    self.stack.push(byte);
                    self.out.push(byte as char);
                    self.expect = if byte == b'{' {
                        Expect::Key
                    } else {
                        Expect::Value
                    };
                    pos += 1;
                }
                b'}' | b']' => {
                    let open = if byte == b'}' { b'{' } else { b'[' };
                    if self.stack.last() != Some(&open) {
                        return Err(
                            self.refuse(pos, format!("a `{}` closes nothing open", byte as char))
                        );
                    }
                    if self.expect != Expect::CommaOrClose
                        && !self.drop_trailing_comma()
                        && !self.out.trim_end().ends_with(open as char)
                    {
                        return Err(
                            self.refuse(pos, "a value is missing before a closing bracket".into())
                        );
                    }
                    self.stack.pop();
                    self.out.push(byte as char);
                    pos += 1;
                    self.expect = Expect::CommaOrClose;
                    if self.stack.is_empty() {
                        return Ok(pos);
                    }
                }
                b',' if self.expect == Expect::CommaOrClose => {
                    self.out.push(',');
                    pos += 1;
                    self.expect = if self.stack.last() == Some(&b'{') {
                        Expect::Key
                    } else {
                        Expect::Value
                    };
                }
                b':' if self.expect == Expect::Colon => {
                    self.out.push(':');
                    pos += 1;
                    self.expect = Expect::Value;
                }
                b'"' | b'\'' if matches!(self.expect, Expect::Key | Expect::Value) => {
                    let key = self.expect == Expect::Key;
                    pos = self.string(pos, byte, key)?;
                    self.expect = if key {
                        Expect::Colon
                    } else {
                        Expect::CommaOrClose
                    };
                }
                _ if self.expect == Expect::Value && is_literal_start(byte) => {
                    let end = self.literal_end(pos);
                    self.out.push_str(self.text.get(pos..end).unwrap_or(""));
                    pos = end;
                    self.expect = Expect::CommaOrClose;
                }
                _ if self.expect == Expect::CommaOrClose && self.prose_follows(pos) => {
                    // The model left the JSON and went on writing: what it wrote is whole.
                    return self.close_all(pos);
                }
                _ => {
                    return Err(self.refuse(
                        pos,
                        format!(
                            "unexpected `{}`",
                            snippet(self.text.get(pos..).unwrap_or(""))
                                .chars()
                                .take(12)
                                .collect::<String>()
                        ),
                    ));
                }
            }
        }
        self.close_all(pos)
    }

    /// Closes the brackets still open at `pos` (the end of the value), when what was
    /// written is whole.
    fn close_all(&mut self, pos: usize) -> Result<usize, Refused> {
        if self.stack.is_empty() {
            return Ok(pos);
        }
        let whole = self.expect == Expect::CommaOrClose
            || (self.expect != Expect::Colon && self.out.trim_end().ends_with(['{', '[']));
        if !whole {
            return Err(self.refuse(
                pos,
                "it is cut off in the middle (after a key, a `:` or a `,`), so what was meant to follow is unknown".into(),
            ));
        }
        while let Some(open) = self.stack.pop() {
            self.out.push(if open == b'{' { '}' } else { ']' });
        }
        self.fix(Fix::UnclosedBrackets);
        Ok(pos)
    }

    /// Whether the text at `pos` (after a whole value) is prose on a new line: the JSON
    /// stopped there. JSON punctuation there is not prose (a comma left out is not
    /// guessed).
    fn prose_follows(&self, pos: usize) -> bool {
        let before = self.text.get(..pos).unwrap_or("");
        let gap = before.get(before.trim_end().len()..).unwrap_or("");
        let punctuation = self
            .bytes
            .get(pos)
            .is_some_and(|b| matches!(b, b'"' | b'\'' | b'{' | b'}' | b'[' | b']' | b',' | b':'));
        gap.contains('\n') && !punctuation
    }

    /// Drops a comma just before a closing bracket; whether there was one.
    fn drop_trailing_comma(&mut self) -> bool {
        let trimmed = self.out.trim_end().len();
        if self.out.get(..trimmed).is_some_and(|s| s.ends_with(',')) {
            let tail = self.out.split_off(trimmed);
            self.out.pop();
            self.out.push_str(&tail);
            self.fix(Fix::TrailingCommas);
            true
        } else {
            false
        }
    }

    fn literal_end(&self, pos: usize) -> usize {
        let mut end = pos;
        while let Some(&byte) = self.bytes.get(end) {
            if matches!(
                byte,
                b',' | b'}' | b']' | b':' | b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'\''
            ) {
                break;
            }
            end += 1;
        }
        end
    }

    /// The string opened by `quote` at `pos`; writes it JSON-escaped and returns where it
    /// ends.
    fn string(&mut self, pos: usize, quote: u8, key: bool) -> Result<usize, Refused> {
        if quote == b'\'' {
            self.fix(Fix::SingleQuotes);
        }
        self.out.push('"');
        let mut inner_quotes = 0usize;
        let at = pos + 1;
        let rest = self.text.get(at..).unwrap_or("");
        let mut chars = rest.char_indices().peekable();
        while let Some((offset, c)) = chars.next() {
            let here = at + offset;
            match c {
                '\\' => {
                    let Some((_, next)) = chars.next() else {
                        break;
                    };
                    if quote == b'\'' && next == '\'' {
                        self.out.push('\'');
                    } else {
                        self.out.push('\\');
                        self.out.push(next);
                    }
                }
                '"' | '\'' if c as u32 == u32::from(quote) => {
                    // Ending at the end of the text or before prose is sure only for a
                    // string with no quotes inside: otherwise the text may be cut off
                    // in the middle of a longer string.
                    let closes = match self.closes(here + 1, key) {
                        Close::No => false,
                        Close::Structural => true,
                        Close::End => inner_quotes == 0,
                    };
                    if closes {
                        if inner_quotes % 2 == 1 {
                            return Err(self.refuse(
                                here,
                                format!(
                                    "the string `{}` has an odd number of quotes inside, so which quote ends it is a guess",
                                    snippet(self.text.get(pos..=here).unwrap_or(""))
                                ),
                            ));
                        }
                        if inner_quotes > 0 {
                            self.fix(Fix::UnescapedQuotes);
                        }
                        self.out.push('"');
                        return Ok(here + 1);
                    }
                    let previous = self.text.get(..here).and_then(|s| s.chars().next_back());
                    let next = chars.peek().map(|(_, c)| *c);
                    let apostrophe = quote == b'\''
                        && previous.is_some_and(char::is_alphanumeric)
                        && next.is_some_and(char::is_alphanumeric);
                    let rest = self.text.get(here + 1..).unwrap_or("");
                    let spaced = rest.trim_start_matches([' ', '\t']);
                    if spaced.len() < rest.len() && spaced.starts_with(c) {
                        // `"ls" "-l"`: two strings side by side, or one with quotes in
                        // it? Either reading is a guess.
                        return Err(self.refuse(
                            here,
                            format!(
                                "`{}` reads as two strings side by side, so which quote ends the string is a guess",
                                snippet(self.text.get(pos..here + 1 + (rest.len() - spaced.len()) + 1).unwrap_or(""))
                            ),
                        ));
                    }
                    if apostrophe {
                        self.out.push('\'');
                    } else {
                        inner_quotes += 1;
                        self.out.push_str("\\\"");
                    }
                }
                '"' => self.out.push_str("\\\""),
                '\n' => {
                    self.fix(Fix::RawControl);
                    self.out.push_str("\\n");
                }
                '\r' => {
                    self.fix(Fix::RawControl);
                    self.out.push_str("\\r");
                }
                '\t' => {
                    self.fix(Fix::RawControl);
                    self.out.push_str("\\t");
                }
                c if (c as u32) < 0x20 => {
                    self.fix(Fix::RawControl);
                    self.out.push_str(&format!("\\u{:04x}", c as u32));
                }
                c => self.out.push(c),
            }
        }
        Err(self.refuse(
            self.text.len(),
            format!(
                "the string `{}` is never closed: the call is cut off",
                snippet(self.text.get(pos..).unwrap_or(""))
            ),
        ))
    }

    /// Whether a quote whose next byte is at `after` can end the string: what follows
    /// must continue the JSON.
    fn closes(&self, after: usize, key: bool) -> Close {
        let rest = self.text.get(after..).unwrap_or("");
        let trimmed = rest.trim_start();
        let Some(next) = trimmed.bytes().next() else {
            // The text ends: the string ended (the brackets may be closed for it).
            return Close::End;
        };
        let structural = if key {
            next == b':'
        } else {
            match next {
                b'}' => self.stack.last() == Some(&b'{'),
                b']' => self.stack.last() == Some(&b'['),
                b',' => {
                    let after_comma = trimmed.get(1..).unwrap_or("").trim_start();
                    if self.stack.last() == Some(&b'{') {
                        starts_key(after_comma) || after_comma.starts_with('}')
                    } else {
                        after_comma.bytes().next().is_some_and(|b| {
                            matches!(b, b'"' | b'\'' | b'{' | b'[' | b']') || is_literal_start(b)
                        })
                    }
                }
                _ => false,
            }
        };
        let gap = rest.get(..rest.len() - trimmed.len()).unwrap_or("");
        if structural {
            Close::Structural
        } else if !key
            && gap.contains('\n')
            && !starts_key(trimmed)
            && !matches!(next, b'"' | b'\'')
        {
            // A new line of prose after the last value: the JSON ends there.
            Close::End
        } else {
            Close::No
        }
    }
}

/// What a quote in a string is.
enum Close {
    /// Text inside the string.
    No,
    /// The end: JSON punctuation that fits follows.
    Structural,
    /// Maybe the end: the text ends, or prose follows.
    End,
}

/// Whether `text` starts with a quoted key and its `:` (within [`LOOKAHEAD`] bytes).
fn starts_key(text: &str) -> bool {
    let Some(quote) = text.chars().next().filter(|c| *c == '"' || *c == '\'') else {
        return false;
    };
    let body = text.get(1..).unwrap_or("");
    let limit = body
        .char_indices()
        .take_while(|(offset, _)| *offset < LOOKAHEAD)
        .find(|(_, c)| *c == quote || *c == '\n');
    match limit {
        Some((end, c)) if c == quote => body
            .get(end + 1..)
            .unwrap_or("")
            .trim_start()
            .starts_with(':'),
        _ => false,
    }
}

fn is_literal_start(byte: u8) -> bool {
    byte.is_ascii_digit() || matches!(byte, b'-' | b't' | b'f' | b'n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(text: &str) -> (Value, Vec<Fix>) {
        let repaired = repair(text).unwrap_or_else(|refused| panic!("{text}: {refused:?}"));
        (repaired.value, repaired.fixes)
    }

    fn refused(text: &str) -> String {
        match repair(text) {
            Ok(repaired) => panic!("{text} was repaired to {:?}", repaired.value),
            Err(refused) => refused.why,
        }
    }

    #[test]
    fn unescaped_quotes_the_small_model_wrote() {
        let (value, fixes) =
            ok(r#"{"name": "terminal", "arguments": {"command": "git config user.email "a@b""}}"#);
        assert_eq!(
            value,
            json!({"name": "terminal", "arguments": {"command": "git config user.email \"a@b\""}})
        );
        assert_eq!(fixes, vec![Fix::UnescapedQuotes]);
    }

    #[test]
    fn quotes_inside_then_more_keys() {
        let (value, _) = ok(r#"{"command": "echo "a", "b"", "timeout": 5}"#);
        assert_eq!(value, json!({"command": "echo \"a\", \"b\"", "timeout": 5}));
    }

    #[test]
    fn an_odd_number_of_inner_quotes_is_not_repaired() {
        assert!(refused(r#"{"command": "say "hi", "path": "x"}"#).contains("odd number"));
        assert!(refused(r#"{"command": "echo "x": "y"}"#).contains("odd number"));
    }

    #[test]
    fn single_quotes_and_apostrophes() {
        let (value, fixes) =
            ok("{'name': 'finish', 'arguments': {'message': 'it's done, \"really\"'}}");
        assert_eq!(
            value,
            json!({"name": "finish", "arguments": {"message": "it's done, \"really\""}})
        );
        assert_eq!(fixes, vec![Fix::SingleQuotes]);
    }

    #[test]
    fn trailing_commas() {
        let (value, fixes) = ok(r#"{"a": [1, 2,], "b": {"c": 1,},}"#);
        assert_eq!(value, json!({"a": [1, 2], "b": {"c": 1}}));
        assert_eq!(fixes, vec![Fix::TrailingCommas]);
    }

    #[test]
    fn unclosed_brackets_after_a_whole_value() {
        let (value, fixes) = ok(r#"{"name": "terminal", "arguments": {"command": "ls"}"#);
        assert_eq!(
            value,
            json!({"name": "terminal", "arguments": {"command": "ls"}})
        );
        assert_eq!(fixes, vec![Fix::UnclosedBrackets]);
        let repaired = repair("{\"a\": 1\nThat is all.").unwrap();
        assert_eq!(repaired.value, json!({"a": 1}));
        assert_eq!(repaired.used, "{\"a\": 1\n".len());
    }

    #[test]
    fn a_text_cut_off_is_not_completed() {
        assert!(refused(r#"{"command": "rm -rf bui"#).contains("never closed"));
        assert!(refused(r#"{"command": "ls", "timeout""#).contains("cut off"));
        assert!(refused(r#"{"command": "ls", "#).contains("cut off"));
        assert!(refused(r#"{"command": "ls", "timeout": "#).contains("cut off"));
    }

    #[test]
    fn raw_line_breaks_in_strings() {
        let (value, fixes) = ok("{\"content\": \"a\nb\tc\"}");
        assert_eq!(value, json!({"content": "a\nb\tc"}));
        assert_eq!(fixes, vec![Fix::RawControl]);
    }

    #[test]
    fn not_json_at_all() {
        refused("print(1)");
        refused("{name: 1}");
        refused("{\"a\" 1}");
    }
}
