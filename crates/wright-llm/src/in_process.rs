//! A model that runs inside wright's own process (the embedded engine), behind the same
//! `Client` as a server: the engine takes the very request body a server would get and
//! answers with the same `Response` and stream deltas, so the loop, the event log, tool
//! calling, budgets and the condenser do not know which one runs. This crate only
//! declares the seam; the engine lives in a crate above it.

use crate::error::LlmError;
use crate::probe::ServerInfo;
use crate::types::Response;
use crate::types::StreamDelta;
use std::future::Future;
use std::pin::Pin;

/// The scheme of an in-process model's base URL (`engine://localhost/MODEL`): it names
/// this machine, so egress counts it as loopback, and no HTTP client ever dials it.
pub const ENGINE_SCHEME: &str = "engine";

/// What an in-process model answers with: a future of a whole reply.
pub type Reply<'a> = Pin<Box<dyn Future<Output = Result<Response, LlmError>> + Send + 'a>>;

/// A model run in this process.
pub trait InProcessModel: Send + Sync {
    /// Answers one `/chat/completions` request body, streaming pieces to `on_delta`.
    fn complete<'a>(
        &'a self,
        body: &'a [u8],
        on_delta: &'a mut (dyn FnMut(StreamDelta) + Send),
    ) -> Reply<'a>;

    /// What a probe of a server would learn: the kind, the model, its window.
    fn info(&self) -> ServerInfo;

    /// The same model for the conversation stored in `dir`, keeping there what lets it
    /// go on later without starting over (the engine's cache); None when it keeps
    /// nothing per conversation.
    fn for_conversation(
        &self,
        dir: &std::path::Path,
    ) -> Option<std::sync::Arc<dyn InProcessModel>> {
        let _ = dir;
        None
    }
}

/// The base URL of an in-process model named `model`.
pub fn engine_url(model: &str) -> String {
    let clean: String = model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".-_".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{ENGINE_SCHEME}://localhost/{clean}")
}
