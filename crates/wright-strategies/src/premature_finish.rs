//! A `finish` before anything was done is refused: small models "finish" with a plan they
//! never carried out. Anything the agent ran without error (but `think` and `finish`)
//! counts as done, and so does a version of the code wright tried and kept.
//!
//! What the refusal advises depends on the first look: when the repository's tests
//! already passed before any work, "fix it" is the wrong advice (the 1.5B, asked to add
//! an option, called `finish` three times saying the tests pass), so the refusal says the
//! passing tests do not show the task done and that the change is still to be made.

use std::collections::HashMap;
use wright_core::strategy::BeforeCall;
use wright_core::strategy::Call;
use wright_core::strategy::Strategy;
use wright_core::strategy::View;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;

/// What a `finish` before anything was done is told when the tests passed before the
/// work began (the task is a change to make, not a failure to fix).
pub const REFUSAL_TESTS_PASSED: &str = "finish was called before anything was done: nothing has been changed yet. The tests passed before you began, so they do not show the task done: the task asks for a change. View the file the task is about, make the change with the file_editor, then call finish";

/// What a `finish` before anything was done is told.
pub const REFUSAL: &str = "finish was called before anything was done: nothing has been run or changed yet. Work on the task with the tools first (run the tests, read the code, fix it), then call finish";

#[derive(Debug, Default)]
pub struct PrematureFinish {
    /// The agent's calls whose observation is not read yet: their tools, by call id.
    calls: HashMap<String, String>,
    /// Whether something was done.
    acted: bool,
    /// Whether wright's first look ran the tests and they passed.
    tests_passed_first: bool,
}

impl Strategy for PrematureFinish {
    fn name(&self) -> &'static str {
        "premature-finish"
    }

    fn absorb(&mut self, event: &Event) {
        match &event.body {
            EventBody::Action { call_id, tool, .. } if event.source == Source::Agent => {
                self.calls.insert(call_id.clone(), tool.clone());
            }
            EventBody::Observation {
                call_id, exit_code, ..
            } if event.source == Source::Environment
                && call_id == crate::first_look::FIRST_LOOK_CALL =>
            {
                self.tests_passed_first = *exit_code == Some(0);
            }
            EventBody::Observation {
                call_id, is_error, ..
            } => {
                if let Some(tool) = self.calls.remove(call_id) {
                    self.acted |= !is_error && !matches!(tool.as_str(), "think" | "finish");
                }
            }
            EventBody::Candidate(candidate) => {
                self.acted |= candidate.outcome.stays();
            }
            _ => {}
        }
    }

    fn before_call(&mut self, _view: &View<'_>, call: &Call<'_>) -> BeforeCall {
        if call.tool != "finish" || self.acted {
            return BeforeCall::Run;
        }
        let refusal = match self.tests_passed_first {
            true => REFUSAL_TESTS_PASSED,
            false => REFUSAL,
        };
        BeforeCall::Refuse(refusal.to_string())
    }
}
