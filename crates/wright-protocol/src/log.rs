//! Reading a JSONL event log back. A log written by a process that was killed may end in a
//! torn line: that is reported, never fatal, and never hides the events before it.

use crate::Event;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("cannot read event log {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("event log {path}, line {line}: {message}")]
    Corrupt {
        path: String,
        line: usize,
        message: String,
    },
}

/// The last line of a log that is incomplete (no newline) and does not parse.
#[derive(Debug, Clone, PartialEq)]
pub struct TornLine {
    pub line: usize,
    pub bytes: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLog {
    pub events: Vec<Event>,
    pub torn: Option<TornLine>,
}

pub fn read_log(path: &Path) -> Result<ParsedLog, LogError> {
    let text = std::fs::read_to_string(path).map_err(|source| LogError::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse_log(&text).map_err(|(line, message)| LogError::Corrupt {
        path: path.display().to_string(),
        line,
        message,
    })
}

/// Parses log text. A bad line in the middle is corruption (an error with its line
/// number); a bad *unterminated* last line is a torn write and is returned as `torn`.
pub fn parse_log(text: &str) -> Result<ParsedLog, (usize, String)> {
    let mut events = Vec::new();
    let mut torn = None;
    let terminated = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Event>(line) {
            Ok(event) => events.push(event),
            Err(err) => {
                let is_last = index + 1 == lines.len();
                if is_last && !terminated {
                    torn = Some(TornLine {
                        line: index + 1,
                        bytes: line.len(),
                    });
                } else {
                    return Err((index + 1, err.to_string()));
                }
            }
        }
    }
    Ok(ParsedLog { events, torn })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"id":0,"ts":"t","source":"user","kind":"message","text":"hi"}"#;

    #[test]
    fn torn_last_line_is_reported_not_fatal() {
        let text = format!("{GOOD}\n{{\"id\":1,\"ts\":\"t\",\"sou");
        let parsed = parse_log(&text).unwrap();
        assert_eq!(parsed.events.len(), 1);
        assert_eq!(parsed.torn, Some(TornLine { line: 2, bytes: 21 }));
    }

    #[test]
    fn bad_middle_line_is_corruption() {
        let text = format!("{GOOD}\nnot json\n{GOOD}\n");
        assert_eq!(parse_log(&text).unwrap_err().0, 2);
    }
}
