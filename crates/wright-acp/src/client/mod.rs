//! wright as an ACP *client*: another coding agent that speaks the Agent Client Protocol
//! (`[agents.NAME]` in the user's own configuration) takes a conversation's steps
//! instead of wright's own loop. It lives beside the agent side in this crate because
//! both are the same protocol over the same connection crate; the CLI and the server
//! stay thin over it and `wright_session`.
//!
//! What it guarantees:
//! - The agent's process runs inside the conversation's sandbox, in its clone, with the
//!   sandbox's scrubbed environment (and its table's `env`): what the agent runs itself
//!   is confined as wright's own commands are, and reaches only the hosts the sandbox
//!   lets through (its table's `allow_hosts` among them).
//! - What it asks wright to do — read or write a file, run a command (the `fs` and
//!   `terminal` client capabilities) — is done with wright's own tools, through the
//!   loop's path: logged before it takes effect, rated, asked about, hooked (`serve`).
//! - What it only reports (its own tools) is logged as reported (`record`), and its
//!   permission requests go through wright's confirmation flow.
//! - Its stop reason becomes the conversation's state (`end_turn` finished,
//!   `max_tokens`/`max_turn_requests` stopped at a limit, `refusal` stopped,
//!   `cancelled` interrupted).

mod record;
mod serve;
mod spawn;
mod turn;

pub use record::REPORTED;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::CancelNotification;
use agent_client_protocol::v1::schema::ClientCapabilities;
use agent_client_protocol::v1::schema::ContentBlock;
use agent_client_protocol::v1::schema::CreateTerminalRequest;
use agent_client_protocol::v1::schema::FileSystemCapabilities;
use agent_client_protocol::v1::schema::Implementation;
use agent_client_protocol::v1::schema::InitializeRequest;
use agent_client_protocol::v1::schema::KillTerminalRequest;
use agent_client_protocol::v1::schema::LoadSessionRequest;
use agent_client_protocol::v1::schema::NewSessionRequest;
use agent_client_protocol::v1::schema::PromptRequest;
use agent_client_protocol::v1::schema::ReadTextFileRequest;
use agent_client_protocol::v1::schema::ReleaseTerminalRequest;
use agent_client_protocol::v1::schema::RequestPermissionRequest;
use agent_client_protocol::v1::schema::SessionNotification;
use agent_client_protocol::v1::schema::StopReason as AcpStop;
use agent_client_protocol::v1::schema::TerminalOutputRequest;
use agent_client_protocol::v1::schema::WaitForTerminalExitRequest;
use agent_client_protocol::v1::schema::WriteTextFileRequest;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Agent;
use agent_client_protocol::Error;
use anyhow::Context;
use anyhow::Result;
use std::sync::Arc;
use std::sync::Mutex;
use tokio::io::AsyncBufReadExt;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use turn::handle;
use turn::refuse;
use turn::Incoming;
use turn::Turn;
use wright_config::agents::AgentConfig;
use wright_protocol::AgentState;
use wright_protocol::StopReason;
use wright_session::agent_session::AgentSession;
use wright_session::external::Ended;
use wright_session::Finished;
use wright_session::Observer;
use wright_session::Running as Conversation;
use wright_session::Session;

/// The state and stop reason of a conversation whose agent's turn ended with `stop`.
pub fn conversation_end(stop: AcpStop, agent: &str) -> (AgentState, StopReason) {
    let other = |text: String| StopReason::Other { text };
    match stop {
        AcpStop::EndTurn => (AgentState::Finished, StopReason::Finished),
        AcpStop::MaxTokens => (
            AgentState::Stopped,
            other(format!("{agent} stopped at its token limit (max_tokens)")),
        ),
        AcpStop::MaxTurnRequests => (
            AgentState::Stopped,
            other(format!(
                "{agent} stopped at its limit of requests for the turn (max_turn_requests)"
            )),
        ),
        AcpStop::Refusal => (
            AgentState::Stopped,
            other(format!("{agent} refused to go on (refusal)")),
        ),
        AcpStop::Cancelled => (
            AgentState::Stopped,
            StopReason::Interrupted {
                why: Some(format!("{agent} answered cancelled")),
            },
        ),
        _ => (
            AgentState::Stopped,
            other(format!("{agent} stopped for a reason wright does not know")),
        ),
    }
}

