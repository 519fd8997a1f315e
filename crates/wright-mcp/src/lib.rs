//! wright's MCP client, on the official Rust SDK (`rmcp`): the servers of a
//! configuration in the `mcpServers` shape (`config`), each connected over its stdio or
//! streamable HTTP (`server`), and their tools offered to the model as `SERVER__TOOL`
//! (`tool`) with results rendered as observation text (`render`).
//!
//! What it guarantees: nothing here decides where a server runs or whether it may —
//! the caller hands a stdio server's command already wrapped in the sandbox, and checks
//! a URL against the egress policy before asking for it; every start, listing and call
//! has a deadline, and whatever a server does (exit, hang, garbage) is an error in one
//! sentence; results are marked `Provenance::Mcp` (untrusted: the loop wraps them as content
//! from outside wright).

pub mod config;
pub mod render;
pub mod server;
pub mod tool;

pub use config::ServerConfig;
pub use config::Transport;
pub use server::ListedTool;
pub use server::Server;
pub use server::ServerError;
pub use tool::McpTool;
