//! The sessions an editor opened on this connection, and the one prompt each may be
//! running. A session's id is its conversation's (what `wright ls`, `wright show` and
//! `wright apply` take); its log exists from its first prompt on. A cancel stops the
//! running prompt after the step in flight is logged, with the reason the log keeps.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// The reason a cancelled run logs.
pub(crate) const CANCELLED: &str = "cancelled from the editor (session/cancel)";
/// The reason logged when the editor closes the connection during a run.
pub(crate) const CLOSED: &str = "stopped: the editor closed the connection";

/// Why a prompt cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    #[error(
        "no session {0} on this connection: create it (session/new) or load it (session/load)"
    )]
    Unknown(String),
    #[error("session {0} is running a prompt; cancel it (session/cancel) or wait for its answer")]
    Busy(String),
}

#[derive(Default)]
pub(crate) struct Sessions(Mutex<HashMap<String, Entry>>);

struct Entry {
    workspace: PathBuf,
    running: Option<Running>,
}

/// A prompt being run.
struct Running {
    cancel: CancellationToken,
    /// The conversation's interrupt reason, once it exists.
    reason: Option<Arc<Mutex<Option<String>>>>,
    /// Why it was stopped, once it was.
    stopped_by: Option<&'static str>,
}

impl Running {
    fn stop(&mut self, why: &'static str) {
        self.stopped_by = Some(why);
        if let Some(slot) = &self.reason {
            if let Ok(mut reason) = slot.lock() {
                *reason = Some(why.to_string());
            }
        }
        self.cancel.cancel();
    }
}

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic in one prompt must not take the others down with it.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `id` names a session, or a conversation being started under that name.
    pub(crate) fn contains(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// Opens (or opens again, after `session/load`) the session `id` on `workspace`.
    pub(crate) fn open(&self, id: &str, workspace: PathBuf) -> Result<(), Refusal> {
        let mut sessions = self.lock();
        if sessions
            .get(id)
            .is_some_and(|entry| entry.running.is_some())
        {
            return Err(Refusal::Busy(id.to_string()));
        }
        sessions.insert(
            id.to_string(),
            Entry {
                workspace,
                running: None,
            },
        );
        Ok(())
    }

    /// Marks a prompt of `id` as running; its workspace and the token that stops it.
    pub(crate) fn begin(&self, id: &str) -> Result<(PathBuf, CancellationToken), Refusal> {
        let mut sessions = self.lock();
        let entry = sessions
            .get_mut(id)
            .ok_or_else(|| Refusal::Unknown(id.to_string()))?;
        if entry.running.is_some() {
            return Err(Refusal::Busy(id.to_string()));
        }
        let cancel = CancellationToken::new();
        entry.running = Some(Running {
            cancel: cancel.clone(),
            reason: None,
            stopped_by: None,
        });
        Ok((entry.workspace.clone(), cancel))
    }

    /// Gives the running prompt of `id` its conversation's interrupt reason: one stopped
    /// while its session was prepared says why at once.
    pub(crate) fn attach(&self, id: &str, reason: Arc<Mutex<Option<String>>>) {
        if let Some(running) = self.lock().get_mut(id).and_then(|e| e.running.as_mut()) {
            if let Some(why) = running.stopped_by {
                if let Ok(mut slot) = reason.lock() {
                    *slot = Some(why.to_string());
                }
            }
            running.reason = Some(reason);
        }
    }

    /// Stops the running prompt of `id`, if there is one (a cancel of nothing is
    /// nothing, as the protocol has it).
    pub(crate) fn cancel(&self, id: &str) {
        if let Some(running) = self.lock().get_mut(id).and_then(|e| e.running.as_mut()) {
            running.stop(CANCELLED);
        }
    }

    /// Stops the running prompt of `id` saying `why` (a permission request the editor
    /// did not answer).
    pub(crate) fn stop(&self, id: &str, why: &'static str) {
        if let Some(running) = self.lock().get_mut(id).and_then(|e| e.running.as_mut()) {
            running.stop(why);
        }
    }

    /// Ends the running prompt of `id`; whether the editor cancelled it.
    pub(crate) fn end(&self, id: &str) -> bool {
        let running = self.lock().get_mut(id).and_then(|e| e.running.take());
        running.is_some_and(|running| running.stopped_by == Some(CANCELLED))
    }

    /// Stops every running prompt, saying `why` (the editor went away, a signal came).
    pub(crate) fn stop_all(&self, why: &'static str) {
        for entry in self.lock().values_mut() {
            if let Some(running) = entry.running.as_mut() {
                running.stop(why);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_session_runs_one_prompt_at_a_time_and_a_cancel_is_remembered() {
        let sessions = Sessions::default();
        assert_eq!(
            sessions.begin("a").unwrap_err(),
            Refusal::Unknown("a".into())
        );
        sessions.open("a", PathBuf::from("/w")).unwrap();
        let (workspace, cancel) = sessions.begin("a").unwrap();
        assert_eq!(workspace, PathBuf::from("/w"));
        assert_eq!(sessions.begin("a").unwrap_err(), Refusal::Busy("a".into()));
        assert_eq!(
            sessions.open("a", PathBuf::from("/w")).unwrap_err(),
            Refusal::Busy("a".into())
        );
        // Cancelled while its session is prepared: the reason waits for the conversation.
        sessions.cancel("a");
        assert!(cancel.is_cancelled());
        let reason = Arc::new(Mutex::new(None));
        sessions.attach("a", reason.clone());
        assert_eq!(reason.lock().unwrap().as_deref(), Some(CANCELLED));
        assert!(sessions.end("a"));
        // The next prompt starts afresh.
        let (_, cancel) = sessions.begin("a").unwrap();
        assert!(!cancel.is_cancelled());
        assert!(!sessions.end("a"));
    }
}
