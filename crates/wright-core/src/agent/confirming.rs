//! Asking the user before a risky action runs. A call the confirmation mode asks about
//! (and whose tool was not approved for good) puts the conversation in
//! `awaiting_confirmation` — a `state` event naming the call, written to disk before
//! anyone is asked — then the answer is logged (`confirmation`) before the call runs or
//! is answered as rejected, with the user's reason, as its observation. When nobody can
//! answer, or the run is cancelled while it waits, the run ends with the call still
//! waiting; the next run asks again (`settle_pending`), never runs it by itself.

use super::calls::Begun;
use super::types::run_kept;
use super::Conversation;
use super::Observer;
use super::Outcome;
use crate::confirm::Answer;
use crate::confirm::Pending;
use crate::store::StoreError;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use wright_protocol::AgentState;
use wright_protocol::ConfirmMode;
use wright_protocol::Decision;
use wright_protocol::EventBody;
use wright_protocol::Risk;
use wright_protocol::Source;
use wright_protocol::StopReason;
use wright_tools::ToolError;

/// What asking came to.
pub(super) enum Asked {
    Run,
    /// Not run: the observation the model gets.
    Rejected(String),
    /// The run ends with the call still waiting.
    Ended(Box<Outcome>),
}

impl Conversation {
    /// Asks before actions as `mode` says, from the next call on.
    pub fn set_confirm_mode(&mut self, mode: ConfirmMode) {
        self.confirmation.confirm = mode;
    }

    pub fn confirm_mode(&self) -> ConfirmMode {
        self.confirmation.confirm
    }

    /// Who answers when an action waits for confirmation.
    pub fn set_confirmer(&mut self, confirmer: std::sync::Arc<dyn crate::confirm::Confirmer>) {
        self.confirmation.confirmer = Some(confirmer);
    }

    /// The action an earlier run left waiting, which the next run asks about first.
    pub fn pending(&self) -> Option<&Pending> {
        self.confirmation.pending.as_ref()
    }

    /// The workspace's root, for judging the paths a call names.
    pub(super) fn workspace_root(&self) -> std::path::PathBuf {
        match &self.workspace {
            Some(workspace) => workspace.root().to_path_buf(),
            None => self
                .log
                .events()
                .iter()
                .find_map(|e| match &e.body {
                    EventBody::Start(start) => Some(start.workspace.clone().into()),
                    _ => None,
                })
                .unwrap_or_default(),
        }
    }

    /// Whether a call of `tool` (its own name) at `risk` waits for the user's answer.
    pub(super) fn asks_about(&self, tool: &str, risk: Risk) -> bool {
        self.confirmation.confirm.asks(tool, risk) && !self.confirmation.always.contains(tool)
    }

    /// Asks about a begun call when the mode says so; a rejected call is settled with
    /// the user's reason. Returns the outcome when the run must end with it waiting.
    pub(super) async fn confirm_call(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        begun: &mut Begun,
    ) -> Result<Option<Outcome>, StoreError> {
        let Some(tool) = begun.tool.as_ref().map(|t| t.name()) else {
            return Ok(None);
        };
        if begun.ready.is_none() || !self.asks_about(tool, begun.risk) {
            return Ok(None);
        }
        let Some(pending) = crate::confirm::pending_at(self.log.events(), begun.action_id) else {
            return Ok(None);
        };
        match self.ask(observer, cancel, &pending).await? {
            Asked::Run => Ok(None),
            Asked::Rejected(text) => {
                begun.ready = None;
                begun.settled = Some(Err(ToolError::Model(text)));
                Ok(None)
            }
            Asked::Ended(outcome) => Ok(Some(*outcome)),
        }
    }

