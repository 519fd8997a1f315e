//! Where one session's updates go: `session/update` notifications to the editor. A
//! notification the connection can no longer carry (the editor went away) is dropped:
//! the run goes on to log its step and hand its changes over, as it would without a
//! watcher.

use agent_client_protocol::v1::schema::ContentChunk;
use agent_client_protocol::v1::schema::SessionId;
use agent_client_protocol::v1::schema::SessionNotification;
use agent_client_protocol::v1::schema::SessionUpdate;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;

/// The editor's end of one session.
#[derive(Clone)]
pub(crate) struct Notifier {
    connection: ConnectionTo<Client>,
    session: SessionId,
}

impl Notifier {
    pub(crate) fn new(connection: ConnectionTo<Client>, session: &str) -> Self {
        Self {
            connection,
            session: SessionId::new(session),
        }
    }

    pub(crate) fn send(&self, update: SessionUpdate) {
        let notification = SessionNotification::new(self.session.clone(), update);
        let _ = self.connection.send_notification(notification);
    }

    /// Words of the agent's reply (the model's, or wright's own about the run).
    pub(crate) fn say(&self, text: impl Into<String>) {
        let text = text.into();
        if !text.is_empty() {
            self.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                text.into(),
            )));
        }
    }

    /// The model's reasoning, apart from its reply.
    pub(crate) fn think(&self, text: impl Into<String>) {
        let text = text.into();
        if !text.is_empty() {
            self.send(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                text.into(),
            )));
        }
    }

    /// The user's words, when a conversation is replayed (`session/load`).
    pub(crate) fn user(&self, text: impl Into<String>) {
        let text = text.into();
        if !text.is_empty() {
            self.send(SessionUpdate::UserMessageChunk(ContentChunk::new(
                text.into(),
            )));
        }
    }
}
