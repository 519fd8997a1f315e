//! A session's MCP servers, started (which ones may be is `crate::mcp_config`'s). Every
//! stdio server runs inside the conversation's sandbox, in its scrubbed environment plus
//! the entry's `env` — yours may read, read-only, the files their command names, and
//! `npx`/`uvx` ones run from the package installed or cached here, offline, or are
//! refused at once with the fix (`mcp_program`); an HTTP server is reached only where the
//! egress policy lets the repository's code go (this machine always). Their tools are
//! fixed when the conversation starts: a resumed one gets the tools its log started
//! with, their schemas byte for byte.

use crate::front::Front;
use crate::mcp_program::Host;
use crate::mcp_program::Plan;
use anyhow::Result;
use serde_json::Value;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use wright_config::consent;
use wright_config::consent::Consent;
use wright_config::EgressVerdict;
use wright_mcp::McpTool;
use wright_mcp::Server;
use wright_mcp::ServerConfig;
use wright_mcp::Transport;
use wright_sandbox::Sandbox;
use wright_tools::Tool;

pub use crate::mcp_config::logged_schemas;
pub use crate::mcp_config::paths;
pub use crate::mcp_config::repo_files;
pub use crate::mcp_config::subject;
pub use crate::mcp_config::user_file;
pub use crate::mcp_config::McpConfig;
pub use crate::mcp_config::Origin;
pub use crate::mcp_config::RepoMcp;
pub use crate::mcp_config::REPO_MCP_FILES;

/// Where and how servers start: the sandbox stdio servers run in, its environment, the
/// directory they start in, and what decides whether an HTTP server may be reached.
pub struct Place<'a> {
    pub sandbox: &'a Sandbox,
    pub env: &'a [(String, String)],
    pub cwd: &'a Path,
    pub settings: &'a wright_config::Settings,
    /// The repository egress grants are keyed by.
    pub repo: &'a Path,
}

impl Place<'_> {
    /// The machine around the sandbox as a stdio server's command sees it (see
    /// `mcp_program`): the sandbox's `PATH`, the user's home and package managers'
    /// variables, and whether a registry's host may be reached.
    fn host(&self) -> Host {
        let own = |name: &str| std::env::var(name).ok().map(|v| (name.to_string(), v));
        let unconfined = !self.sandbox.is_confined();
        let network = self.settings.network;
        let allow = wright_sandbox::egress::AllowList::parse(&self.settings.allow_hosts).ok();
        Host {
            home: std::env::var_os("HOME").map(PathBuf::from),
            path: self
                .env
                .iter()
                .find(|(key, _)| key == "PATH")
                .map(|(_, value)| value.into())
                .or_else(|| std::env::var_os("PATH")),
            cwd: self.cwd.to_path_buf(),
            vars: [
                "XDG_DATA_HOME",
                "XDG_CACHE_HOME",
                "UV_TOOL_DIR",
                "UV_CACHE_DIR",
                "npm_config_cache",
                "NPM_CONFIG_CACHE",
                "npm_config_registry",
                "npm_config_prefix",
            ]
            .into_iter()
            .filter_map(own)
            .collect(),
            registry_allowed: Box::new(move |host| {
                unconfined
                    || network
                    || allow
                        .as_ref()
                        .is_some_and(|allow| allow.decide(host, 443).is_some())
            }),
        }
    }
}

/// What became of one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Connected: its tools' names as the model calls them.
    Ready(Vec<String>),
    /// It did not start or list its tools: why.
    Failed(String),
    /// A repository's server the user has not allowed.
    NotAllowed,
    /// Its URL is where the repository's code may not go: why.
    Refused(String),
}

/// One server, for the header and `wright mcp list`.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    pub name: String,
    pub origin: Origin,
    /// Its command line or URL.
    pub target: String,
    pub state: ServerState,
    /// What it was given to read outside the sandbox's usual paths (read-only).
    pub granted: Vec<PathBuf>,
    /// What wright ran in place of its command as written (an installed package), why.
    pub instead: Option<String>,
}

/// The connected servers of a session and the tools they offer.
#[derive(Default)]
pub struct McpServers {
    servers: Vec<Arc<Server>>,
    pub status: Vec<ServerStatus>,
    pub tools: Vec<Arc<dyn Tool>>,
    /// Lines about files not read (for the header).
    pub skipped: Vec<String>,
    pub repo: Option<RepoMcp>,
}

