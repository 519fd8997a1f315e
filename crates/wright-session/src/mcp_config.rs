//! Which MCP servers a session may start: the user's (`~/.config/wright/mcp.json`) and
//! the repository's (`.wright/mcp.json`, `.mcp.json`, read at the commit the
//! conversation starts from, never from the agent's clone, never through a link), the
//! latter only once the user allowed those files' exact content (the consent store, for
//! one run by the front end's choice, or asked through the `Front`). Starting them is
//! `crate::mcp`'s.

use crate::front::Front;
use crate::hooks::RepoHooksChoice;
use crate::repo_config::Read;
use crate::repo_config::RepoFiles;
use anyhow::Result;
use serde_json::Value;
use std::path::Path;
use std::path::PathBuf;
use wright_config::consent;
use wright_mcp::ServerConfig;

/// The repository's files that name MCP servers, in the order they are read.
pub const REPO_MCP_FILES: [&str; 2] = [".wright/mcp.json", ".mcp.json"];
/// A configuration file larger than this is not read.
const MAX_FILE_BYTES: usize = 64 << 10;

/// Whose configuration named a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    User,
    Repository,
}

/// What became of the repository's servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepoMcp {
    /// It names none.
    None,
    /// Allowed: the files.
    Allowed(Vec<String>),
    /// Not allowed: the user has not allowed these files' content.
    NotAllowed(Vec<String>),
}

/// The servers a session may start, from both configurations.
#[derive(Debug, Clone)]
pub struct McpConfig {
    pub servers: Vec<(ServerConfig, Origin)>,
    pub repo: RepoMcp,
    /// The repository's servers not started for want of consent.
    pub refused: Vec<ServerConfig>,
    /// Files or servers not taken, and why.
    pub skipped: Vec<String>,
}

/// The user's MCP configuration file.
pub fn user_file() -> Option<PathBuf> {
    wright_config::Config::user_file()
        .and_then(|file| file.parent().map(|dir| dir.join("mcp.json")))
}

/// The paths of the repository MCP servers are read from (for `RepoFiles::list`).
pub fn paths() -> Vec<String> {
    REPO_MCP_FILES.iter().map(|p| p.to_string()).collect()
}

/// The repository's MCP files with servers in them, as a conversation starting now reads
/// them (for `wright allow repo-mcp`): each path and its text.
pub fn repo_files(source: &RepoFiles) -> Vec<(String, String)> {
    REPO_MCP_FILES
        .iter()
        .filter_map(|path| match source.read_text(path, MAX_FILE_BYTES) {
            Read::Text(text) => wright_mcp::config::parse(&text, path)
                .is_ok_and(|servers| !servers.is_empty())
                .then(|| (path.to_string(), text)),
            _ => None,
        })
        .collect()
}

/// The MCP tools among a conversation's logged tool schemas: every name that is not a
/// built-in tool nor `skill`, in their order.
pub fn logged_schemas(tools: &[Value]) -> Vec<Value> {
    tools
        .iter()
        .filter(|schema| {
            schema["function"]["name"].as_str().is_some_and(|name| {
                name.contains("__")
                    && wright_tools::ToolName::parse(name).is_none()
                    && name != "skill"
            })
        })
        .cloned()
        .collect()
}

/// The consent subject for a repository's MCP files: their paths and contents, hashed.
pub fn subject(files: &[(String, String)]) -> String {
    // Distinct from the hooks' subject even for the same bytes.
    let mut tagged = vec![("mcp".to_string(), String::new())];
    tagged.extend(files.iter().cloned());
    crate::hooks::subject(&tagged)
}

impl McpConfig {
    /// Reads the user's servers and the repository's (from `source`); the repository's
    /// are taken when the user allowed their content (`choice`, the record, or `front`).
    /// A user's file that is not valid is an error; a repository's is skipped with why.
    pub fn load(source: &RepoFiles, choice: RepoHooksChoice, front: &dyn Front) -> Result<Self> {
        let mut config = McpConfig {
            servers: Vec::new(),
            repo: RepoMcp::None,
            refused: Vec::new(),
            skipped: Vec::new(),
        };
        if let Some(path) = user_file() {
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let shown = path.display().to_string();
                    for server in wright_mcp::config::parse(&text, &shown)? {
                        config.servers.push((server, Origin::User));
                    }
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => anyhow::bail!("cannot read {}: {err}", path.display()),
            }
        }
        let mut files = Vec::new();
        let mut repo_servers = Vec::new();
        for path in REPO_MCP_FILES {
            match source.read_text(path, MAX_FILE_BYTES) {
                Read::Missing => {}
                Read::Skipped(why) => config.skipped.push(format!("{path} ({why})")),
                Read::Text(text) => match wright_mcp::config::parse(&text, path) {
                    Ok(servers) if servers.is_empty() => {}
                    Ok(servers) => {
                        repo_servers.extend(servers);
                        files.push((path.to_string(), text));
                    }
                    Err(err) => config.skipped.push(err.to_string()),
                },
            }
        }
        if files.is_empty() {
            return Ok(config);
        }
        let names: Vec<String> = files.iter().map(|(path, _)| path.clone()).collect();
        if allowed(source.key(), &files, choice, front)? {
            config.repo = RepoMcp::Allowed(names);
            for server in repo_servers {
                if config.servers.iter().any(|(s, _)| s.name == server.name) {
                    config.skipped.push(format!(
                        "the repository's MCP server `{}` (yours has that name)",
                        server.name
                    ));
                } else {
                    config.servers.push((server, Origin::Repository));
                }
            }
        } else {
            config.repo = RepoMcp::NotAllowed(names);
            config.refused = repo_servers;
        }
        Ok(config)
    }
}

fn allowed(
    repo: &Path,
    files: &[(String, String)],
    choice: RepoHooksChoice,
    front: &dyn Front,
) -> Result<bool> {
    let question = wright_protocol::Question::RunRepoMcp {
        repo: repo.to_path_buf(),
        files: files.to_vec(),
    };
    let kind = consent::Kind::RepoMcp;
    crate::hooks::consented(kind, repo, &subject(files), question, choice, front)
}
