//! The external agent's own session of a conversation (`[agents.NAME]`, over ACP): its
//! id as the agent answered `session/new`, and whether the agent said in `initialize`
//! that it can load a session again (`loadSession`). Kept in the conversation's
//! directory (`agent-session.json`, written by wright, never reachable from the
//! sandbox) so that `wright resume` can go on in the same session of the agent's with
//! `session/load` — or refuse, saying why, where the agent cannot.
//!
//! The id is the agent's words: it is only ever sent back to the same agent, never
//! followed, run or used as a path.

use std::path::Path;

/// The record's file in a conversation's directory.
const FILE: &str = "agent-session.json";

/// The longest session id kept: an agent's ids are short; a longer one is refused
/// rather than carried around.
const MAX_ID: usize = 1024;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AgentSession {
    /// The agent's name in the user's configuration.
    pub agent: String,
    /// The agent's id of its session (`session/new`'s answer).
    pub session_id: String,
    /// Whether the agent said it supports `session/load`.
    pub load_session: bool,
}

/// Why the record could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum AgentSessionError {
    #[error("the agent's session id is {0} bytes long; wright keeps ids of at most {MAX_ID}")]
    TooLong(usize),
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a record of an agent's session: {source}")]
    Malformed {
        path: String,
        source: serde_json::Error,
    },
}

impl AgentSession {
    /// Writes the record into the conversation directory `dir` (replacing one there: the
    /// session of the conversation's first run is the one kept going).
    pub fn write(&self, dir: &Path) -> Result<(), AgentSessionError> {
        if self.session_id.len() > MAX_ID {
            return Err(AgentSessionError::TooLong(self.session_id.len()));
        }
        let path = dir.join(FILE);
        let text = serde_json::to_string(self).map_err(|source| AgentSessionError::Malformed {
            path: path.display().to_string(),
            source,
        })?;
        // Whole or not at all: a resume never reads half a record.
        let partial = dir.join(format!("{FILE}.partial"));
        std::fs::write(&partial, text)
            .and_then(|()| std::fs::rename(&partial, &path))
            .map_err(|source| AgentSessionError::Write {
                path: path.display().to_string(),
                source,
            })
    }

    /// The record of the conversation in `dir`, if its agent's session was recorded.
    pub fn read(dir: &Path) -> Result<Option<Self>, AgentSessionError> {
        let path = dir.join(FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(AgentSessionError::Read {
                    path: path.display().to_string(),
                    source,
                })
            }
        };
        let record: Self =
            serde_json::from_str(&text).map_err(|source| AgentSessionError::Malformed {
                path: path.display().to_string(),
                source,
            })?;
        if record.session_id.len() > MAX_ID {
            return Err(AgentSessionError::TooLong(record.session_id.len()));
        }
        Ok(Some(record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_record_reads_back_as_written_and_none_when_absent() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(AgentSession::read(dir.path()).unwrap(), None);
        let record = AgentSession {
            agent: "other".into(),
            session_id: "s-1".into(),
            load_session: true,
        };
        record.write(dir.path()).unwrap();
        assert_eq!(AgentSession::read(dir.path()).unwrap(), Some(record));
        let long = AgentSession {
            agent: "other".into(),
            session_id: "x".repeat(MAX_ID + 1),
            load_session: true,
        };
        assert!(matches!(
            long.write(dir.path()),
            Err(AgentSessionError::TooLong(_))
        ));
    }
}
