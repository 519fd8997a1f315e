//! Talking to a model: the OpenAI-compatible `/v1/chat/completions` wire, streamed (SSE) and
//! not, as served by Ollama, llama.cpp's llama-server, vLLM, SGLang and LM Studio.
//!
//! Layers, bottom up: `sse` turns bytes into SSE data payloads; `accumulate` folds stream
//! chunks (tool calls keyed by `index`, arguments in pieces) into one `Response`; `client`
//! moves bytes, retries transient failures and turns HTTP trouble into an `LlmError` whose
//! message tells a person what to do. The agent core never sees HTTP.

mod accumulate;
mod client;
pub mod constrain;
mod destination;
mod discovery;
mod error;
pub mod in_process;
mod names;
mod ollama_chat;
pub mod probe;
pub mod sse;
pub mod textcall;
mod types;

pub use accumulate::Accumulator;
pub use client::normalize_base_url;
pub use client::Client;
pub use client::ClientConfig;
pub use client::PROBE_TOOL;
pub use destination::destination;
pub use destination::host_and_port;
pub use discovery::discover_local_server;
pub use discovery::FoundServer;
pub use discovery::LOCAL_SERVERS;
pub use error::LlmError;
pub use error::Remedy;
pub use error::Unreachable;
pub use names::closest_name;
pub use types::ChatMessage;
pub use types::ChatRequest;
pub use types::FunctionCall;
pub use types::PromptProgress;
pub use types::Response;
pub use types::StreamDelta;
pub use types::TokenUsage;
pub use types::ToolCall;
