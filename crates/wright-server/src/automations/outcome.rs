//! What a firing's conversation did, read from its log once it ended: the agent's
//! summary (for the pull request), the actions the unattended run refused (for the
//! firing's record), and the changed files that configure git or wright (which keep the
//! branch from being pushed).
//!
//! What it guarantees: everything here comes from the log wright wrote on the host (the
//! actions the model asked for, the confirmer's answers, the `changes` wright computed
//! from the handed-over branch), never from a file the agent wrote; a log that cannot be
//! read gives an empty account, and an unreadable `changes` keeps the branch unpushed.

use wright_protocol::ChangesOutcome;
use wright_protocol::Decision;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;

/// A conversation's log, read once.
pub struct Outcome {
    events: Vec<Event>,
}

/// A run of the test command, as the log recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRun {
    pub passed: bool,
    pub exit_code: Option<i32>,
    pub output: String,
}

/// The longest a refused action is shown in the firing's record.
const SHOWN: usize = 120;

impl Outcome {
    pub fn read(conversation: &str) -> Self {
        let events = wright_protocol::read_log(&crate::runs::log_path(conversation))
            .map(|parsed| parsed.events)
            .unwrap_or_default();
        Self { events }
    }

    /// The summary the agent gave with `finish` (else its last words).
    pub fn summary(&self) -> String {
        let finish = self.events.iter().rev().find_map(|e| match &e.body {
            EventBody::Action {
                tool, arguments, ..
            } if tool == "finish" => arguments["message"].as_str().map(str::to_string),
            _ => None,
        });
        finish
            .or_else(|| {
                self.events
                    .iter()
                    .rev()
                    .find_map(|e| match (&e.body, e.source) {
                        (EventBody::Message { text, .. }, Source::Agent) => Some(text.clone()),
                        _ => None,
                    })
            })
            .unwrap_or_default()
    }

    /// The last run of `command` in the terminal (as the agent typed it, spaces at its
    /// ends aside) and what it gave: the exit code wright recorded and its output.
    pub fn last_run(&self, command: &str) -> Option<TestRun> {
        let wanted = command.trim();
        let (at, call) =
            self.events
                .iter()
                .enumerate()
                .rev()
                .find_map(|(at, e)| match &e.body {
                    EventBody::Action {
                        tool,
                        arguments,
                        call_id,
                        ..
                    } if tool == "terminal"
                        && arguments["command"].as_str().map(str::trim) == Some(wanted) =>
                    {
                        Some((at, call_id))
                    }
                    _ => None,
                })?;
        self.events[at..].iter().find_map(|e| match &e.body {
            EventBody::Observation {
                call_id,
                output,
                is_error,
                exit_code,
                ..
            } if call_id == call => Some(TestRun {
                passed: *exit_code == Some(0) && !*is_error,
                exit_code: *exit_code,
                output: output.clone(),
            }),
            _ => None,
        })
    }

    /// The actions the run's confirmer refused, each as `tool: what (why it was asked
    /// about)`, in the order they were asked for.
    pub fn refused(&self) -> Vec<String> {
        self.events
            .iter()
            .enumerate()
            .filter_map(|(at, e)| match &e.body {
                EventBody::Confirmation {
                    call_id,
                    decision: Decision::Rejected,
                    ..
                } => Some((at, call_id)),
                _ => None,
            })
            .filter_map(|(at, refused)| {
                // The action asked about is the last of that call id before the answer
                // (a model may reuse call ids from step to step).
                self.events[..at].iter().rev().find_map(|e| match &e.body {
                    EventBody::Action {
                        call_id,
                        tool,
                        arguments,
                        risk_reason,
                        ..
                    } if call_id == refused => Some(shown(tool, arguments, risk_reason.as_deref())),
                    _ => None,
                })
            })
            .collect()
    }

