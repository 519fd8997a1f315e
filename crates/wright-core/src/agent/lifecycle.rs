//! A conversation's life around its steps: rebuilt from its log (for resume), the
//! budgets that stop a run, how its state moves and how it ends, the files kept at each
//! step, and the runs another agent drives.
//!
//! How a run's state moves and how it ends: the state logged (with the words for people
//! and the typed reason for programs), the user's message added, and the outcome built,
//! its summary and review masked as the log is.
//!
//! Keeping the files of each step that may have changed them (for `fork --at`): the front
//! end's snapshot runs on a blocking thread while the next model request is in flight,
//! and is awaited before the next tool call runs and before the run ends.
//!
//! The ordering is what makes a snapshot the files of its step: it starts once the step's
//! last call has run and its observation is logged, so it sees everything the step wrote;
//! it is awaited before the next tool call runs (right after that call's action is logged,
//! before `finish`'s review too), so no tool writes while it reads the tree, and two never
//! run at once; and the run does not end (nor the working copy get committed) while one
//! is still reading. A process the agent left running in the background may still write
//! during one: that is the agent's own doing, and the next step's snapshot sees it.
//!
//! A conversation whose steps another agent takes (an external agent over ACP, see
//! `wright_acp::client`): no model is asked; the front end logs what the agent says and
//! hands over what it asks wright to do. What it guarantees is the loop's own: a call the
//! agent asks wright to make (read or write a file, run a command) goes through the same
//! path as the model's calls — logged as an action before it runs, rated, asked about
//! when the confirmation mode says so, hooked, its observation logged after — and a
//! permission the agent asks for its own tool goes through the same confirmation flow.

use super::Conversation;
use super::Limits;
use super::Observer;
use super::Outcome;
use crate::confirm::Pending;
use crate::store::EventLog;
use crate::store::StoreError;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_llm::Client;
use wright_llm::ToolCall;
use wright_protocol::AgentState;
use wright_protocol::Decision;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::StopReason;
use wright_protocol::ToolCalling;
use wright_tools::Toolbox;
impl Conversation {
    /// Rebuilds a conversation from an opened log (see `resume`).
    pub(crate) fn from_log(
        log: EventLog,
        client: Client,
        tools: Toolbox,
    ) -> Result<Self, StoreError> {
        let start = log
            .events()
            .iter()
            .find_map(|e| match &e.body {
                EventBody::Start(start) => Some(start.clone()),
                _ => None,
            })
            .ok_or_else(|| StoreError::NotResumable("the log has no start event".into()))?;
        if start.version > wright_protocol::LOG_FORMAT_VERSION {
            return Err(StoreError::NotResumable(format!(
                "the log is in format version {}, written by a newer wright; this one reads versions 1 to {}",
                start.version,
                wright_protocol::LOG_FORMAT_VERSION
            )));
        }
        let calling = match start.tool_calling {
            ToolCalling::Native => super::Calling::Native(start.tools.clone()),
            ToolCalling::Text => super::Calling::Text,
        };
        let mut conversation = Self::assemble(log, client, tools, calling);
        for event in conversation.log.events() {
            match &event.body {
                EventBody::Usage(usage) => {
                    conversation.step = conversation.step.max(usage.step);
                    conversation.totals.model_ms +=
                        usage.prefill_ms.unwrap_or(0.0) + usage.generation_ms.unwrap_or(0.0);
                    conversation.totals.prompt_tokens += usage.prompt_tokens;
                    conversation.totals.completion_tokens += usage.completion_tokens;
                    conversation.totals.cached_tokens += usage.cached_tokens.unwrap_or(0);
                    conversation.totals.prefill_ms += usage.prefill_ms.unwrap_or(0.0);
                    conversation.totals.generation_ms += usage.generation_ms.unwrap_or(0.0);
                    conversation.totals.cost += usage.cost.unwrap_or(0.0);
                }
                EventBody::Action { step, .. } => {
                    conversation.step = conversation.step.max(*step);
                }
                EventBody::Condensation(condensation) => {
                    conversation.totals.condensations += 1;
                    conversation.totals.prompt_tokens +=
                        condensation.summary_prompt_tokens.unwrap_or(0);
                    conversation.totals.completion_tokens +=
                        condensation.summary_completion_tokens.unwrap_or(0);
                }
                _ => {}
            }
        }
        // The tools approved for good, the last text that looked like instructions to
        // the agent, and the action left waiting for an answer.
        conversation.confirmation.always =
            crate::confirm::always_approved(conversation.log.events());
        conversation.teaching.read_instructions =
            conversation
                .log
                .events()
                .iter()
                .rev()
                .find_map(|e| match &e.body {
                    EventBody::Observation { tool, output, .. }
                        if !matches!(tool.as_str(), "think" | "finish") =>
                    {
                        crate::injection::instructions_in(output).map(|words| (e.id, words))
                    }
                    _ => None,
                });
        conversation.confirmation.pending = crate::confirm::pending_in(conversation.log.events());
        // A tool that keeps state (the plan) takes it up from the log.
        for tool in conversation.tools.tools() {
            tool.restore(conversation.log.events());
        }
        // What the conversation used before this process: `/cost` and the report count
        // it, as a conversation never interrupted would.
        conversation.totals.steps = conversation.step;
        Ok(conversation)
    }

