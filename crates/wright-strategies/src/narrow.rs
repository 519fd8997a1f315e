//! One request held away from the shell. When the last two commands the agent ran both
//! failed, with nothing else done in between, a third command can only tell it again what
//! it has just read; small models do exactly that (the 1.5B re-ran a failing test it had
//! been shown, code and traceback, until its time ran out). So for the next request alone,
//! where a schema holds the reply (text mode under `--constrain`), the schema allows every
//! call but `terminal` and `finish`, and on the embedded engine `tool_choice` names the
//! other tools (its grammar allows only them): the model must read, search or change the
//! code.
//!
//! Likewise when the agent's last two calls were the same call (tool and arguments) and
//! both came back as errors: the next request alone does not allow that tool (the 1.5B
//! made the right edit, then sent the same `str_replace` five times, told each time it
//! was done, until its time ran out). The prompt is untouched — neither is part of the
//! cached prefix — and nothing is logged: the decision is a function of the log, made
//! again the same way on resume.

use wright_core::strategy::Strategy;
use wright_core::strategy::View;
use wright_llm::constrain::ActiveConstraint;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;

/// The tools the narrowed request does not allow.
const HELD_BACK: &[&str] = &["terminal", "finish"];

/// The request after two failed commands, or the same failing call twice, narrowed.
#[derive(Debug, Default)]
pub struct Narrowing;

impl Strategy for Narrowing {
    fn name(&self) -> &'static str {
        "narrowing"
    }

    fn shape_request(&mut self, view: &View<'_>) -> Option<ActiveConstraint> {
        let events = view.events();
        if after_repeated_failures(events) {
            return view.client().narrowed_constraint(HELD_BACK);
        }
        let repeated = repeated_failing_call(events)?;
        view.client().narrowed_constraint(&[repeated.as_str()])
    }
}

/// The tool of the agent's last two calls when they were the same call and both came back
/// as errors, with no message from the user after or between them.
fn repeated_failing_call(events: &[Event]) -> Option<String> {
    let mut seen: Vec<(&str, &serde_json::Value)> = Vec::new();
    for (at, event) in events.iter().enumerate().rev() {
        match &event.body {
            EventBody::Observation {
                call_id, is_error, ..
            } => {
                if !is_error {
                    return None;
                }
                let call = events[..at].iter().rev().find_map(|e| match &e.body {
                    EventBody::Action {
                        call_id: id,
                        tool,
                        arguments,
                        ..
                    } if id == call_id && e.source == Source::Agent => {
                        Some((tool.as_str(), arguments))
                    }
                    _ => None,
                })?;
                seen.push(call);
                if seen.len() == 2 {
                    return (seen[0] == seen[1]).then(|| seen[0].0.to_string());
                }
            }
            EventBody::Message { .. } if event.source == Source::User => return None,
            _ => {}
        }
    }
    None
}

/// Whether the last two tool results are failed shell commands (a non-zero exit code),
/// with no other result and no message from the user after or between them.
fn after_repeated_failures(events: &[Event]) -> bool {
    let mut failures = 0;
    for event in events.iter().rev() {
        match &event.body {
            EventBody::Observation {
                tool, exit_code, ..
            } => {
                let failed = tool == "terminal" && matches!(exit_code, Some(code) if *code != 0);
                if !failed {
                    return false;
                }
                failures += 1;
                if failures == 2 {
                    return true;
                }
            }
            EventBody::Message { .. } if event.source == Source::User => return false,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(id: u64, source: Source, body: EventBody) -> Event {
        Event {
            id,
            ts: String::new(),
            source,
            body,
        }
    }

    fn ran(id: u64, tool: &str, exit_code: Option<i32>) -> Event {
        event(
            id,
            Source::Environment,
            EventBody::Observation {
                call_id: format!("c{id}"),
                tool: tool.into(),
                output: String::new(),
                is_error: false,
                exit_code,
            },
        )
    }

    fn user(id: u64) -> Event {
        event(
            id,
            Source::User,
            EventBody::Message {
                text: "go on".into(),
                step: None,
                reasoning: None,
                raw: None,
            },
        )
    }

    fn action(id: u64) -> Event {
        event(
            id,
            Source::Agent,
            EventBody::Action {
                step: 1,
                call_id: format!("c{id}"),
                tool: "terminal".into(),
                arguments: json!({"command": "make test"}),
                risk: None,
                risk_reason: None,
            },
        )
    }

    #[test]
    fn two_failed_commands_in_a_row_narrow_the_next_request() {
        let events = [user(0), action(1), ran(2, "terminal", Some(1)), action(3)];
        assert!(!after_repeated_failures(&events));
        let events = [
            user(0),
            action(1),
            ran(2, "terminal", Some(1)),
            action(3),
            ran(4, "terminal", Some(2)),
        ];
        assert!(after_repeated_failures(&events));
    }

    fn failed_edit(id: u64, old: &str) -> [Event; 2] {
        let call_id = format!("e{id}");
        [
            event(
                id,
                Source::Agent,
                EventBody::Action {
                    step: 1,
                    call_id: call_id.clone(),
                    tool: "file_editor".into(),
                    arguments: json!({"command": "str_replace", "path": "a.py", "old_str": old, "new_str": "y"}),
                    risk: None,
                    risk_reason: None,
                },
            ),
            event(
                id + 1,
                Source::Environment,
                EventBody::Observation {
                    call_id,
                    tool: "file_editor".into(),
                    output: "old_str was not found".into(),
                    is_error: true,
                    exit_code: None,
                },
            ),
        ]
    }

    #[test]
    fn the_same_call_failing_twice_holds_its_tool_back_once() {
        let [a1, o1] = failed_edit(1, "x");
        let [a2, o2] = failed_edit(3, "x");
        let events = [user(0), a1.clone(), o1.clone(), a2.clone(), o2.clone()];
        assert_eq!(repeated_failing_call(&events), Some("file_editor".into()));
        // Different arguments, one failure only, a success or the user after: not held.
        let [b2, p2] = failed_edit(3, "z");
        assert_eq!(
            repeated_failing_call(&[a1.clone(), o1.clone(), b2, p2]),
            None
        );
        assert_eq!(
            repeated_failing_call(&[user(0), a2.clone(), o2.clone()]),
            None
        );
        assert_eq!(
            repeated_failing_call(&[a1.clone(), o1.clone(), a2.clone(), o2.clone(), user(5)]),
            None
        );
        assert_eq!(
            repeated_failing_call(&[a1, o1, a2, o2, ran(5, "file_editor", None)]),
            None
        );
    }

    #[test]
    fn a_success_a_view_or_a_new_message_between_does_not() {
        for between in [
            ran(3, "terminal", Some(0)),
            ran(3, "file_editor", None),
            ran(3, "terminal", None),
            user(3),
        ] {
            let events = [
                ran(2, "terminal", Some(1)),
                between.clone(),
                ran(4, "terminal", Some(1)),
            ];
            assert!(!after_repeated_failures(&events), "{between:?}");
        }
    }
}