impl McpServers {
    /// Starts every server of `config` (at once: each has its own deadline) and takes
    /// their tools, in the configuration's order; a tool whose name another already has
    /// is left out. `logged`: a resumed conversation's tool schemas, which are then the
    /// tools, whatever the servers list now.
    /// `front` is told which servers it waits for, before it does.
    pub async fn start(
        config: &McpConfig,
        place: &Place<'_>,
        logged: Option<&[Value]>,
        front: &dyn Front,
    ) -> Self {
        let wanted = |server: &ServerConfig| match logged {
            None => true,
            Some(schemas) => {
                // `SERVER__`: the name of none of its tools.
                let prefix = wright_mcp::tool::full_name(&server.name, "");
                schemas
                    .iter()
                    .filter_map(|s| s["function"]["name"].as_str())
                    .any(|name| name.starts_with(&prefix))
            }
        };
        let chosen: Vec<&(ServerConfig, Origin)> = config
            .servers
            .iter()
            .filter(|(server, _)| wanted(server))
            .collect();
        if !chosen.is_empty() {
            front.notice(wright_protocol::Notice::StartingMcp {
                servers: chosen
                    .iter()
                    .map(|(server, _)| server.name.clone())
                    .collect(),
                seconds: wright_mcp::config::START_TIMEOUT.as_secs(),
            });
        }
        let starts = chosen.into_iter().map(|(server, origin)| async move {
            let (result, launched) = start_one(server, *origin, place).await;
            (server, *origin, result, launched)
        });
        // At once: each has its own deadline, so the slowest bounds the wait.
        let started = futures_util::future::join_all(starts).await;
        let mut servers = McpServers {
            skipped: config.skipped.clone(),
            repo: Some(config.repo.clone()),
            ..McpServers::default()
        };
        let mut fresh: Vec<(Arc<Server>, wright_mcp::ListedTool)> = Vec::new();
        for (config, origin, result, launched) in started {
            let state = match result {
                Ok(Started::Connected(server, listed)) => {
                    let names = listed
                        .iter()
                        .map(|tool| wright_mcp::tool::full_name(&server.name, &tool.name))
                        .collect();
                    fresh.extend(listed.into_iter().map(|tool| (server.clone(), tool)));
                    servers.servers.push(server);
                    ServerState::Ready(names)
                }
                Ok(Started::Refused(why)) => ServerState::Refused(why),
                Err(err) => ServerState::Failed(err.to_string()),
            };
            servers.status.push(ServerStatus {
                name: config.name.clone(),
                origin,
                target: target(config),
                state,
                granted: launched.granted,
                instead: launched.instead,
            });
        }
        for refused in &config.refused {
            servers.status.push(ServerStatus {
                name: refused.name.clone(),
                origin: Origin::Repository,
                target: target(refused),
                state: ServerState::NotAllowed,
                granted: Vec::new(),
                instead: None,
            });
        }
        match logged {
            None => {
                let builtin =
                    |name: &str| wright_tools::ToolName::parse(name).is_some() || name == "skill";
                let mut taken: Vec<String> = Vec::new();
                for (server, listed) in &fresh {
                    let tool = McpTool::new(server, listed);
                    let name = tool.name().to_string();
                    if taken.contains(&name) || builtin(&name) {
                        servers
                            .skipped
                            .push(format!("the MCP tool {name} (another tool has that name)"));
                        continue;
                    }
                    taken.push(name);
                    servers.tools.push(Arc::new(tool));
                }
            }
            Some(schemas) => {
                for schema in schemas {
                    let Some(name) = schema["function"]["name"].as_str() else {
                        continue;
                    };
                    let Some((server_name, tool_name)) = name.split_once("__") else {
                        continue;
                    };
                    let found = fresh.iter().find(|(server, listed)| {
                        wright_mcp::tool::full_name(&server.name, &listed.name) == name
                    });
                    let tool = match found {
                        Some((server, listed)) => McpTool::logged(
                            schema.clone(),
                            &server.name,
                            &listed.name,
                            Some(server.clone()),
                        ),
                        None => McpTool::logged(schema.clone(), server_name, tool_name, None),
                    };
                    servers.tools.push(Arc::new(tool));
                }
            }
        }
        servers
    }

    /// The servers in a few lines (for the run's header).
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for status in &self.status {
            let whose = match status.origin {
                Origin::User => "yours",
                Origin::Repository => "the repository's",
            };
            let line = match &status.state {
                ServerState::Ready(tools) => format!(
                    "mcp {} ({whose}): {}",
                    status.name,
                    wright_protocol::count(tools.len() as u64, "tool")
                ),
                ServerState::Failed(why) => {
                    format!("mcp {} ({whose}) is not available: {why}", status.name)
                }
                ServerState::NotAllowed => format!(
                    "mcp {} (the repository's) does not run: you have not allowed its file's content",
                    status.name
                ),
                ServerState::Refused(why) => {
                    format!("mcp {} ({whose}) is not reached: {why}", status.name)
                }
            };
            lines.push(line);
            lines.extend(status.preparation());
        }
        for skipped in &self.skipped {
            lines.push(format!("not read: {skipped}"));
        }
        lines
    }

    /// Ends every connection and stdio server.
    pub async fn stop(&self) {
        for server in &self.servers {
            server.stop().await;
        }
    }
}

enum Started {
    Connected(Arc<Server>, Vec<wright_mcp::ListedTool>),
    /// Not reached: the egress policy's reason.
    Refused(String),
}

/// How a stdio server was prepared to start: for the header.
#[derive(Debug, Clone, Default)]
struct Launched {
    granted: Vec<PathBuf>,
    instead: Option<String>,
}

