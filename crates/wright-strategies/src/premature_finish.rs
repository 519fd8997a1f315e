//! A `finish` before anything was done is refused: small models "finish" with a plan they
//! never carried out. Anything the agent ran without error (but `think` and `finish`)
//! counts as done, and so does a version of the code wright tried and kept.

use std::collections::HashMap;
use wright_core::strategy::BeforeCall;
use wright_core::strategy::Call;
use wright_core::strategy::Strategy;
use wright_core::strategy::View;
use wright_protocol::CandidateOutcome;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;

/// What a `finish` before anything was done is told.
pub const REFUSAL: &str = "finish was called before anything was done: nothing has been run or changed yet. Work on the task with the tools first (run the tests, read the code, fix it), then call finish";

#[derive(Debug, Default)]
pub struct PrematureFinish {
    /// The agent's calls whose observation is not read yet: their tools, by call id.
    calls: HashMap<String, String>,
    /// Whether something was done.
    acted: bool,
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
                call_id, is_error, ..
            } => {
                if let Some(tool) = self.calls.remove(call_id) {
                    self.acted |= !is_error && !matches!(tool.as_str(), "think" | "finish");
                }
            }
            EventBody::Candidate(candidate) => {
                self.acted |= candidate.outcome == CandidateOutcome::Passed;
            }
            _ => {}
        }
    }

    fn before_call(&mut self, _view: &View<'_>, call: &Call<'_>) -> BeforeCall {
        match call.tool == "finish" && !self.acted {
            true => BeforeCall::Refuse(REFUSAL.to_string()),
            false => BeforeCall::Run,
        }
    }
}
