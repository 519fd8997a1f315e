//! Where conversations live: `$XDG_DATA_HOME/wright/conversations/<id>/` (by default
//! `~/.local/share/wright/conversations/<id>/`) holds the log and the records; the agent's
//! clone of a repository lives apart, in `$XDG_DATA_HOME/wright/workspaces/<id>/`, so the
//! directory the sandbox may write never contains, nor sits inside, the conversation's
//! own files.

use std::path::PathBuf;
use std::time::SystemTime;

pub(crate) fn data_dir() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from(".wright-data"))
        .join("wright")
}

pub fn conversations_dir() -> PathBuf {
    data_dir().join("conversations")
}

/// Where external agents (`[agents.NAME]`, over ACP) keep their own state, one home
/// per conversation: its `HOME` inside the sandbox (writable there), kept across its
/// runs so that the agent's `session/load` finds the session it saved. What is in it
/// is the agent's: wright never reads it, only removes it with the conversation.
pub fn agent_homes_dir() -> PathBuf {
    data_dir().join("agent-homes")
}

/// Where the agents' clones live, one directory per conversation.
pub fn workspaces_dir() -> PathBuf {
    data_dir().join("workspaces")
}

/// Where repositories cloned from a URL for a conversation live (the server's
/// `repository_url`), one per conversation: its "user's repository", which its branch is
/// handed over to and taken into. Beside wright's data, not in it: a workspace may never
/// lie among wright's own files (see `wright_session`).
pub fn repositories_dir() -> PathBuf {
    data_dir().with_file_name("wright-repositories")
}

/// Where the user installs MCP servers' packages for wright (`npm install --prefix DIR
/// PKG`): an `npx PKG` server runs from `DIR/node_modules`, offline, read-only. Written by
/// the user only; the sandbox sees its `node_modules` read-only, never the rest of the
/// data directory.
pub fn mcp_packages_dir() -> PathBuf {
    data_dir().join("mcp-packages")
}

/// `YYYYMMDD-HHMMSS-xxxx`: sorts by time, unique enough for one user's machine.
pub fn new_conversation_id() -> String {
    let now = SystemTime::now();
    let stamp = humantime::format_rfc3339_seconds(now).to_string();
    let digits: String = stamp.chars().filter(char::is_ascii_digit).collect();
    let nanos = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let salt = (nanos ^ std::process::id().rotate_left(16)) & 0xffff;
    format!(
        "{}-{}-{salt:04x}",
        &digits[..8.min(digits.len())],
        &digits[8.min(digits.len())..]
    )
}
