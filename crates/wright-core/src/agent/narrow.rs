//! One request held away from the shell. When the last two commands the agent ran both
//! failed, with nothing else done in between, a third command can only tell it again what
//! it has just read; small models do exactly that (the 1.5B re-ran a failing test it had
//! been shown, code and traceback, until its time ran out). So for the next request alone,
//! where a schema holds the reply (text mode under `--constrain`), the schema allows every
//! call but `terminal` and `finish`, and on the embedded engine `tool_choice` names the
//! other tools (its grammar allows only them): the model must read, search or change the
//! code. The prompt is untouched — neither is part of the cached prefix — and nothing is
//! logged: the decision is a function of the log, made again the same way on resume.

use super::*;

/// The tools the narrowed request does not allow.
const HELD_BACK: &[&str] = &["terminal", "finish"];

impl Conversation {
    /// The constraint for this step's request when it must be narrowed (see the module).
    pub(super) fn narrowed_constraint(&self) -> Option<wright_llm::constrain::ActiveConstraint> {
        if !after_repeated_failures(self.log.events()) {
            return None;
        }
        self.client.narrowed_constraint(HELD_BACK)
    }
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
