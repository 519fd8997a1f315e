//! wright as an agent of the Agent Client Protocol (ACP): editors that speak it (Zed,
//! JetBrains, Neovim plugins) start `wright acp` and drive it over its stdin and stdout,
//! JSON-RPC, through the `agent-client-protocol` crate's v1 connection.
//!
//! ```text
//! initialize            → protocol 1, loadSession
//! session/new {cwd}     → a session whose id is its conversation's (wright ls, apply)
//! session/load {id}     → the conversation's log replayed as updates
//! session/prompt        → the first: the task (a clone on a new branch, as wright run);
//!                         later: a message going on (as wright resume ID MESSAGE);
//!                         session/update all along; the stop reason at its end;
//!                         session/request_permission to the editor before a risky call
//! session/cancel        → the prompt stops once the step in flight is logged: cancelled
//! ```
//!
//! A front end like the CLI and the server, over wright-session: it prepares, runs and
//! finishes sessions through the library, and resolves settings through the program
//! around it (`Starter`). It never writes the terminal: stdout is the protocol's, and
//! the program gets the rest (`Starter::diagnostic`). Handlers never hold the
//! connection's dispatch loop: each request's work runs in a task of its own, so a
//! cancel is read while a prompt runs. When the editor closes the connection, every
//! running prompt is stopped after its step and its changes handed over before `serve`
//! returns.

pub mod client;
mod failure;
mod front;
mod notify;
mod permission;
mod prompt;
mod sessions;
mod setup;
mod starter;
mod stop;
mod tool_calls;
mod updates;

pub use starter::SettingsStarter;
pub use starter::Starter;

use agent_client_protocol::v1::schema::CancelNotification;
use agent_client_protocol::v1::schema::InitializeRequest;
use agent_client_protocol::v1::schema::LoadSessionRequest;
use agent_client_protocol::v1::schema::NewSessionRequest;
use agent_client_protocol::v1::schema::PromptRequest;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::Agent;
use agent_client_protocol::ConnectTo;
use agent_client_protocol::Error;
use agent_client_protocol::ErrorCode;
use agent_client_protocol::JsonRpcResponse;
use std::future::Future;
use std::sync::Arc;
use tokio_util::task::TaskTracker;

/// Why serving stopped other than by the editor closing the connection.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    #[error("the ACP connection failed: {0}")]
    Connection(Error),
}

/// What the handlers share.
pub(crate) struct Host {
    pub(crate) starter: Arc<dyn Starter>,
    pub(crate) sessions: sessions::Sessions,
    tasks: TaskTracker,
}

impl Host {
    /// Runs a request's work in a task of its own, and answers it with the result.
    fn answer<T: JsonRpcResponse + Send + 'static>(
        &self,
        responder: Responder<T>,
        work: impl Future<Output = Result<T, Error>> + Send + 'static,
    ) {
        self.tasks.spawn(async move {
            // The editor may be gone: the work is done (and logged) either way.
            let _ = responder.respond_with_result(work.await);
        });
    }
}

/// Serves the protocol on this process's stdin and stdout until the editor closes them or
/// `shutdown` resolves (see `serve`).
pub async fn serve_stdio(
    starter: Arc<dyn Starter>,
    shutdown: impl Future<Output = &'static str>,
) -> Result<(), AcpError> {
    serve(starter, agent_client_protocol::Stdio::new(), shutdown).await
}

/// Serves the protocol on `transport` until the editor closes it, or `shutdown` resolves
/// with the reason the runs in flight then log (a signal, say: the connection is dropped
/// at once). The prompts still running are stopped after their step and finished
/// before it returns.
pub async fn serve(
    starter: Arc<dyn Starter>,
    transport: impl ConnectTo<Agent> + 'static,
    shutdown: impl Future<Output = &'static str>,
) -> Result<(), AcpError> {
    let host = Arc::new(Host {
        starter,
        sessions: sessions::Sessions::default(),
        tasks: TaskTracker::new(),
    });
    let (new, load, run, cancel) = (host.clone(), host.clone(), host.clone(), host.clone());
    let served = Agent
        .v1()
        .name("wright")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _connection| {
                responder.respond(setup::initialize(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, _connection| {
                new.answer(responder, setup::new_session(new.clone(), request));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, connection| {
                load.answer(
                    responder,
                    setup::load_session(load.clone(), request, connection),
                );
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, connection| {
                run.answer(responder, prompt::prompt(run.clone(), request, connection));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _connection| {
                cancel.sessions.cancel(&notification.session_id.to_string());
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport);
    let (served, why) = tokio::select! {
        served = served => (served, sessions::CLOSED),
        why = shutdown => (Ok(()), why),
    };
    host.sessions.stop_all(why);
    host.tasks.close();
    host.tasks.wait().await;
    served.map_err(AcpError::Connection)
}

/// A refused prompt or session as the protocol's error: an unknown session is the
/// protocol's "not found", a busy one a bad request.
pub(crate) fn refused(refusal: &sessions::Refusal) -> Error {
    match refusal {
        sessions::Refusal::Unknown(id) => {
            let mut error: Error =
                agent_client_protocol::v1::schema::Error::session_not_found(id.clone()).into();
            error.message = refusal.to_string();
            error
        }
        sessions::Refusal::Busy(_) => Error::new(ErrorCode::INVALID_REQUEST, refusal.to_string()),
    }
}
