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

/// A page of a log: the events after an id, at most a number of them.
#[derive(Debug, Clone, PartialEq)]
pub struct LogPage {
    pub events: Vec<Event>,
    /// Whether events follow the page.
    pub more: bool,
}

/// The events of the log at `path` whose id is greater than `after` (all without it), at
/// most `limit`: only those are parsed whole, the lines before are read for their id
/// alone, and reading stops after the page. A torn last line ends the log, as in
/// `parse_log`.
pub fn read_page(path: &Path, after: Option<u64>, limit: usize) -> Result<LogPage, LogError> {
    #[derive(serde::Deserialize)]
    struct Id {
        id: u64,
    }
    let text = std::fs::read_to_string(path).map_err(|source| LogError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let corrupt = |line: usize, message: String| LogError::Corrupt {
        path: path.display().to_string(),
        line,
        message,
    };
    let terminated = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    let mut events = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let torn = index + 1 == lines.len() && !terminated;
        let id = match serde_json::from_str::<Id>(line) {
            Ok(id) => id.id,
            Err(_) if torn => break,
            Err(err) => return Err(corrupt(index + 1, err.to_string())),
        };
        if after.is_some_and(|after| id <= after) {
            continue;
        }
        if events.len() == limit {
            return Ok(LogPage { events, more: true });
        }
        match serde_json::from_str::<Event>(line) {
            Ok(event) => events.push(event),
            Err(_) if torn => break,
            Err(err) => return Err(corrupt(index + 1, err.to_string())),
        }
    }
    Ok(LogPage {
        events,
        more: false,
    })
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
    fn a_page_is_what_follows_an_id_and_says_when_more_follow() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let line = |id: u64| GOOD.replace("\"id\":0", &format!("\"id\":{id}"));
        let text: String = (0..5).map(|id| line(id) + "\n").collect();
        std::fs::write(&path, format!("{text}{{\"id\":5,\"ts\"")).unwrap();
        let ids = |page: &LogPage| page.events.iter().map(|e| e.id).collect::<Vec<_>>();
        let first = read_page(&path, None, 2).unwrap();
        assert_eq!((ids(&first), first.more), (vec![0, 1], true));
        let next = read_page(&path, Some(1), 2).unwrap();
        assert_eq!((ids(&next), next.more), (vec![2, 3], true));
        // The torn last line ends the log.
        let last = read_page(&path, Some(3), 2).unwrap();
        assert_eq!((ids(&last), last.more), (vec![4], false));
        let none = read_page(&path, Some(4), 2).unwrap();
        assert_eq!((ids(&none), none.more), (vec![], false));
        std::fs::write(&path, format!("{}\nnot json\n{}\n", line(0), line(1))).unwrap();
        assert!(matches!(
            read_page(&path, Some(0), 5),
            Err(LogError::Corrupt { line: 2, .. })
        ));
    }

    #[test]
    fn a_line_read_back_is_written_again_byte_for_byte() {
        // A time in milliseconds as the loop measures it: its shortest decimal needs 17
        // digits, which serde_json's fast float parsing read one ulp off (a conversation
        // moved into the database then differed from its log file).
        let line = r#"{"id":3,"ts":"t","source":"environment","kind":"usage","step":1,"prompt_tokens":1259,"completion_tokens":10,"cached_tokens":629,"prefill_ms":11.220168000000001,"generation_ms":9.472186,"destination":"loopback"}"#;
        let parsed = parse_log(&format!("{line}\n")).unwrap();
        assert_eq!(parsed.events[0].to_line().unwrap(), format!("{line}\n"));
    }

    #[test]
    fn bad_middle_line_is_corruption() {
        let text = format!("{GOOD}\nnot json\n{GOOD}\n");
        assert_eq!(parse_log(&text).unwrap_err().0, 2);
    }
}
