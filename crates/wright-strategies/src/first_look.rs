//! The first look: before the model's first step, wright itself runs the project's test
//! command (the one the workspace map found) in the sandbox, so the first thing a small
//! model reads is what fails and where, instead of guessing paths. It is logged as an
//! action and observation of the environment (never of the agent: it does not count as
//! the agent having acted, nor towards a loop), and rendered into the first user message,
//! so the prefix every later request extends is fixed before step 1. Its command is run
//! again the same way later (`Context::run_in_root`: from the workspace's root, in a bash
//! of its own) by the versions tried and by the check of the work (`Retest`).
//!
//! When it fails, what follows it, in this order: versions of the failing function asked
//! for and tried (`candidates`, `--candidates`), and, unless one passed, the model asked
//! apart which line causes the failure (`reading`, `--reading`).
//!
//! Guarantees: every decision is an event of the log, and whether the first look was
//! made is a fold over it: a resumed or forked conversation never looks again, asks
//! nothing again, and renders what was asked from the log. Versions a killed wright left
//! in place are put back when the conversation next runs (see `version_try`).

mod candidates;
mod reading;
pub(crate) mod version_try;

use serde_json::json;
use std::time::Instant;
use wright_core::strategy::Context;
use wright_core::strategy::RunStart;
use wright_core::strategy::Strategy;
use wright_core::StoreError;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_tools::ToolError;

/// The call id of the first look, distinct from every id a model or wright gives a call.
pub const FIRST_LOOK_CALL: &str = "first-look";
/// The first look gets at most this long: a slow suite must not eat the run's time.
const FIRST_LOOK_TIMEOUT_SECS: u64 = 60;

/// The first look and what follows it, as the front end set them (see `crate::Help`).
#[derive(Debug, Default)]
pub struct FirstLook {
    /// The command to run before the first step.
    command: Option<String>,
    /// What follows a failing look.
    after: AfterFailure,
    /// The log holds a first look already (a fold over it).
    looked: bool,
}

/// What follows a first look that failed, as the front end set it.
#[derive(Debug, Default, Clone, Copy)]
pub struct AfterFailure {
    /// The model is asked apart which line causes the failure (see `reading`).
    pub reading: bool,
    /// Versions of the failing function are asked for and tried (see `candidates`).
    pub candidates: bool,
}

impl FirstLook {
    pub const NAME: &'static str = "first-look";

    /// Runs `command` before the first step of the next run, unless the log holds a first
    /// look already.
    pub fn look(&mut self, command: String) {
        self.command = Some(command);
    }

    /// What follows a failing first look.
    pub fn after_failure(&mut self) -> &mut AfterFailure {
        &mut self.after
    }

    /// Logs the first look, runs it, and what follows a failure. A cancelled look is
    /// logged as such and the run goes on to its own end.
    async fn run(
        &self,
        cx: &mut Context<'_>,
        command: &str,
        run: &RunStart,
    ) -> Result<(), StoreError> {
        let Some(terminal) = cx.view().tools().get("terminal").cloned() else {
            return Ok(());
        };
        let arguments = json!({
            "command": command,
            "timeout": FIRST_LOOK_TIMEOUT_SECS,
        });
        cx.log(
            Source::Environment,
            EventBody::Action {
                step: 0,
                call_id: FIRST_LOOK_CALL.to_string(),
                tool: terminal.name().to_string(),
                arguments: arguments.clone(),
                // wright's own command, run before the model's first step: never asked.
                risk: None,
                risk_reason: None,
            },
        )?;
        let (output, is_error, exit_code) = match cx.run_tool(terminal.as_ref(), &arguments).await {
            Some(Ok(output)) => (output.text, output.is_error, output.exit_code),
            Some(Err(ToolError::Model(message) | ToolError::Fatal(message))) => {
                (message, true, None)
            }
            None => (
                format!("This call did not finish: {}.", cx.cancel_cause()),
                true,
                None,
            ),
        };
        let failed = exit_code.is_some_and(|code| code != 0);
        cx.log(
            Source::Environment,
            EventBody::Observation {
                call_id: FIRST_LOOK_CALL.to_string(),
                tool: terminal.name().to_string(),
                output: output.clone(),
                is_error,
                exit_code,
            },
        )?;
        // Versions stop being tried at half of `--max-time` after the run started, so the
        // steps keep the other half (the 1.5B's four versions of a Rust stub, each
        // compiled and tested, once took the whole 150 s before step 1).
        let until: Option<Instant> = run.max_time.map(|max_time| run.started + max_time / 2);
        // A version checked to pass says more than a reading: then none is asked for.
        let passed = failed
            && self.after.candidates
            && candidates::try_versions(cx, FIRST_LOOK_CALL, &output, command, until).await?;
        if failed && !passed && self.after.reading {
            reading::read_failure(cx, FIRST_LOOK_CALL, &output, command).await?;
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Strategy for FirstLook {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn absorb(&mut self, event: &Event) {
        if let EventBody::Action { call_id, .. } = &event.body {
            self.looked |= event.source == Source::Environment && call_id == FIRST_LOOK_CALL;
        }
    }

    async fn before_first_step(
        &mut self,
        cx: &mut Context<'_>,
        run: &RunStart,
    ) -> Result<(), StoreError> {
        // Versions a killed wright left in place, unlogged: put back first.
        version_try::put_back_unsettled(cx).await?;
        match &self.command {
            Some(command) if !self.looked => {
                let command = command.clone();
                self.run(cx, &command, run).await
            }
            _ => Ok(()),
        }
    }
}
