//! A workspace still being made when the first request goes out: a clone checked out in
//! the background while the model reads the prompt (which is made from the user's
//! repository, not from the workspace). The front end hands the conversation what that
//! waits for; the loop awaits it once, after the first reply arrives and before anything of
//! that reply runs — a tool call, a `finish`, a step's files kept — so nothing of the
//! agent's touches a half-made workspace. Its failure ends the run as failed, in its own
//! words; the user's cancellation while it waits stops the run as any cancellation does.

use super::Conversation;
use super::Observer;
use super::Outcome;
use crate::store::StoreError;
use std::future::Future;
use std::pin::Pin;
use tokio_util::sync::CancellationToken;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::StopReason;

/// What the workspace's making waits for: done, or why it failed (in a mutex, which
/// makes it `Sync` as the conversation must be; it is only ever taken whole).
pub(super) type Pending =
    std::sync::Mutex<Pin<Box<dyn Future<Output = Result<(), String>> + Send>>>;

impl Conversation {
    /// Sets what the workspace waits for before the agent may act in it (see the
    /// module's docs): awaited once, after the next reply arrives.
    pub fn wait_for_workspace(
        &mut self,
        ready: impl Future<Output = Result<(), String>> + Send + 'static,
    ) {
        self.workspace_ready = Some(std::sync::Mutex::new(Box::pin(ready)));
    }

    /// Waits for the workspace, if it is still being made: `Some` when the run ended
    /// there (it could not be made, or the user stopped the run).
    pub(super) async fn workspace_made(
        &mut self,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<Option<Outcome>, StoreError> {
        let Some(pending) = self.workspace_ready.take() else {
            return Ok(None);
        };
        let pending = pending.into_inner().unwrap_or_else(|p| p.into_inner());
        let made = tokio::select! {
            made = pending => made,
            () = cancel.cancelled() => return self.interrupted(observer).map(Some),
        };
        let Err(message) = made else {
            return Ok(None);
        };
        self.append(
            observer,
            Source::Environment,
            EventBody::Error {
                message: message.clone(),
            },
        )?;
        let stop = StopReason::ToolFailed {
            tool: StopReason::WORKSPACE.to_string(),
            message,
        };
        self.end(observer, AgentState::Failed, stop, None).map(Some)
    }
}
