//! Confirming risky actions: who answers (`Confirmer`, given by the front end), what they
//! are asked about (`Pending`), and what the log says about it — the action left waiting
//! for an answer (a process killed while it waited, or a run that stopped because nobody
//! could answer), the tools approved for good, the mode the conversation last ran with.
//!
//! The guarantee: an action that waits for an answer is logged as waiting (a `state`
//! event naming it) before anyone is asked, the answer is logged before the action runs
//! or is answered as rejected, and an action left waiting is asked about again, never run
//! by itself.

use std::collections::BTreeSet;
use wright_protocol::AgentState;
use wright_protocol::ConfirmMode;
use wright_protocol::Decision;
use wright_protocol::Event;
use wright_protocol::EventBody;

// The waiting action and its answer are facts of the log, the protocol's: every front end
// reads them without the loop.
pub use wright_protocol::pending_at;
pub use wright_protocol::pending_in;
pub use wright_protocol::Answer;
pub use wright_protocol::Pending;

/// Who answers when an action waits for confirmation: the person at a terminal, a
/// server's client. Given to a conversation by its front end.
#[async_trait::async_trait]
pub trait Confirmer: Send + Sync {
    /// Whether someone can answer now. When nobody can (no terminal), the run stops
    /// with the action waiting, logged, for the next run to ask again.
    fn can_answer(&self) -> bool;
    /// Shows `pending` and waits for the answer. The loop drops this future when the run
    /// is cancelled: an implementation must then stop waiting.
    async fn ask(&self, pending: &Pending) -> Answer;
}

/// The tools the user approved for good in this conversation ("always").
pub fn always_approved(events: &[Event]) -> BTreeSet<String> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Confirmation {
                tool,
                decision: Decision::Always,
                ..
            } => Some(tool.clone()),
            _ => None,
        })
        .collect()
}

/// The confirmation mode the conversation's last run had, as its log says.
pub fn last_mode(events: &[Event]) -> Option<ConfirmMode> {
    events.iter().rev().find_map(|e| match &e.body {
        EventBody::State {
            state: AgentState::Running,
            confirm: Some(mode),
            ..
        } => Some(*mode),
        _ => None,
    })
}