/// The prompts after the first, for a front end that goes on with the agent over many
/// turns in one of its sessions (`wright chat --agent`).
#[async_trait::async_trait]
pub trait Prompts: Send {
    /// The next prompt, and the token that cancels its turn, once the last turn ended
    /// (`ended`, everything of it logged); `None` ends the conversation.
    async fn next(&mut self, ended: &Ended) -> Option<(String, CancellationToken)>;
}

/// Runs `task` with the external agent `agent` in `session`'s sandbox and clone, in
/// `conversation` (as `Session::begin_external` opened it, or read back from its log for
/// `wright resume ID MESSAGE`, its confirmer set), in the agent's session `opening` says
/// (a new one, or the one recorded when it was made, loaded with `session/load`: an agent
/// that does not say in `initialize` that it loads sessions fails the run, the reason
/// logged); then finishes the session as every front end does (the working copy handed
/// over, a `changes` event last). `observer` sees the events logged so far first.
pub async fn run_to_end(
    session: Session,
    conversation: Conversation,
    agent: &AgentConfig,
    task: &str,
    opening: Opening<'_>,
    cancel: &CancellationToken,
    observer: &mut dyn Observer,
) -> Result<(Ended, Finished)> {
    converse_to_end(
        session,
        conversation,
        agent,
        task,
        cancel,
        opening,
        None,
        observer,
    )
    .await
}

/// How the agent's session is opened for a run.
#[derive(Debug, Clone, Copy)]
pub enum Opening<'a> {
    /// A new one (`session/new`), recorded in the conversation's directory.
    New,
    /// The one it had (`session/load`, by the id recorded when it was made): a resumed
    /// conversation goes on in it, the agent holding its own history.
    Load(&'a AgentSession),
}

