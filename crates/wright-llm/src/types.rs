//! Wire types of `/v1/chat/completions` as wright sends them, and the normalized reply.
//!
//! Serialization is deterministic (struct field order, no maps with random order), which
//! is what lets request N+1 start with the exact bytes of request N.

use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

/// Field order matters: `messages` comes last, so the body of request N without its final
/// `]}` is a byte prefix of request N+1 — what a server's prefix cache needs to see.
#[derive(Debug, Clone, Serialize)]
pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// llama.cpp: stream the progress of reading the prompt (`prompt_progress` chunks).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub return_progress: bool,
    /// `"required"` when native calls are constrained (`constrain`): the same on every
    /// request of a conversation, so the prefix holds; for one request on the embedded
    /// engine, the tools it may call (`ActiveConstraint::only_tools`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// The JSON schema over the calls, when text-mode calls are constrained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<crate::constrain::ResponseFormat<'a>>,
    /// Fields the user's profile adds to every request (`extra`).
    #[serde(flatten)]
    pub extra: &'a serde_json::Map<String, Value>,
    #[serde(skip_serializing_if = "<[Value]>::is_empty")]
    pub tools: &'a [Value],
    pub messages: &'a [ChatMessage],
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct StreamOptions {
    pub include_usage: bool,
}

/// One message of the history, in the shape every OpenAI-compatible server accepts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ChatMessage {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        /// Empty rather than null when the turn is only tool calls: every server takes "".
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// JSON text, as the wire format wants it.
    pub arguments: String,
}

impl ToolCall {
    pub fn function(id: impl Into<String>, name: impl Into<String>, arguments: String) -> Self {
        Self {
            id: id.into(),
            kind: "function".into(),
            function: FunctionCall {
                name: name.into(),
                arguments,
            },
        }
    }
}

/// A piece of a reply as it streams in, for live display.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta {
    Text(String),
    Reasoning(String),
    /// A tool call's name became known.
    ToolCallStarted {
        name: String,
    },
    /// A piece of a tool call's arguments.
    ToolCallArguments(String),
    /// How far the server has read the prompt (llama.cpp, asked with `return_progress`).
    PromptProgress(PromptProgress),
    /// The request failed in a way that may pass and is being sent again.
    Retrying {
        attempt: u32,
        reason: String,
    },
}

/// llama.cpp's `prompt_progress`: of `total` prompt tokens, `cached` were in its cache and
/// `processed` (cached ones included) are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PromptProgress {
    pub total: u64,
    pub cached: u64,
    pub processed: u64,
}

/// A whole reply, streamed or not.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Response {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    pub usage: Option<TokenUsage>,
    /// Time from sending the request to the first byte of the reply.
    pub first_byte_ms: f64,
    /// Time from the first byte to the end of the reply.
    pub generation_ms: f64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TokenUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: Option<u64>,
    /// llama.cpp's own `timings`, when present: more exact than wall time.
    pub prompt_ms: Option<f64>,
    pub predicted_ms: Option<f64>,
}
