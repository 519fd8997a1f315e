//! The requests that open a session: `initialize` (what wright offers), `session/new`
//! (a session on a workspace, its id the conversation's to come) and `session/load` (a
//! conversation that exists, by its id, replayed to the editor as updates before the
//! answer, as the protocol asks).

use crate::front::Unsessioned;
use crate::notify::Notifier;
use crate::updates::Updates;
use crate::Host;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::AgentCapabilities;
use agent_client_protocol::v1::schema::Implementation;
use agent_client_protocol::v1::schema::InitializeRequest;
use agent_client_protocol::v1::schema::InitializeResponse;
use agent_client_protocol::v1::schema::LoadSessionRequest;
use agent_client_protocol::v1::schema::LoadSessionResponse;
use agent_client_protocol::v1::schema::McpServer;
use agent_client_protocol::v1::schema::NewSessionRequest;
use agent_client_protocol::v1::schema::NewSessionResponse;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use agent_client_protocol::Error;
use agent_client_protocol::ErrorCode;
use std::sync::Arc;
use wright_session::stored::conversations_root as conversations_dir;
use wright_session::Observer;

/// Protocol version 1 (the only one stable), loading sessions, prompts of text and links
/// (the baseline: no images, sounds or embedded resources).
pub(crate) fn initialize(_request: &InitializeRequest) -> InitializeResponse {
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(AgentCapabilities::new().load_session(true))
        .agent_info(Implementation::new("wright", env!("CARGO_PKG_VERSION")).title("wright"))
}

pub(crate) async fn new_session(
    host: Arc<Host>,
    request: NewSessionRequest,
) -> Result<NewSessionResponse, Error> {
    let workspace = request.cwd;
    if !workspace.is_absolute() {
        return Err(invalid(format!(
            "cwd must be an absolute path, not {}",
            workspace.display()
        )));
    }
    ignore_mcp(&host, &request.mcp_servers);
    // Reading the repository's configuration blocks on git: off the runtime's threads.
    let checked = {
        let host = host.clone();
        let workspace = workspace.clone();
        tokio::task::spawn_blocking(move || {
            let front = Unsessioned {
                starter: host.starter.as_ref(),
            };
            host.starter.check(&workspace, &front)
        })
        .await
    };
    match checked {
        Ok(Ok(())) => {}
        Ok(Err(err)) => return Err(crate::failure::answer(&err, ErrorCode::INVALID_PARAMS)),
        Err(err) => return Err(Error::new(ErrorCode::INTERNAL_ERROR, err.to_string())),
    }
    let id = loop {
        let id = wright_session::stored::new_id();
        let taken = host.sessions.contains(&id) || conversations_dir().join(&id).exists();
        if !taken {
            break id;
        }
    };
    host.sessions
        .open(&id, workspace)
        .map_err(|refusal| crate::refused(&refusal))?;
    Ok(NewSessionResponse::new(id))
}

pub(crate) async fn load_session(
    host: Arc<Host>,
    request: LoadSessionRequest,
    connection: ConnectionTo<Client>,
) -> Result<LoadSessionResponse, Error> {
    let id = request.session_id.to_string();
    let log = conversations_dir().join(&id).join("events.jsonl");
    if !wright_session::stored::is_plain_id(&id) || !log.is_file() {
        return Err(agent_client_protocol::v1::schema::Error::session_not_found(id).into());
    }
    ignore_mcp(&host, &request.mcp_servers);
    let logged = wright_protocol::read_log(&log)
        .map_err(|err| Error::new(ErrorCode::INTERNAL_ERROR, err.to_string()))?;
    host.sessions
        .open(&id, request.cwd)
        .map_err(|refusal| crate::refused(&refusal))?;
    let mut replay = Updates::replay(Notifier::new(connection, &id), &id);
    for event in &logged.events {
        replay.event(event);
    }
    Ok(LoadSessionResponse::new())
}

/// The editor's MCP servers are not used: said once per session, on stderr.
fn ignore_mcp(host: &Host, servers: &[McpServer]) {
    if !servers.is_empty() {
        host.starter.diagnostic(&format!(
            "wright acp: the editor offered {} MCP server(s); wright does not use MCP servers yet",
            servers.len()
        ));
    }
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}
