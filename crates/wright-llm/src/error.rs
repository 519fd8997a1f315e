//! What can go wrong talking to a model server, each said so a person knows what to do.

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cannot reach the model server at {url} ({reason}). Start it (for example `ollama serve`, or llama.cpp's `llama-server -m MODEL.gguf`) or point wright at a running one with --base-url URL")]
    Unreachable { url: String, reason: String },

    #[error("model '{model}' not found on {url}; available: {}.{} Use --model NAME", list_or_none(.available), closest_hint(.closest))]
    ModelNotFound {
        model: String,
        url: String,
        available: Vec<String>,
        closest: Option<String>,
    },

    #[error("the server at {url} serves no model. Load one first (for example `ollama pull qwen2.5-coder:7b`)")]
    NoModels { url: String },

    #[error("the server at {url} serves several models ({}); choose one with --model NAME", .available.join(", "))]
    ModelRequired { url: String, available: Vec<String> },

    #[error("the server at {url} refused the request as unauthorized (HTTP {status}: {message}). Set the key with --api-key or OPENAI_API_KEY")]
    Unauthorized {
        url: String,
        status: u16,
        message: String,
    },

    #[error("the server at {url} answered HTTP {status}: {message}")]
    Http {
        url: String,
        status: u16,
        message: String,
    },

    #[error("the reply stream from {url} was cut before it finished{}", if *.partial_tool_call { " (in the middle of a tool call, which was not run)" } else { "" })]
    StreamCut {
        url: String,
        partial_tool_call: bool,
    },

    #[error("the server at {url} sent nothing for {secs} s; it may be overloaded or stuck. Raise the limit with --idle-timeout SECS")]
    IdleTimeout { url: String, secs: u64 },

    #[error(
        "the server at {url} sent an empty reply (no message, no tool call, no finish reason)"
    )]
    EmptyReply { url: String },

    #[error("the server at {url} sent a reply wright cannot read: {message}")]
    Malformed { url: String, message: String },

    #[error("invalid model server URL '{url}': {reason}")]
    BadUrl { url: String, reason: String },

    #[error("no model server found: nothing answered on {tried}. Start one (`ollama serve`, LM Studio's server, or `llama-server -m MODEL.gguf --port 8080`) or pass --base-url URL --model NAME")]
    NoServerFound { tried: String },
}

impl LlmError {
    /// Whether trying the same request again may succeed.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Unreachable { .. }
            | LlmError::StreamCut { .. }
            | LlmError::IdleTimeout { .. }
            | LlmError::EmptyReply { .. } => true,
            LlmError::Http { status, .. } => *status == 429 || *status >= 500,
            LlmError::ModelNotFound { .. }
            | LlmError::NoModels { .. }
            | LlmError::ModelRequired { .. }
            | LlmError::Unauthorized { .. }
            | LlmError::Malformed { .. }
            | LlmError::BadUrl { .. }
            | LlmError::NoServerFound { .. } => false,
        }
    }
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

fn closest_hint(closest: &Option<String>) -> String {
    match closest {
        Some(name) => format!(" Did you mean '{name}'?"),
        None => String::new(),
    }
}
