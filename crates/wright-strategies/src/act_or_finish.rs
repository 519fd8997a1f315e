//! `run` mode: only `finish` ends the task. A reply without a tool call is sent back once
//! ("act through the tools, or finish"); a second in a row stops the run (`NoToolCall`).

use wright_core::strategy::starts_a_run;
use wright_core::strategy::Strategy;
use wright_core::strategy::Unanswered;
use wright_core::strategy::View;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::StopReason;

/// What the model is told when, in `run` mode, it replies without a tool call.
pub const NUDGE: &str = "You replied without a tool call. Nobody reads your replies during the task: act through the tools, or call finish with your summary if the task is done.";

#[derive(Debug)]
pub struct ActOrFinish {
    /// Off in a chat, where a plain answer ends the turn.
    on: bool,
    /// The last reply had no tool call and was sent back.
    told: bool,
}

impl Default for ActOrFinish {
    fn default() -> Self {
        Self {
            on: true,
            told: false,
        }
    }
}

impl ActOrFinish {
    /// In its place, saying nothing (a chat).
    pub fn off() -> Self {
        Self {
            on: false,
            ..Self::default()
        }
    }
}

impl Strategy for ActOrFinish {
    fn name(&self) -> &'static str {
        "act-or-finish"
    }

    fn absorb(&mut self, event: &Event) {
        match &event.body {
            EventBody::Message { text, .. } if event.source == Source::Environment => {
                if text == NUDGE {
                    self.told = true;
                } else if text.starts_with("Your tool call could not be read") {
                    // A reply with a call, if an unreadable one.
                    self.told = false;
                }
            }
            EventBody::Action { .. } if event.source == Source::Agent => self.told = false,
            _ if starts_a_run(event) => self.told = false,
            _ => {}
        }
    }

    fn without_call(&mut self, _view: &View<'_>, _text: &str) -> Unanswered {
        if !self.on {
            return Unanswered::Pass;
        }
        match self.told {
            true => Unanswered::End(StopReason::NoToolCall),
            false => Unanswered::SendBack(NUDGE.to_string()),
        }
    }
}
