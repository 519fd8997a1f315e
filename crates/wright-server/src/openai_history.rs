//! What the OpenAI-compatible endpoint said in each conversation it answered, so that a
//! client which resends the whole history without `X-Wright-Conversation` (as OpenAI's
//! clients do) goes on with the conversation that history is — and only then.
//!
//! Guarantees: a request goes on with a conversation only when its messages (system ones
//! aside) are exactly that conversation's exchange as recorded here — the user turns as the
//! client sent them, the assistant turns as this endpoint answered them (surrounding blank
//! space aside, which clients strip) — followed by one new user message. An assistant turn
//! the client wrote or edited, a history nobody here answered, a tool message, or a history
//! that two conversations share continues nothing: the endpoint then starts a new
//! conversation, as without the history. Only conversations this endpoint answered are
//! recorded, and only when every assistant turn of their history is one it wrote there.
//! The server has one key, so one caller: every conversation recorded is the caller's own.
//! Kept in memory: after a restart a resent history starts a new conversation.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;

/// Who said a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// One message of an exchange: who said it, and its text without surrounding blank space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    role: Role,
    text: String,
}

impl Turn {
    pub fn new(role: Role, text: &str) -> Self {
        Self {
            role,
            text: text.trim().to_string(),
        }
    }

    pub fn role(&self) -> Role {
        self.role
    }
}

/// The text of a message's `content`: a string, or the text parts of a list.
pub fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|part| part["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// A request's messages as an exchange, system (and developer) messages left out; `None`
/// when it holds anything else (a tool's message, a content without text), which no
/// exchange recorded here can be.
pub fn exchange_of<'a>(
    messages: impl IntoIterator<Item = (&'a str, &'a Value)>,
) -> Option<Vec<Turn>> {
    let mut turns = Vec::new();
    for (role, content) in messages {
        let role = match role {
            "system" | "developer" => continue,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            _ => return None,
        };
        turns.push(Turn::new(role, &content_text(content)?));
    }
    Some(turns)
}

/// The exchange of each conversation the endpoint answered, by conversation id.
#[derive(Debug, Default)]
pub struct Exchanges {
    known: Mutex<HashMap<String, Vec<Turn>>>,
}

impl Exchanges {
    fn known(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Turn>>> {
        // A panic elsewhere must not take the endpoint down with it.
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The conversation whose recorded exchange `request` is, plus one new user message;
    /// taken out of the record, so two requests resending it do not both go on with it
    /// (the second starts a new conversation). `None` when no single one is.
    pub fn take_extended(&self, request: &[Turn]) -> Option<String> {
        let (new, before) = request.split_last()?;
        let extends = new.role == Role::User && before.iter().any(|t| t.role == Role::Assistant);
        if !extends {
            return None;
        }
        let mut known = self.known();
        let mut matching = known
            .iter()
            .filter(|(_, recorded)| recorded.as_slice() == before)
            .map(|(id, _)| id.clone());
        let id = matching.next()?;
        if matching.next().is_some() {
            // Two conversations with the same history: which one is not for us to guess.
            return None;
        }
        known.remove(&id);
        Some(id)
    }

    /// Takes `id`'s record out, and whether `request` is it plus one new user message
    /// (how a client naming the conversation in the header keeps its history trusted).
    pub fn take_for(&self, id: &str, request: &[Turn]) -> bool {
        let recorded = self.known().remove(id);
        match (recorded, request.split_last()) {
            (Some(recorded), Some((new, before))) => {
                new.role == Role::User && recorded.as_slice() == before
            }
            _ => false,
        }
    }

    /// Records that the endpoint answered `request` (whose assistant turns are all its own
    /// in `id`) with `answer`.
    pub fn record(&self, id: &str, mut request: Vec<Turn>, answer: &str) {
        request.push(Turn::new(Role::Assistant, answer));
        self.known().insert(id.to_string(), request);
    }
}

/// A request's exchange, to record with its answer once that is whole; `None` when the
/// request's history is not one this endpoint can vouch for.
pub struct Pending {
    pub exchanges: std::sync::Arc<Exchanges>,
    pub id: String,
    pub request: Option<Vec<Turn>>,
}

impl Pending {
    /// The answer is whole: recorded, when the history was trusted.
    pub fn answered(self, answer: &str) {
        if let Some(request) = self.request {
            self.exchanges.record(&self.id, request, answer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Turn {
        Turn::new(Role::User, text)
    }
    fn assistant(text: &str) -> Turn {
        Turn::new(Role::Assistant, text)
    }

    #[test]
    fn only_the_exact_recorded_exchange_plus_one_user_message_goes_on() {
        let exchanges = Exchanges::default();
        exchanges.record("a", vec![user("fix it")], "  fixed\n");
        // Edited, shortened, without a new message, or ending on an assistant turn: no.
        for request in [
            vec![user("fix it"), assistant("fixed!"), user("more")],
            vec![user("fix it!"), assistant("fixed"), user("more")],
            vec![user("fix it"), assistant("fixed")],
            vec![user("fix it"), assistant("fixed"), assistant("more")],
            vec![user("more")],
        ] {
            assert_eq!(exchanges.take_extended(&request), None, "{request:?}");
        }
        let request = vec![user("fix it"), assistant("fixed"), user("more")];
        assert_eq!(exchanges.take_extended(&request).as_deref(), Some("a"));
        // Taken: the same request again does not go on with it a second time.
        assert_eq!(exchanges.take_extended(&request), None);
    }

    #[test]
    fn a_history_two_conversations_share_continues_neither() {
        let exchanges = Exchanges::default();
        exchanges.record("a", vec![user("hi")], "hello");
        exchanges.record("b", vec![user("hi")], "hello");
        let request = vec![user("hi"), assistant("hello"), user("go on")];
        assert_eq!(exchanges.take_extended(&request), None);
    }

    #[test]
    fn a_tool_message_is_no_exchange_and_system_messages_do_not_count() {
        let text = Value::String("x".into());
        assert_eq!(exchange_of([("tool", &text)]), None);
        assert_eq!(
            exchange_of([("system", &text), ("user", &text)]),
            Some(vec![user("x")])
        );
        assert_eq!(exchange_of([("user", &Value::Null)]), None);
    }

    #[test]
    fn the_header_keeps_the_record_only_for_its_exact_extension() {
        let exchanges = Exchanges::default();
        exchanges.record("a", vec![user("fix it")], "fixed");
        assert!(!exchanges.take_for("a", &[user("more")]));
        exchanges.record("a", vec![user("fix it")], "fixed");
        assert!(exchanges.take_for("a", &[user("fix it"), assistant("fixed"), user("more")]));
        assert!(!exchanges.take_for("b", &[user("more")]));
    }
}
