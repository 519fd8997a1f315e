//! In a run, the first `finish` that comes right after a failing command is sent back
//! once, quoting the command: small models "finish" with the tests still failing. A
//! second `finish` is taken; so is one when wright's own check passes (the command that
//! matters passes).

use wright_core::strategy::starts_a_run;
use wright_core::strategy::AtFinish;
use wright_core::strategy::Context;
use wright_core::strategy::Finish;
use wright_core::strategy::Strategy;
use wright_core::StoreError;
use wright_protocol::Event;
use wright_protocol::EventBody;

/// How the words it sends back begin (how the log shows it was said).
const OPENING: &str = "The last command failed (exit ";

#[derive(Debug)]
pub struct FinishAfterFailure {
    /// Off in a chat.
    on: bool,
    /// A `finish` was sent back for it in this run.
    asked: bool,
}

impl Default for FinishAfterFailure {
    fn default() -> Self {
        Self {
            on: true,
            asked: false,
        }
    }
}

impl FinishAfterFailure {
    /// In its place, saying nothing (a chat).
    pub fn off() -> Self {
        Self {
            on: false,
            ..Self::default()
        }
    }

    fn failed_command(events: &[Event]) -> Option<(i32, String)> {
        let (call_id, code) = events.iter().rev().find_map(|e| match &e.body {
            EventBody::Observation {
                tool,
                call_id,
                exit_code,
                ..
            } if tool != "finish" && tool != "think" => Some((call_id.clone(), *exit_code)),
            _ => None,
        })?;
        let code = code.filter(|c| *c != 0)?;
        let command = events.iter().rev().find_map(|e| match &e.body {
            EventBody::Action {
                call_id: id,
                arguments,
                ..
            } if *id == call_id => arguments["command"].as_str().map(str::to_string),
            _ => None,
        })?;
        Some((code, command))
    }
}

#[async_trait::async_trait]
impl Strategy for FinishAfterFailure {
    fn name(&self) -> &'static str {
        "finish-after-failure"
    }

    fn absorb(&mut self, event: &Event) {
        match &event.body {
            // The result of a `finish` (or of `finish` written as a command).
            EventBody::Observation {
                output,
                is_error: true,
                ..
            } => self.asked |= output.starts_with(OPENING),
            _ if starts_a_run(event) => self.asked = false,
            _ => {}
        }
    }

    async fn at_finish(
        &mut self,
        cx: &mut Context<'_>,
        finish: &Finish,
    ) -> Result<AtFinish, StoreError> {
        if !self.on || finish.check_passed || self.asked {
            return Ok(AtFinish::Continue);
        }
        let Some((code, command)) = Self::failed_command(cx.view().events()) else {
            return Ok(AtFinish::Continue);
        };
        self.asked = true;
        let shown: String = command.chars().take(200).collect();
        Ok(AtFinish::SendBack(format!(
            "{OPENING}{code}): {shown}. If the task needs it to pass, the task is not done: fix the cause and run it again. If the task is done anyway, call finish again."
        )))
    }
}
