//! The script's vocabulary: what the model answers at one step.

use serde_json::Value;
use std::sync::Arc;

/// One scripted model reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// An assistant turn: optional text, then tool calls (name, raw argument text).
    Turn {
        /// Reasoning streamed before the answer (`reasoning_content`, or `reasoning` in
        /// Ollama style).
        reasoning: String,
        text: String,
        calls: Vec<(String, String)>,
    },
    /// An HTTP error with this status and JSON body.
    Status(u16, Value),
    /// Waits this long before answering with the reply inside (a slow model, or time
    /// for a test to kill the agent while it waits).
    Delayed(std::time::Duration, Box<Reply>),
    /// Reads the prompt for this long before the turn inside starts, as a CPU prefilling
    /// a long prompt: the stream is open and silent, except that when emulating llama.cpp
    /// and asked with `return_progress` it sends a `prompt_progress` chunk at each quarter.
    Prefill(std::time::Duration, Box<Reply>),
    /// The turn inside streamed with this pause before each chunk, as a model writing a
    /// few tokens a second: for a client that shows the reply as it comes.
    Paced(std::time::Duration, Box<Reply>),
    /// A streamed reply that stops after the first half of a tool call's arguments.
    CutMidCall { name: String, arguments: String },
    /// A streamed reply whose call stops half-way with `finish_reason: "length"`: the
    /// model hit its token limit, and the stream itself ends properly.
    HitTokenLimit { name: String, arguments: String },
    /// The server goes away: this request is answered 503 with `Connection: close`, and
    /// nothing listens on its port any more (a model server that crashed or was stopped).
    ShutDown,
    /// A reply made when the request arrives, from the text of its last message (the
    /// previous tool result): for attacks that use what the last command printed.
    Reacting(Reaction),
}

/// The function behind `Reply::Reacting`.
#[derive(Clone)]
pub struct Reaction(pub Arc<dyn Fn(&str) -> Reply + Send + Sync>);

impl std::fmt::Debug for Reaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reaction(..)")
    }
}

impl PartialEq for Reaction {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A reply made from the last message of the request it answers (the previous tool
/// result): `reacting(|output| reply().call("terminal", json!({"command": …})))`.
pub fn reacting(make: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Reply {
    Reply::Reacting(Reaction(Arc::new(make)))
}

/// Starts a reply: `reply().text("Let me look.").call("terminal", json!({...}))`.
pub fn reply() -> Reply {
    Reply::Turn {
        reasoning: String::new(),
        text: String::new(),
        calls: Vec::new(),
    }
}

impl Reply {
    pub fn text(mut self, new_text: &str) -> Self {
        if let Reply::Turn { text, .. } = &mut self {
            text.push_str(new_text);
        }
        self
    }

    pub fn reasoning(mut self, new_reasoning: &str) -> Self {
        if let Reply::Turn { reasoning, .. } = &mut self {
            reasoning.push_str(new_reasoning);
        }
        self
    }

    pub fn call(self, name: &str, arguments: Value) -> Self {
        self.call_raw(name, &arguments.to_string())
    }

    /// A call whose argument text is sent exactly as given (for malformed JSON).
    pub fn call_raw(mut self, name: &str, arguments: &str) -> Self {
        if let Reply::Turn { calls, .. } = &mut self {
            calls.push((name.to_string(), arguments.to_string()));
        }
        self
    }
}