    /// Asks again about the call an earlier run left waiting, then runs it or answers it
    /// as rejected; returns the outcome when the run ends here (nobody answered, or a
    /// call that ends the run).
    pub(super) async fn settle_pending(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        pending: Pending,
    ) -> Result<Option<Outcome>, StoreError> {
        let parsed = match &pending.arguments {
            Value::Object(_) => Ok(pending.arguments.clone()),
            other => Err(format!("the arguments could not be read: {other}")),
        };
        let mut begun = self
            .prepare_call(
                observer,
                cancel,
                super::calls::Logged {
                    name: pending.tool.clone(),
                    parsed,
                    call_id: pending.call_id.clone(),
                    action_id: pending.action_event,
                    risk: pending.risk,
                },
            )
            .await?;
        match self.ask(observer, cancel, &pending).await? {
            Asked::Run => {}
            Asked::Rejected(text) => {
                begun.ready = None;
                begun.settled = Some(Err(ToolError::Model(text)));
            }
            Asked::Ended(outcome) => return Ok(Some(*outcome)),
        }
        let result = match (&begun.tool, &begun.ready) {
            (Some(tool), Some(arguments)) => {
                let masker = self.log.masker().cloned();
                let (result, printed) =
                    run_kept(tool.as_ref(), arguments, cancel, observer, masker).await;
                begun.printed = printed;
                result
            }
            _ => begun.settled.clone(),
        };
        match self.end_call(observer, begun, result)? {
            None => Ok(None),
            Some((state, reason, summary)) => self.end(observer, state, reason, summary).map(Some),
        }
    }

    /// Logs that `pending` waits, asks, and logs the answer.
    pub(super) async fn ask(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        pending: &Pending,
    ) -> Result<Asked, StoreError> {
        let tool = self
            .tools
            .get(&pending.tool)
            .map_or(pending.tool.clone(), |t| t.name().to_string());
        let confirmer = self
            .confirmation
            .confirmer
            .clone()
            .filter(|c| c.can_answer());
        let Some(confirmer) = confirmer else {
            let stop = StopReason::NobodyToConfirm {
                tool: tool.clone(),
                risk: pending.risk,
            };
            self.awaiting(observer, pending, Some(stop.clone()))?;
            let outcome = self.outcome(AgentState::AwaitingConfirmation, stop, None)?;
            return Ok(Asked::Ended(Box::new(outcome)));
        };
        self.awaiting(observer, pending, None)?;
        // On disk before anyone is asked: a process killed while it waits leaves it
        // waiting, for the next run to ask again.
        self.log.sync_step().await?;
        self.log.wait_sync().await?;
        let answer = tokio::select! {
            answer = confirmer.ask(pending) => answer,
            _ = cancel.cancelled() => {
                let reason = self.cancel_reason();
                let outcome = self.end(observer, AgentState::Stopped, reason, None)?;
                return Ok(Asked::Ended(Box::new(outcome)));
            }
        };
        let Answer { decision, reason } = answer;
        let reason = reason.filter(|r| !r.trim().is_empty());
        self.append(
            observer,
            Source::User,
            EventBody::Confirmation {
                call_id: pending.call_id.clone(),
                tool: tool.clone(),
                decision,
                reason: reason.clone(),
            },
        )?;
        if decision == Decision::Always {
            self.confirmation.always.insert(tool);
        }
        self.append(observer, Source::Environment, EventBody::running(None))?;
        Ok(match decision.runs() {
            true => Asked::Run,
            false => Asked::Rejected(match reason {
                Some(reason) => format!(
                    "The user rejected this call, so it did not run. Their reason: {reason}"
                ),
                None => "The user rejected this call, so it did not run (they gave no reason). Do not try the same thing another way; go on without it, or finish and say what is left to do.".to_string(),
            }),
        })
    }

    fn awaiting(
        &mut self,
        observer: &mut dyn Observer,
        pending: &Pending,
        stop: Option<StopReason>,
    ) -> Result<(), StoreError> {
        self.append(
            observer,
            Source::Environment,
            EventBody::State {
                state: AgentState::AwaitingConfirmation,
                reason: stop.as_ref().map(ToString::to_string),
                stop,
                call_id: Some(pending.call_id.clone()),
                confirm: None,
            },
        )
    }
}