    /// What the run left on its branch, by the log's last `changes`.
    pub fn left(&self) -> Left {
        let last = self.events.iter().rev().find_map(|e| match &e.body {
            EventBody::Changes(changes) => Some(changes),
            _ => None,
        });
        match last {
            Some(changes) if changes.outcome == ChangesOutcome::None => Left::Nothing,
            Some(changes)
                if changes.outcome == ChangesOutcome::Branch && changes.branch.is_some() =>
            {
                Left::Branch {
                    configuring: changes.configuring.clone(),
                }
            }
            _ => Left::Unknown,
        }
    }
}

/// What a run left, as its log says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Left {
    /// A branch; `configuring`: its changed files that configure git, a hook manager or
    /// wright (`changes.configuring`).
    Branch { configuring: Vec<String> },
    /// No change at all.
    Nothing,
    /// The log says neither (no `changes`, or not a branch).
    Unknown,
}

/// One action as one short line: its command or path, and why it was asked about.
fn shown(tool: &str, arguments: &serde_json::Value, why: Option<&str>) -> String {
    // A command line, an edit and its file, an address: what the call would have done.
    let part = |key: &str| arguments[key].as_str();
    let what = match (part("command"), part("path").or(part("url"))) {
        (Some(command), Some(path)) => format!("{command} {path}"),
        (Some(text), None) | (None, Some(text)) => text.to_string(),
        (None, None) => arguments.to_string(),
    };
    let mut what: String = what
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if what.chars().count() > SHOWN {
        what = what.chars().take(SHOWN).collect::<String>() + "…";
    }
    match why {
        Some(why) => format!("{tool}: {what} ({why})"),
        None => format!("{tool}: {what}"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn event(id: u64, source: Source, body: EventBody) -> Event {
        Event::new(id, source, body)
    }

    #[test]
    fn refused_actions_are_named_with_why() {
        let outcome = Outcome {
            events: vec![
                event(
                    0,
                    Source::Agent,
                    EventBody::Action {
                        step: 1,
                        call_id: "a".into(),
                        tool: "terminal".into(),
                        arguments: json!({"command": "curl -s http://evil/\nx"}),
                        risk: Some(wright_protocol::Risk::High),
                        risk_reason: Some("curl: needs the network".into()),
                    },
                ),
                event(
                    1,
                    Source::User,
                    EventBody::Confirmation {
                        call_id: "a".into(),
                        tool: "terminal".into(),
                        decision: Decision::Rejected,
                        reason: None,
                    },
                ),
                event(
                    2,
                    Source::Agent,
                    EventBody::Action {
                        step: 2,
                        call_id: "a".into(),
                        tool: "file_editor".into(),
                        arguments: json!({"command": "create", "path": ".wright/x"}),
                        risk: None,
                        risk_reason: None,
                    },
                ),
                event(
                    3,
                    Source::User,
                    EventBody::Confirmation {
                        call_id: "a".into(),
                        tool: "file_editor".into(),
                        decision: Decision::Rejected,
                        reason: None,
                    },
                ),
            ],
        };
        assert_eq!(
            outcome.refused(),
            vec![
                "terminal: curl -s http://evil/ x (curl: needs the network)".to_string(),
                "file_editor: create .wright/x".to_string()
            ]
        );
        assert_eq!(outcome.left(), Left::Unknown);
        assert_eq!(Outcome { events: vec![] }.summary(), "");
        let changes = |line: &str| Outcome {
            events: vec![serde_json::from_str(line).unwrap()],
        };
        let at =
            r#""id":1,"ts":"2026-01-01T00:00:00.000Z","source":"environment","kind":"changes""#;
        assert_eq!(
            changes(&format!(r#"{{{at},"outcome":"none"}}"#)).left(),
            Left::Nothing
        );
        assert_eq!(
            changes(&format!(
                r#"{{{at},"outcome":"branch","branch":"wright/x","configuring":[".wright/automations.toml"]}}"#
            ))
            .left(),
            Left::Branch {
                configuring: vec![".wright/automations.toml".into()]
            }
        );
    }
}
