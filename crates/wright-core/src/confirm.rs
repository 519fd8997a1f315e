//! Confirming risky actions: who answers (`Confirmer`, given by the front end), what they
//! are asked about (`Pending`), and what the log says about it — the action left waiting
//! for an answer (a process killed while it waited, or a run that stopped because nobody
//! could answer), the tools approved for good, the mode the conversation last ran with.
//!
//! The guarantee: an action that waits for an answer is logged as waiting (a `state`
//! event naming it) before anyone is asked, the answer is logged before the action runs
//! or is answered as rejected, and an action left waiting is asked about again, never run
//! by itself.

use serde_json::Value;
use std::collections::BTreeSet;
use wright_protocol::AgentState;
use wright_protocol::ConfirmMode;
use wright_protocol::Decision;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Flag;
use wright_protocol::Risk;

/// An action waiting for the user's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub call_id: String,
    pub tool: String,
    /// The arguments as the model wrote them (as logged).
    pub arguments: Value,
    pub risk: Risk,
    /// Why it is that risky, in words.
    pub reason: String,
    /// What wright flagged about it (a possible prompt injection).
    pub flag: Option<Flag>,
    /// The id of its `action` event.
    pub action_event: u64,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub decision: Decision,
    /// Why (a rejection's reason is told to the model).
    pub reason: Option<String>,
}

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

/// The action a log leaves waiting for an answer: one whose `state` event
/// (`awaiting_confirmation`) names it, with neither an answer nor an observation after.
pub fn pending_in(events: &[Event]) -> Option<Pending> {
    let waiting = events.iter().rev().find_map(|e| match &e.body {
        EventBody::State {
            state: AgentState::AwaitingConfirmation,
            call_id: Some(call_id),
            ..
        } => Some((e.id, call_id.clone())),
        _ => None,
    })?;
    let (asked_at, call_id) = waiting;
    let answered = events
        .iter()
        .filter(|e| e.id > asked_at)
        .any(|e| match &e.body {
            EventBody::Confirmation { call_id: id, .. }
            | EventBody::Observation { call_id: id, .. } => *id == call_id,
            _ => false,
        });
    if answered {
        return None;
    }
    let action = events.iter().rev().find(|e| {
        e.id < asked_at
            && matches!(&e.body, EventBody::Action { call_id: id, .. } if *id == call_id)
    })?;
    pending_at(events, action.id)
}

/// The call of the `action` event `action_event`, as the user is asked about it (its
/// arguments as logged: secrets masked).
pub fn pending_at(events: &[Event], action_event: u64) -> Option<Pending> {
    let event = events.iter().find(|e| e.id == action_event)?;
    let EventBody::Action {
        call_id,
        tool,
        arguments,
        risk,
        risk_reason,
        ..
    } = &event.body
    else {
        return None;
    };
    // Logged right after its action (ids may repeat from one step to the next).
    let flag = events
        .iter()
        .find(|e| e.id == action_event + 1)
        .and_then(|e| match &e.body {
            EventBody::Flagged { call_id: id, flag } if id == call_id => Some(flag.clone()),
            _ => None,
        });
    Some(Pending {
        call_id: call_id.clone(),
        tool: tool.clone(),
        arguments: arguments.clone(),
        risk: risk.unwrap_or(Risk::Unknown),
        reason: risk_reason.clone().unwrap_or_default(),
        flag,
        action_event,
    })
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