/// `run_to_end` over many turns: after each turn, `prompts` gives the next prompt, sent
/// in the same session of the agent's (which keeps its own history), each turn logged
/// as a run of the conversation (the prompt as the user's message, its `running` state,
/// what the agent did, the state its stop reason maps to); the session is finished
/// once `prompts` has no more.
#[allow(clippy::too_many_arguments)]
pub async fn converse_to_end(
    session: Session,
    mut conversation: Conversation,
    agent: &AgentConfig,
    task: &str,
    cancel: &CancellationToken,
    opening: Opening<'_>,
    prompts: Option<&mut (dyn Prompts + 'static)>,
    observer: &mut dyn Observer,
) -> Result<(Ended, Finished)> {
    for event in conversation.events() {
        observer.event(event);
    }
    let ended = run(
        &session,
        &mut conversation,
        agent,
        task,
        cancel,
        opening,
        prompts,
        observer,
    )
    .await?;
    let summary = ended
        .summary()
        .filter(|_| ended.state() == AgentState::Finished)
        .map(str::to_string);
    let finished = session
        .finish_external(conversation, task, summary.as_deref(), observer)
        .await?;
    Ok((ended, finished))
}

/// The agent's run: to the answer of its prompt, every update and request in between
/// logged and answered in the order they came.
#[allow(clippy::too_many_arguments)]
async fn run(
    session: &Session,
    conversation: &mut Conversation,
    agent: &AgentConfig,
    task: &str,
    cancel: &CancellationToken,
    opening: Opening<'_>,
    prompts: Option<&mut (dyn Prompts + 'static)>,
    observer: &mut dyn Observer,
) -> Result<Ended> {
    if let Some(refused) = conversation
        .begin_external(observer, Some(task), cancel)
        .await?
    {
        return Ok(refused);
    }
    let mut child = match spawn::start(session, agent) {
        Ok(child) => child,
        // An agent that cannot be started (its sandbox refused here, its program
        // missing) fails the run, logged, as one that breaks mid-turn does.
        Err(err) => {
            let message = format!("the agent {} could not start: {err:#}", agent.name);
            return fail(conversation, observer, message).await;
        }
    };
    let stdin = child.stdin.take().context("the agent's stdin")?;
    let stdout = child.stdout.take().context("the agent's stdout")?;
    let stderr_tail = Arc::new(Mutex::new(String::new()));
    if let Some(mut stderr) = child.stderr.take() {
        let tail = stderr_tail.clone();
        tokio::spawn(async move {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = stderr.read(&mut buffer).await {
                if read == 0 {
                    break;
                }
                let mut kept = tail.lock().unwrap_or_else(|p| p.into_inner());
                kept.push_str(&String::from_utf8_lossy(&buffer[..read]));
                let excess = kept.len().saturating_sub(4096);
                if excess > 0 {
                    let cut = kept.ceil_char_boundary(excess);
                    kept.drain(..cut);
                }
            }
        });
    }
    let lines = tokio::io::BufReader::new(stdout).lines();
    let incoming = futures::stream::unfold(lines, |mut lines| async move {
        match lines.next_line().await {
            Ok(Some(line)) => Some((Ok(line), lines)),
            Ok(None) => None,
            Err(err) => Some((Err(err), lines)),
        }
    });
    let outgoing = futures::sink::unfold(stdin, |mut stdin, line: String| async move {
        stdin.write_all(line.as_bytes()).await?;
        stdin.write_all(b"\n").await?;
        stdin.flush().await?;
        Ok::<_, std::io::Error>(stdin)
    });
    let transport = agent_client_protocol::Lines::new(Box::pin(outgoing), Box::pin(incoming));
    let (sender, inbox) = mpsc::unbounded_channel::<Incoming>();
    let driven = drive(
        transport,
        sender,
        inbox,
        Driving {
            session,
            conversation,
            agent,
            task,
            cancel: cancel.clone(),
            opening,
            prompts,
            observer,
        },
    )
    .await;
    let _ = child.start_kill();
    let _ = child.wait().await;
    match driven {
        Ok(outcome) => Ok(outcome),
        Err(err) => {
            let tail = stderr_tail
                .lock()
                .map(|t| t.trim().to_string())
                .unwrap_or_default();
            let said = match tail.is_empty() {
                true => String::new(),
                false => format!("; it said: {tail}"),
            };
            // The run fails, logged, and the session is still finished: the clone is
            // handed over with whatever the agent did before it broke.
            let message = format!("the agent {} failed: {err}{said}", agent.name);
            fail(conversation, observer, message).await
        }
    }
}

/// Ends the run as failed: `message` logged as an error, then as the stop reason.
async fn fail(
    conversation: &mut Conversation,
    observer: &mut dyn Observer,
    message: String,
) -> Result<Ended> {
    conversation.log_external(
        observer,
        wright_protocol::Source::Environment,
        wright_protocol::EventBody::Error {
            message: message.clone(),
        },
    )?;
    conversation
        .end_external(
            observer,
            AgentState::Failed,
            StopReason::Other { text: message },
            None,
        )
        .await
}

/// What the run works with while the agent's prompt is in flight.
pub(super) struct Driving<'a> {
    pub(super) session: &'a Session,
    pub(super) conversation: &'a mut Conversation,
    pub(super) agent: &'a AgentConfig,
    pub(super) task: &'a str,
    /// Cancels the turn in flight (each turn of a chat has its own).
    pub(super) cancel: CancellationToken,
    /// How the agent's session is opened.
    pub(super) opening: Opening<'a>,
    /// The prompts after the first, when the front end goes on (a chat).
    pub(super) prompts: Option<&'a mut (dyn Prompts + 'static)>,
    pub(super) observer: &'a mut dyn Observer,
}

