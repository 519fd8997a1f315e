//! A conversation whose steps another agent takes (an external agent over ACP, see
//! `wright_acp::client`): no model is asked; the front end logs what the agent says and
//! hands over what it asks wright to do. What it guarantees is the loop's own: a call the
//! agent asks wright to make (read or write a file, run a command) goes through the same
//! path as the model's calls — logged as an action before it runs, rated, asked about
//! when the confirmation mode says so, hooked, its observation logged after — and a
//! permission the agent asks for its own tool goes through the same confirmation flow.

use super::Conversation;
use super::Observer;
use super::Outcome;
use crate::confirm::Pending;
use crate::store::StoreError;
use tokio_util::sync::CancellationToken;
use wright_llm::ToolCall;
use wright_protocol::AgentState;
use wright_protocol::Decision;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::StopReason;

/// What a call the agent asked for came to.
#[derive(Debug)]
pub enum Served {
    /// It ran (or was answered without running: rejected, blocked by a hook, bad
    /// arguments): its observation as logged.
    Observed {
        output: String,
        is_error: bool,
        exit_code: Option<i32>,
    },
    /// The run ended with it (nobody could confirm it, or the run was cancelled while it
    /// waited).
    Ended(Box<Outcome>),
}

/// What the person answered about a permission the agent asked for its own tool.
#[derive(Debug)]
pub enum Permitted {
    Decided(Decision),
    /// The run ended while it waited, or nobody could answer.
    Ended(Box<Outcome>),
}

impl Conversation {
    /// Opens an external agent's run: `message` (the task, a message going on) logged as
    /// the user's, then the run's `running` state with its confirmation mode.
    pub async fn begin_external(
        &mut self,
        observer: &mut dyn Observer,
        message: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Option<Outcome>, StoreError> {
        self.interrupt.user_cancel = Some(cancel.clone());
        if let Some(refused) = self.take_message(observer, message).await? {
            return Ok(Some(refused));
        }
        self.append(
            observer,
            Source::Environment,
            EventBody::running(Some(self.confirmation.confirm)),
        )?;
        Ok(None)
    }

    /// The next step of the external agent (its steps are what it reports, one turn of
    /// its output at a time).
    pub fn next_external_step(&mut self) -> u32 {
        self.step += 1;
        self.totals.steps = self.step;
        self.step
    }

    /// Logs what the agent said or reported (a message, its thoughts, a tool call of its
    /// own, its plan).
    pub fn log_external(
        &mut self,
        observer: &mut dyn Observer,
        source: Source,
        body: EventBody,
    ) -> Result<(), StoreError> {
        self.append(observer, source, body)
    }

    /// Runs a call the agent asked wright to make, as the loop runs a model's call.
    pub async fn serve_external(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        call: &ToolCall,
    ) -> Result<Served, StoreError> {
        let step = self.step.max(1);
        if let Some(outcome) = self.run_call(observer, cancel, step, call).await? {
            return Ok(Served::Ended(Box::new(outcome)));
        }
        self.log.sync_step().await?;
        let observed = self.log.events().iter().rev().find_map(|e| match &e.body {
            EventBody::Observation {
                call_id,
                output,
                is_error,
                exit_code,
                ..
            } if *call_id == call.id => Some(Served::Observed {
                output: output.clone(),
                is_error: *is_error,
                exit_code: *exit_code,
            }),
            _ => None,
        });
        Ok(observed.unwrap_or(Served::Observed {
            output: "wright logged no result for this call".into(),
            is_error: true,
            exit_code: None,
        }))
    }

    /// Asks the person about a tool call of the agent's own (logged before as its
    /// action, `action_event`), through the confirmation flow: waiting logged first,
    /// the answer logged before the agent is told.
    pub async fn permit_external(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        pending: &Pending,
    ) -> Result<Permitted, StoreError> {
        // As the conversation's mode says, as for wright's own calls.
        if !self.asks_about(&pending.tool, pending.risk) {
            return Ok(Permitted::Decided(Decision::Approved));
        }
        match self.ask(observer, cancel, pending).await? {
            super::confirming::Asked::Run => {
                let always = self.confirmation.always.contains(&pending.tool);
                Ok(Permitted::Decided(match always {
                    true => Decision::Always,
                    false => Decision::Approved,
                }))
            }
            super::confirming::Asked::Rejected(_) => Ok(Permitted::Decided(Decision::Rejected)),
            super::confirming::Asked::Ended(outcome) => Ok(Permitted::Ended(outcome)),
        }
    }

    /// The external agent that takes this conversation's steps, as its start names it.
    pub fn agent(&self) -> Option<&str> {
        self.log.events().iter().find_map(|e| match &e.body {
            EventBody::Start(start) => start.agent.as_deref(),
            _ => None,
        })
    }

    /// The id of the last event logged.
    pub fn last_external_event(&self) -> u64 {
        self.last_event_id()
    }

    /// Ends the external agent's run with `state` and `stop`, everything on disk.
    pub async fn end_external(
        &mut self,
        observer: &mut dyn Observer,
        state: AgentState,
        stop: StopReason,
        summary: Option<String>,
    ) -> Result<Outcome, StoreError> {
        let outcome = self.end(observer, state, stop, summary)?;
        self.settle_all_snapshots().await;
        self.log.sync_step().await?;
        self.log.wait_sync().await?;
        Ok(outcome)
    }

    /// Why the run stopped when it was cancelled (the user's reason, or the time budget).
    pub fn external_cancel_reason(&self) -> StopReason {
        self.cancel_reason()
    }
}
