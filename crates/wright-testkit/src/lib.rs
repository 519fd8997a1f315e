//! Test support for wright: a scripted OpenAI-compatible model server and fixtures.
//!
//! The server is a real HTTP server on an ephemeral 127.0.0.1 port speaking the real wire
//! format, streamed (SSE, arguments split across deltas) and not. It replays a script of
//! replies in order and records every request byte for byte, so a test reads like the
//! conversation it scripts and can assert on exactly what the agent sent.

mod constrain;
mod dockerd;
mod fixtures;
mod forge;
mod ollama;
pub mod postgres;
mod remote;
mod reply;
mod server;
pub mod tiny_gguf;

pub use constrain::Constraints;
pub use constrain::Enforce;
pub use dockerd::SecondDockerd;
pub use fixtures::failing_python_repo;
pub use fixtures::fix_a_test_script;
pub use fixtures::git;
pub use fixtures::BUG;
pub use fixtures::FIX;
pub use forge::ForgeRequest;
pub use forge::ScriptedForge;
pub use remote::GitRemote;
pub use reply::reacting;
pub use reply::reply;
pub use reply::Reaction;
pub use reply::Reply;
pub use server::Recorded;
pub use server::ScriptedServer;
pub use server::ServerOptions;