macro_rules! forward {
    ($sender:expr, $variant:ident, $request:ty) => {{
        let sender = $sender.clone();
        async move |request: $request, responder, _connection| {
            let _ = sender.send(Incoming::$variant(request, responder));
            Ok(())
        }
    }};
}

async fn drive(
    transport: impl agent_client_protocol::ConnectTo<agent_client_protocol::Client> + 'static,
    sender: mpsc::UnboundedSender<Incoming>,
    mut inbox: mpsc::UnboundedReceiver<Incoming>,
    mut driving: Driving<'_>,
) -> Result<Ended> {
    let updates = sender.clone();
    let result = agent_client_protocol::Client
        .v1()
        .name("wright")
        .on_receive_notification(
            async move |notification: SessionNotification, _connection| {
                let _ = updates.send(Incoming::Update(notification));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            forward!(sender, Read, ReadTextFileRequest),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            forward!(sender, Write, WriteTextFileRequest),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            forward!(sender, Terminal, CreateTerminalRequest),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            forward!(sender, Output, TerminalOutputRequest),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            forward!(sender, Wait, WaitForTerminalExitRequest),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            forward!(sender, Kill, KillTerminalRequest),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            forward!(sender, Release, ReleaseTerminalRequest),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            forward!(sender, Permission, RequestPermissionRequest),
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async |connection: ConnectionTo<Agent>| {
            Ok(converse(&connection, &mut inbox, &mut driving).await)
        })
        .await;
    match result {
        Ok(outcome) => outcome,
        Err(err) => Err(anyhow::anyhow!("{err}")),
    }
}

/// Initializes the agent, opens its session on the clone, sends the task, and answers
/// what comes until the prompt's answer; then each next prompt (a chat's) in the same
/// session, each turn opened and ended in the log as a run.
async fn converse(
    connection: &ConnectionTo<Agent>,
    inbox: &mut mpsc::UnboundedReceiver<Incoming>,
    driving: &mut Driving<'_>,
) -> Result<Ended> {
    let capabilities = ClientCapabilities::new()
        .fs(FileSystemCapabilities::new()
            .read_text_file(true)
            .write_text_file(true))
        .terminal(true);
    let initialize = InitializeRequest::new(ProtocolVersion::V1)
        .client_capabilities(capabilities)
        .client_info(Implementation::new("wright", env!("CARGO_PKG_VERSION")));
    let asked = connection.send_request(initialize).block_task();
    let initialized = answered(asked, inbox).await?;
    let loads = initialized.agent_capabilities.load_session;
    let cwd = driving.session.tools.workspace.root().to_path_buf();
    let name = driving.agent.name.clone();
    let session_id = match driving.opening {
        Opening::New => {
            let asked = connection
                .send_request(NewSessionRequest::new(cwd))
                .block_task();
            let opened = answered(asked, inbox).await?;
            // Recorded before its first prompt: a run cut off still leaves the id.
            AgentSession {
                agent: name,
                session_id: opened.session_id.to_string(),
                load_session: loads,
            }
            .write(&driving.session.conversation_dir)?;
            opened.session_id
        }
        Opening::Load(record) => {
            if !loads {
                anyhow::bail!(
                    "the agent {name} does not load sessions (it does not offer loadSession in initialize): resuming its conversation is not possible"
                );
            }
            let id = agent_client_protocol::v1::schema::SessionId::new(record.session_id.clone());
            // What it replays of its history comes as updates before the answer: not
            // logged again (the log has it).
            let asked = connection
                .send_request(LoadSessionRequest::new(id.clone(), cwd))
                .block_task();
            answered(asked, inbox).await?;
            id
        }
    };
    let task = driving.task;
    let mut ended = prompt_turn(connection, inbox, driving, &session_id, task).await?;
    loop {
        let Some(prompts) = driving.prompts.as_mut() else {
            return Ok(ended);
        };
        let Some((text, cancel)) = prompts.next(&ended).await else {
            return Ok(ended);
        };
        driving.cancel = cancel;
        let refused = driving
            .conversation
            .begin_external(&mut *driving.observer, Some(&text), &driving.cancel)
            .await?;
        ended = match refused {
            // A hook refused the prompt: that turn ended there, logged.
            Some(refused) => refused,
            None => prompt_turn(connection, inbox, driving, &session_id, &text).await?,
        };
    }
}

/// One prompt of the agent's session, to its answer: what comes meanwhile answered and
/// logged, the turn ended in the log with the state its stop reason maps to.
async fn prompt_turn(
    connection: &ConnectionTo<Agent>,
    inbox: &mut mpsc::UnboundedReceiver<Incoming>,
    driving: &mut Driving<'_>,
    session_id: &agent_client_protocol::v1::schema::SessionId,
    text: &str,
) -> Result<Ended> {
    let name = driving.agent.name.clone();
    let session_id = session_id.clone();
    let prompt = PromptRequest::new(
        session_id.clone(),
        vec![ContentBlock::from(text.to_string())],
    );
    let asked = connection.send_request(prompt).block_task();
    tokio::pin!(asked);
    let mut state = Turn::default();
    let stop = loop {
        tokio::select! {
            answer = &mut asked => {
                // What came before the answer is logged before the run ends.
                while let Ok(incoming) = inbox.try_recv() {
                    handle(incoming, driving, &mut state, connection, &session_id).await?;
                }
                break answer.map_err(|err| anyhow::anyhow!("{err}"))?.stop_reason;
            }
            Some(incoming) = inbox.recv() => {
                handle(incoming, driving, &mut state, connection, &session_id).await?;
            }
            _ = driving.cancel.cancelled(), if !state.cancel_sent => {
                state.cancel_sent = true;
                let _ = connection.send_notification(CancelNotification::new(session_id.clone()));
            }
        }
    };
    state
        .recorder
        .flush(driving.conversation, driving.observer)?;
    if let Some(ended) = state.ended {
        return Ok(ended);
    }
    let (agent_state, reason) = match (stop, driving.cancel.is_cancelled()) {
        (AcpStop::Cancelled, true) => (
            AgentState::Stopped,
            driving.conversation.external_cancel_reason(),
        ),
        (stop, _) => conversation_end(stop, &name),
    };
    let summary = state.recorder.last_words.clone();
    driving
        .conversation
        .end_external(driving.observer, agent_state, reason, summary)
        .await
}

/// Waits for an answer of the agent's while answering what it sends meanwhile.
async fn answered<T>(
    asked: impl std::future::Future<Output = Result<T, Error>>,
    inbox: &mut mpsc::UnboundedReceiver<Incoming>,
) -> Result<T> {
    tokio::pin!(asked);
    loop {
        tokio::select! {
            answer = &mut asked => return answer.map_err(|err| anyhow::anyhow!("{err}")),
            Some(incoming) = inbox.recv() => {
                // Before a session exists the agent has nothing to ask: refused.
                refuse(incoming);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn each_stop_reason_maps_to_a_state() {
        let states: Vec<AgentState> = [
            AcpStop::EndTurn,
            AcpStop::MaxTokens,
            AcpStop::MaxTurnRequests,
            AcpStop::Refusal,
            AcpStop::Cancelled,
        ]
        .into_iter()
        .map(|stop| conversation_end(stop, "other").0)
        .collect();
        assert_eq!(
            states,
            [
                AgentState::Finished,
                AgentState::Stopped,
                AgentState::Stopped,
                AgentState::Stopped,
                AgentState::Stopped
            ]
        );
        assert!(matches!(
            conversation_end(AcpStop::Cancelled, "other").1,
            StopReason::Interrupted { .. }
        ));
    }
}
