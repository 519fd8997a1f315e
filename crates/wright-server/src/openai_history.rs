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
//! Kept in memory, bounded: at most `MAX_RECORDS` conversations and `MAX_BYTES` of their
//! text, the least recently answered dropped first, and a conversation's record dropped
//! when the conversation is removed. A history whose record was dropped (or after a
//! restart) starts a new conversation, as one nobody here answered.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;

/// How many conversations' exchanges are kept at most.
pub const MAX_RECORDS: usize = 256;
/// How much of their text is kept at most, in bytes (one record larger than this is kept
/// alone).
pub const MAX_BYTES: usize = 64 << 20;

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

/// One conversation's recorded exchange, and when it was last answered.
#[derive(Debug)]
struct Record {
    turns: Vec<Turn>,
    /// The record's place in the order of answers: larger is more recent.
    answered: u64,
}

impl Record {
    fn bytes(&self) -> usize {
        self.turns.iter().map(|turn| turn.text.len()).sum()
    }
}

/// The records, and the count that orders them.
#[derive(Debug, Default)]
struct Known {
    records: HashMap<String, Record>,
    answers: u64,
}

impl Known {
    fn remove(&mut self, id: &str) -> Option<Vec<Turn>> {
        self.records.remove(id).map(|record| record.turns)
    }

    /// Drops the least recently answered records until at most `MAX_RECORDS` of at most
    /// `MAX_BYTES` are left (the newest is always kept).
    fn evict(&mut self) {
        let mut bytes: usize = self.records.values().map(Record::bytes).sum();
        while self.records.len() > MAX_RECORDS || (bytes > MAX_BYTES && self.records.len() > 1) {
            let oldest = self
                .records
                .iter()
                .min_by_key(|(_, record)| record.answered)
                .map(|(id, _)| id.clone());
            let Some(record) = oldest.and_then(|id| self.records.remove(&id)) else {
                return;
            };
            bytes -= record.bytes();
        }
    }
}

/// The exchange of each conversation the endpoint answered, by conversation id.
#[derive(Debug, Default)]
pub struct Exchanges {
    known: Mutex<Known>,
}

impl Exchanges {
    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        // A panic elsewhere must not take the endpoint down with it.
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Drops `id`'s record: the conversation was removed.
    pub fn forget(&self, id: &str) {
        self.known().remove(id);
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
            .records
            .iter()
            .filter(|(_, recorded)| recorded.turns.as_slice() == before)
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
        let mut known = self.known();
        known.answers += 1;
        let answered = known.answers;
        known.records.insert(
            id.to_string(),
            Record {
                turns: request,
                answered,
            },
        );
        known.evict();
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
    fn the_least_recently_answered_record_goes_first_past_the_cap() {
        let exchanges = Exchanges::default();
        for n in 0..MAX_RECORDS {
            exchanges.record(&n.to_string(), vec![user(&format!("task {n}"))], "done");
        }
        // Conversation 0 answered again: now the most recent, 1 the least.
        let request = vec![user("task 0"), assistant("done"), user("more")];
        assert_eq!(exchanges.take_extended(&request).as_deref(), Some("0"));
        exchanges.record("0", request, "done again");
        exchanges.record("new", vec![user("a new task")], "done");
        assert_eq!(exchanges.known().records.len(), MAX_RECORDS);
        let goes_on = |n: usize| {
            let request = vec![user(&format!("task {n}")), assistant("done"), user("more")];
            exchanges.take_extended(&request)
        };
        assert_eq!(goes_on(1), None, "the least recently answered was kept");
        assert_eq!(goes_on(2).as_deref(), Some("2"));
        let again = vec![
            user("task 0"),
            assistant("done"),
            user("more"),
            assistant("done again"),
            user("and more"),
        ];
        assert_eq!(exchanges.take_extended(&again).as_deref(), Some("0"));
    }

    #[test]
    fn records_past_the_byte_cap_go_oldest_first_and_the_newest_stays() {
        let exchanges = Exchanges::default();
        let big = "x".repeat(MAX_BYTES / 2);
        exchanges.record("a", vec![user(&big)], "a");
        exchanges.record("b", vec![user(&big)], "b");
        // Together over the cap: `a` goes.
        let continues = |big: &str, answer: &str| {
            exchanges.take_extended(&[user(big), assistant(answer), user("more")])
        };
        assert_eq!(continues(&big, "a"), None);
        assert_eq!(continues(&big, "b").as_deref(), Some("b"));
        // One alone over the cap is kept.
        let huge = "y".repeat(MAX_BYTES + 1);
        exchanges.record("c", vec![user(&huge)], "c");
        assert_eq!(continues(&huge, "c").as_deref(), Some("c"));
    }

    #[test]
    fn a_removed_conversations_record_is_dropped() {
        let exchanges = Exchanges::default();
        exchanges.record("a", vec![user("fix it")], "fixed");
        exchanges.forget("a");
        let request = vec![user("fix it"), assistant("fixed"), user("more")];
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
