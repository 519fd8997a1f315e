//! Stop when the work is done (`[assist]` piece `stop-when-done`): once wright kept a
//! version with which the check passes (a `passed` candidate, asked apart before the
//! first step), the run ends in at most one more model call. That request allows only
//! `finish` where a constraint holds the reply (the schema, or the embedded engine's
//! `tool_choice`), and any other call the model makes is taken as `finish` (its result
//! says so), so the summary still goes through `finish` — wright's check, the review,
//! the `Stop` hooks and `--review` all apply. The 1.5B, handed a passing version, spent
//! four more steps (~120 s of 169 s) trying to edit a line of the test file before it
//! finished.
//!
//! Further work stays possible where someone asks for it: a `finish` sent back (by a
//! hook, the review, the reviewer), a check that fails again, or a new message of the
//! user ends the latch, and the model works as before.
//!
//! Guarantees: nothing is kept but a fold over the log (a passing version kept, and what
//! came after it), so a resumed or forked conversation decides the same; the reroute is
//! said in the call's result, which the log holds.

use serde_json::json;
use wright_core::strategy::Call;
use wright_core::strategy::Rerouted;
use wright_core::strategy::Strategy;
use wright_core::strategy::View;
use wright_llm::constrain::ActiveConstraint;
use wright_protocol::CandidateOutcome;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;

/// Said before the result of a call taken as `finish`.
pub const TAKEN_AS_FINISH: &str = "[The work is done: wright's check passes with the version wright kept, so this call was taken as finish.]";

#[derive(Debug)]
pub struct WorkDone {
    on: bool,
    /// A version wright kept passes, and nothing since asked for more.
    done: bool,
}

impl Default for WorkDone {
    fn default() -> Self {
        Self {
            on: true,
            done: false,
        }
    }
}

impl WorkDone {
    pub const NAME: &'static str = "stop-when-done";

    /// In its place, deciding nothing.
    pub fn off() -> Self {
        Self {
            on: false,
            ..Self::default()
        }
    }

    fn holds(&self) -> bool {
        self.on && self.done
    }
}

impl Strategy for WorkDone {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn absorb(&mut self, event: &Event) {
        match &event.body {
            EventBody::Candidate(candidate) if candidate.outcome == CandidateOutcome::Passed => {
                self.done = true;
            }
            EventBody::Check(check) if !check.passed() => self.done = false,
            // A `finish` sent back: someone asked for more.
            EventBody::Observation { tool, is_error, .. } if tool == "finish" && *is_error => {
                self.done = false;
            }
            EventBody::Message { .. } if event.source == Source::User => self.done = false,
            _ => {}
        }
    }

    fn shape_request(&mut self, view: &View<'_>) -> Option<ActiveConstraint> {
        if !self.holds() {
            return None;
        }
        let others: Vec<&str> = view
            .tools()
            .names()
            .into_iter()
            .filter(|name| *name != "finish")
            .collect();
        view.client().narrowed_constraint(&others)
    }

    fn reroute(&mut self, view: &View<'_>, call: &Call<'_>) -> Option<Rerouted> {
        if !self.holds() || call.tool == "finish" {
            return None;
        }
        let finish = view.tools().get("finish")?.clone();
        Some(Rerouted {
            tool: finish,
            arguments: json!({"message": ""}),
            note: TAKEN_AS_FINISH.to_string(),
        })
    }
}
