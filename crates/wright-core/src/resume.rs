//! Continuing a conversation from its log: after a stop, a limit, or a crash. The log is
//! the truth: the step count, the token totals and the mode come back from it, and an
//! action that was logged without its observation (wright died while it ran) is reported
//! to the model as interrupted, never silently run again; one that was waiting for the
//! user's confirmation is asked about again before anything else.

use crate::agent::Conversation;
use crate::store::EventLog;
use crate::store::StoreError;
use std::path::Path;
use wright_llm::Client;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::TornLine;
use wright_tools::Toolbox;

/// What resuming found and did, for the user.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResumeNotes {
    pub torn: Option<TornLine>,
    /// Tools whose call was cut off by the stop, now reported as interrupted.
    pub interrupted: Vec<String>,
    /// The state the conversation was in.
    pub last_state: Option<AgentState>,
    /// The action left waiting for the user's answer: asked about again first.
    pub awaiting: Option<crate::confirm::Pending>,
}

impl Conversation {
    pub fn resume(
        log_path: &Path,
        client: Client,
        tools: Toolbox,
    ) -> Result<(Self, ResumeNotes), StoreError> {
        let (log, torn) = EventLog::open(log_path)?;
        let mut conversation = Conversation::from_log(log, client, tools)?;
        let mut notes = ResumeNotes {
            torn,
            awaiting: conversation.pending().cloned(),
            ..ResumeNotes::default()
        };
        let events = conversation.events();
        notes.last_state = events.iter().rev().find_map(|e| match &e.body {
            EventBody::State { state, .. } => Some(*state),
            _ => None,
        });
        // Matched in order, since some servers reuse call ids from one step to the next.
        let mut pending: Vec<(String, String)> = Vec::new();
        for event in events {
            match &event.body {
                EventBody::Action { call_id, tool, .. } => {
                    pending.push((call_id.clone(), tool.clone()))
                }
                EventBody::Observation { call_id, .. } => {
                    if let Some(at) = pending.iter().position(|(id, _)| id == call_id) {
                        pending.remove(at);
                    }
                }
                _ => {}
            }
        }
        // The call waiting for an answer did not run: it is asked about again.
        let waiting = notes.awaiting.as_ref().map(|p| p.call_id.clone());
        for (call_id, tool) in pending {
            if Some(&call_id) == waiting.as_ref() {
                continue;
            }
            conversation.append_quietly(
                Source::Environment,
                EventBody::Observation {
                    call_id,
                    tool: tool.clone(),
                    output: "interrupted: wright stopped while this call ran, and it was not run again. Check what it did before repeating it.".into(),
                    is_error: true,
                    exit_code: None,
                },
            )?;
            notes.interrupted.push(tool);
        }
        Ok((conversation, notes))
    }
}