    /// The reason the run must stop before another step, if a budget is spent.
    pub(super) fn budget_reached(
        &self,
        limits: &Limits,
        first_step: u32,
        started: std::time::Instant,
    ) -> Option<StopReason> {
        if self.step - first_step >= limits.max_steps {
            return Some(StopReason::MaxSteps {
                limit: limits.max_steps,
            });
        }
        let used = self.totals.prompt_tokens + self.totals.completion_tokens;
        if let Some(max) = limits.max_tokens.filter(|max| used >= *max) {
            return Some(StopReason::MaxTokens { limit: max, used });
        }
        if let Some(max) = limits.max_cost.filter(|max| self.totals.cost >= *max) {
            return Some(StopReason::MaxCost {
                limit: max,
                spent: self.totals.cost,
            });
        }
        if let Some(max) = limits.max_time.filter(|max| started.elapsed() >= *max) {
            return Some(StopReason::MaxTime {
                secs: Some(max.as_secs()),
            });
        }
        self.guards.iter().find_map(|guard| guard.stop_reason())
    }

    /// Why a cancelled step stopped (the user, or the time budget): the run's reason.
    pub(super) fn cancel_reason(&self) -> StopReason {
        match self.time_ran_out() {
            true => StopReason::MaxTime { secs: None },
            false => StopReason::Interrupted {
                why: self
                    .interrupt
                    .interrupt_reason
                    .lock()
                    .ok()
                    .and_then(|why| why.clone()),
            },
        }
    }

    /// The user's own cancellation of the run in progress (none outside a run).
    pub(crate) fn user_cancel_token(&self) -> CancellationToken {
        self.interrupt.user_cancel.clone().unwrap_or_default()
    }

    fn time_ran_out(&self) -> bool {
        matches!(&self.interrupt.user_cancel, Some(user) if !user.is_cancelled())
    }

    /// Why a cancelled step stopped, as a plain fact (told to the model too, which has
    /// no flags to raise).
    pub(crate) fn cancel_cause(&self) -> String {
        match self.time_ran_out() {
            true => "the time limit of this run was reached".to_string(),
            false => self
                .interrupt
                .interrupt_reason
                .lock()
                .ok()
                .and_then(|why| why.clone())
                .unwrap_or_else(|| "interrupted by the user".into()),
        }
    }
}

impl Conversation {
    pub(super) fn set_state(
        &mut self,
        observer: &mut dyn Observer,
        state: AgentState,
        stop: Option<StopReason>,
    ) -> Result<(), StoreError> {
        // The words for people and older readers, the value for programs.
        let reason = stop.as_ref().map(ToString::to_string);
        self.append(
            observer,
            Source::Environment,
            EventBody::State {
                state,
                reason,
                stop,
                call_id: None,
                confirm: None,
            },
        )
    }

    pub(super) fn end(
        &mut self,
        observer: &mut dyn Observer,
        state: AgentState,
        stop: StopReason,
        summary: Option<String>,
    ) -> Result<Outcome, StoreError> {
        self.set_state(observer, state, Some(stop.clone()))?;
        self.outcome(state, stop, summary)
    }