impl ServerStatus {
    /// What was done so that it runs in the sandbox, in lines (none when nothing was).
    pub fn preparation(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(instead) = &self.instead {
            lines.push(format!("mcp {}: {instead}", self.name));
        }
        if !self.granted.is_empty() {
            let shown: Vec<String> = self
                .granted
                .iter()
                .map(|path| path.display().to_string())
                .collect();
            lines.push(format!(
                "mcp {} may read (read-only, nothing else outside the sandbox): {}",
                self.name,
                shown.join(", ")
            ));
        }
        lines
    }
}

async fn start_one(
    config: &ServerConfig,
    origin: Origin,
    place: &Place<'_>,
) -> (Result<Started, wright_mcp::ServerError>, Launched) {
    let mut launched = Launched::default();
    let result = match &config.transport {
        Transport::Stdio { command, args, env } => {
            start_stdio(config, origin, place, (command, args, env), &mut launched).await
        }
        Transport::Http { url, headers } => start_http(config, place, url, headers).await,
    };
    (result, launched)
}

type StdioEntry<'a> = (
    &'a String,
    &'a Vec<String>,
    &'a std::collections::BTreeMap<String, String>,
);

async fn start_stdio(
    config: &ServerConfig,
    origin: Origin,
    place: &Place<'_>,
    (command, args, env): StdioEntry<'_>,
    launched: &mut Launched,
) -> Result<Started, wright_mcp::ServerError> {
    let fail = |why: String| Err(wright_mcp::ServerError(why));
    let launch = match crate::mcp_program::plan(command, args, &place.host()) {
        Plan::Launch(launch) => launch,
        Plan::Refused(why) => return fail(why),
    };
    launched.instead = launch.instead.clone();
    if let Some(download) = &launch.download {
        // npm and uv would retry a silent registry until the start deadline.
        registry_answers(command, args, download).await?;
    }
    let Some((sandbox, added)) = place.sandbox.with_read_only(&launch.read) else {
        return fail(format!(
            "it must read {} outside the workspace, and a Docker sandbox's container cannot be given more files once it runs; use --sandbox auto, or install the server in the image",
            shown(&launch.read)
        ));
    };
    if !added.is_empty() && origin == Origin::Repository {
        // A repository names what its server reads: never a path outside it.
        return fail(format!(
            "it would have to read {} outside the workspace, which wright gives only to the servers of your own configuration ({})",
            shown(&added),
            user_file().map_or_else(|| "mcp.json".into(), |p| p.display().to_string())
        ));
    }
    launched.granted = added;
    let mut all: Vec<(String, String)> = place.env.to_vec();
    all.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let args: Vec<&str> = launch.args.iter().map(String::as_str).collect();
    // The sandbox's check may still be under way: waited for without blocking.
    if let Err(err) = sandbox.ready().await {
        return fail(err.to_string());
    }
    let command = match sandbox.command(place.cwd, &all, &launch.command, &args) {
        Ok(command) => command,
        Err(err) => return fail(err.to_string()),
    };
    let (server, listed) = Server::start_stdio(config, command.into()).await?;
    Ok(Started::Connected(server, listed))
}

/// Fails at once, naming the host and the fix, when a registry `download` needs does not
/// answer.
async fn registry_answers(
    command: &str,
    args: &[String],
    download: &crate::mcp_program::Download,
) -> Result<(), wright_mcp::ServerError> {
    for host in &download.hosts {
        let asked = crate::mcp_registry::answers(host, 443, crate::mcp_registry::ANSWER_WITHIN);
        if let Err(why) = asked.await {
            let written = std::iter::once(command)
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            return Err(wright_mcp::ServerError(format!(
                "`{written}` would download {} from {host}, which does not answer from this machine ({why}), so it would only wait until the start deadline. Install it once, outside wright: `{}` — this entry then runs it from there, offline, read-only",
                download.package, download.install
            )));
        }
    }
    Ok(())
}

async fn start_http(
    config: &ServerConfig,
    place: &Place<'_>,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<Started, wright_mcp::ServerError> {
    let destination = wright_llm::destination(url);
    let host = wright_llm::host_and_port(url);
    let granted = Consent::open(&Consent::default_path())
        .map(|record| record.allows(consent::Kind::Egress, place.repo, &host))
        .unwrap_or(false);
    match place.settings.egress_verdict(destination, url, granted) {
        EgressVerdict::Allowed => {}
        EgressVerdict::Refused(why) => return Ok(Started::Refused(why)),
        EgressVerdict::Ask => {
            return Ok(Started::Refused(format!(
                "{url} is not on this machine, and what the agent sends it may hold this repository's code: `wright allow egress {host}` allows it, or set egress = \"any\""
            )))
        }
    }
    let (server, listed) = Server::connect_http(config, url, headers).await?;
    Ok(Started::Connected(server, listed))
}

fn shown(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A server's command line or URL, for people.
fn target(config: &ServerConfig) -> String {
    match &config.transport {
        Transport::Stdio { command, args, .. } => std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        Transport::Http { url, .. } => url.clone(),
    }
}
