//! An action waiting for the user's answer (`Pending`), the answer (`Answer`), and where
//! a log leaves one waiting: facts of the log, so every front end can read and answer
//! them without the loop. An action is waiting when its `state` event
//! (`awaiting_confirmation`) names it with neither an answer nor an observation after.

use crate::AgentState;
use crate::Decision;
use crate::Event;
use crate::EventBody;
use crate::Flag;
use crate::Risk;
use serde_json::Value;

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