    /// What a run ends with, its state already logged.
    pub(super) fn outcome(
        &mut self,
        state: AgentState,
        stop: StopReason,
        summary: Option<String>,
    ) -> Result<Outcome, StoreError> {
        let mut outcome = Outcome {
            state,
            stop,
            review: None,
            summary,
            totals: self.totals.clone(),
            remedy: None,
            flags: self.teaching.flags.clone(),
            second_look: None,
        };
        self.add_to_outcome(&mut outcome);
        // The end report is the model's words and the review's quotes: masked as the log.
        if let Some(masker) = self.log.masker() {
            outcome.summary = outcome.summary.map(|text| masker.mask(&text));
            if let Some(review) = &outcome.review {
                outcome.review = Some(crate::store::masked(masker, review)?);
            }
        }
        Ok(outcome)
    }

    pub(super) fn interrupted(
        &mut self,
        observer: &mut dyn Observer,
    ) -> Result<Outcome, StoreError> {
        let reason = self.cancel_reason();
        self.end(observer, AgentState::Stopped, reason, None)
    }
}

/// Saves the files as they are now, for the step whose file-changing calls were logged
/// from event `first` to event `last` (the last one's observation). Called on a blocking
/// thread; what it could not do is for it to record (a fork then says so).
///
/// `take` runs before the next tool (it must see the files as the step left them), so it
/// should only decide and copy what it keeps; what can wait (a commit) may run after it
/// returns, and `settle` waits for all of it (at the end of a run, before the files are
/// handed over or another snapshot is asked for at once).
pub trait StepSnapshot: Send + Sync {
    fn take(&self, first: u64, last: u64);
    /// Waits until every step taken so far is recorded.
    fn settle(&self) {}
}

/// The snapshots of one conversation: who takes them, the step's file-changing events
/// so far, and the one still running.
#[derive(Default)]
pub(crate) struct Snapshots {
    taker: Option<Arc<dyn StepSnapshot>>,
    /// The first and last event of this step's calls that may have changed files.
    changed: Option<(u64, u64)>,
    in_flight: Option<tokio::task::JoinHandle<()>>,
}

impl Conversation {
    /// Keeps the files after each step that may have changed them, with `taker`.
    pub fn set_step_snapshot(&mut self, taker: Arc<dyn StepSnapshot>) {
        self.snapshots.taker = Some(taker);
    }

    /// Keeps the files as they are now, after the last event (the user changed them
    /// between turns: chat's /undo), and waits for it.
    pub async fn keep_files_now(&mut self) {
        let last = self.last_event_id();
        self.note_change(last, last);
        self.start_snapshot().await;
        self.settle_all_snapshots().await;
    }

    /// Waits for the snapshot in flight and for everything it left to finish (the commits
    /// of copied files): after it, every step taken is recorded.
    pub(super) async fn settle_all_snapshots(&mut self) {
        self.settle_snapshot().await;
        if let Some(taker) = self.snapshots.taker.clone() {
            let _ = tokio::task::spawn_blocking(move || taker.settle()).await;
        }
    }

    /// Notes that the call logged as `action` (its observation: `observation`) may have
    /// changed files.
    pub(super) fn note_change(&mut self, action: u64, observation: u64) {
        let first = self.snapshots.changed.map_or(action, |(first, _)| first);
        self.snapshots.changed = Some((first, observation));
    }

    /// The id of the last event logged.
    pub(super) fn last_event_id(&self) -> u64 {
        self.log.events().last().map_or(0, |e| e.id)
    }

    /// Starts the snapshot of the step that just ended, if it may have changed files.
    pub(super) async fn start_snapshot(&mut self) {
        let Some((first, last)) = self.snapshots.changed.take() else {
            return;
        };
        let Some(taker) = self.snapshots.taker.clone() else {
            return;
        };
        // Never two at once (every call awaits the last one already, so this is at once).
        self.settle_snapshot().await;
        self.snapshots.in_flight =
            Some(tokio::task::spawn_blocking(move || taker.take(first, last)));
    }

    /// Waits for the snapshot in flight, if any. Not cancellable: a snapshot is bounded by
    /// its own deadline, and must not read the tree while a tool writes it.
    pub(super) async fn settle_snapshot(&mut self) {
        if let Some(in_flight) = self.snapshots.in_flight.take() {
            let _ = in_flight.await;
        }
    }
}

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
