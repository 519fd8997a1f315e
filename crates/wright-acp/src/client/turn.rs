//! One turn of an external agent: what it sends while its prompt is in flight
//! (`Incoming`, in the order it came), each logged and answered — its updates recorded,
//! its file and terminal requests served by wright's tools, its permission requests
//! asked through the confirmation flow — and refused outside its turn.

use super::record;
use super::serve;
use super::Driving;
use super::REPORTED;
use agent_client_protocol::v1::schema::CancelNotification;
use agent_client_protocol::v1::schema::CreateTerminalRequest;
use agent_client_protocol::v1::schema::CreateTerminalResponse;
use agent_client_protocol::v1::schema::KillTerminalRequest;
use agent_client_protocol::v1::schema::KillTerminalResponse;
use agent_client_protocol::v1::schema::PermissionOptionKind;
use agent_client_protocol::v1::schema::ReadTextFileRequest;
use agent_client_protocol::v1::schema::ReadTextFileResponse;
use agent_client_protocol::v1::schema::ReleaseTerminalRequest;
use agent_client_protocol::v1::schema::ReleaseTerminalResponse;
use agent_client_protocol::v1::schema::RequestPermissionOutcome;
use agent_client_protocol::v1::schema::RequestPermissionRequest;
use agent_client_protocol::v1::schema::RequestPermissionResponse;
use agent_client_protocol::v1::schema::SelectedPermissionOutcome;
use agent_client_protocol::v1::schema::SessionNotification;
use agent_client_protocol::v1::schema::TerminalExitStatus;
use agent_client_protocol::v1::schema::TerminalOutputRequest;
use agent_client_protocol::v1::schema::TerminalOutputResponse;
use agent_client_protocol::v1::schema::WaitForTerminalExitRequest;
use agent_client_protocol::v1::schema::WaitForTerminalExitResponse;
use agent_client_protocol::v1::schema::WriteTextFileRequest;
use agent_client_protocol::v1::schema::WriteTextFileResponse;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::Agent;
use agent_client_protocol::Error;
use agent_client_protocol::ErrorCode;
use anyhow::Result;
use serde_json::json;
use wright_protocol::Decision;
use wright_protocol::Pending;
use wright_protocol::Risk;
use wright_session::external::Ended;
use wright_session::external::Permitted;
use wright_session::external::Served;
use wright_session::Running as Conversation;

/// What the agent sends that wright answers, in the order it came.
pub(super) enum Incoming {
    Update(SessionNotification),
    Read(ReadTextFileRequest, Responder<ReadTextFileResponse>),
    Write(WriteTextFileRequest, Responder<WriteTextFileResponse>),
    Terminal(CreateTerminalRequest, Responder<CreateTerminalResponse>),
    Output(TerminalOutputRequest, Responder<TerminalOutputResponse>),
    Wait(
        WaitForTerminalExitRequest,
        Responder<WaitForTerminalExitResponse>,
    ),
    Kill(KillTerminalRequest, Responder<KillTerminalResponse>),
    Release(ReleaseTerminalRequest, Responder<ReleaseTerminalResponse>),
    Permission(
        RequestPermissionRequest,
        Responder<RequestPermissionResponse>,
    ),
}

/// Refuses what the agent asks outside its turn (before its session exists, after the
/// run ended).
pub(super) fn refuse(incoming: Incoming) {
    let no = || {
        Error::new(
            ErrorCode::INVALID_REQUEST,
            "wright is not taking requests now",
        )
    };
    let _ = match incoming {
        Incoming::Update(_) => Ok(()),
        Incoming::Read(_, r) => r.respond_with_error(no()),
        Incoming::Write(_, r) => r.respond_with_error(no()),
        Incoming::Terminal(_, r) => r.respond_with_error(no()),
        Incoming::Output(_, r) => r.respond_with_error(no()),
        Incoming::Wait(_, r) => r.respond_with_error(no()),
        Incoming::Kill(_, r) => r.respond_with_error(no()),
        Incoming::Release(_, r) => r.respond_with_error(no()),
        Incoming::Permission(_, r) => r.respond_with_error(no()),
    };
}

/// What one turn keeps between the agent's messages.
#[derive(Default)]
pub(super) struct Turn {
    pub(super) recorder: record::Recorder,
    pub(super) terminals: serve::Terminals,
    pub(super) calls: u64,
    pub(super) cancel_sent: bool,
    /// The run ended while the agent worked (a permission nobody could answer, a cancel
    /// while it waited): how.
    pub(super) ended: Option<Ended>,
}

pub(super) async fn handle(
    incoming: Incoming,
    driving: &mut Driving<'_>,
    turn: &mut Turn,
    connection: &ConnectionTo<Agent>,
    session_id: &agent_client_protocol::v1::schema::SessionId,
) -> Result<()> {
    let conversation = &mut *driving.conversation;
    let observer = &mut *driving.observer;
    let workspace = driving.session.tools.workspace.clone();
    if !matches!(incoming, Incoming::Update(_)) {
        turn.recorder.flush(conversation, observer)?;
    }
    if turn.ended.is_some() {
        // The run is over: nothing more is done for the agent.
        refuse(incoming);
        return Ok(());
    }
    match incoming {
        Incoming::Update(notification) => {
            turn.recorder
                .update(conversation, observer, notification.update)?;
        }
        Incoming::Read(request, responder) => {
            turn.calls += 1;
            let answer = match serve::read_call(
                workspace.root(),
                &request,
                serve::call_id("read", turn.calls),
            ) {
                Err(err) => Err(err),
                Ok((call, path)) => {
                    conversation.next_external_step();
                    let served = conversation
                        .serve_external(observer, &driving.cancel, &call)
                        .await?;
                    match serve::refused(&served) {
                        Some(err) => {
                            keep_end(turn, served);
                            Err(err)
                        }
                        None => serve::read_text(&workspace, &path, request.line, request.limit)
                            .map(ReadTextFileResponse::new),
                    }
                }
            };
            let _ = responder.respond_with_result(answer);
        }
        Incoming::Write(request, responder) => {
            turn.calls += 1;
            let answer = match serve::write_call(
                &workspace,
                &request,
                serve::call_id("write", turn.calls),
            ) {
                Err(err) => Err(err),
                Ok(call) => {
                    conversation.next_external_step();
                    let served = conversation
                        .serve_external(observer, &driving.cancel, &call)
                        .await?;
                    let failed = match &served {
                        Served::Observed {
                            output,
                            is_error: true,
                            ..
                        } => Some(Error::new(ErrorCode::INTERNAL_ERROR, output.clone())),
                        _ => serve::refused(&served),
                    };
                    keep_end(turn, served);
                    match failed {
                        Some(err) => Err(err),
                        None => Ok(WriteTextFileResponse::new()),
                    }
                }
            };
            let _ = responder.respond_with_result(answer);
        }
        Incoming::Terminal(request, responder) => {
            turn.calls += 1;
            let answer = match serve::terminal_call(
                workspace.root(),
                &request,
                serve::call_id("terminal", turn.calls),
            ) {
                Err(err) => Err(err),
                Ok(call) => {
                    conversation.next_external_step();
                    let served = conversation
                        .serve_external(observer, &driving.cancel, &call)
                        .await?;
                    match &served {
                        Served::Observed {
                            output,
                            is_error,
                            exit_code,
                        } if exit_code.is_some() || !is_error => {
                            let code = exit_code.unwrap_or(0);
                            let exit = TerminalExitStatus::new()
                                .exit_code(u32::try_from(code).unwrap_or(1));
                            let id = turn.terminals.add(serve::Ran {
                                output: output.clone(),
                                exit,
                            });
                            Ok(CreateTerminalResponse::new(id))
                        }
                        _ => {
                            let err = serve::refused(&served).unwrap_or_else(|| {
                                Error::new(ErrorCode::INTERNAL_ERROR, "the command did not run")
                            });
                            keep_end(turn, served);
                            Err(err)
                        }
                    }
                }
            };
            let _ = responder.respond_with_result(answer);
        }
        Incoming::Output(request, responder) => {
            let answer = turn
                .terminals
                .get(&request.terminal_id.to_string())
                .map(|ran| {
                    TerminalOutputResponse::new(ran.output.clone(), false)
                        .exit_status(ran.exit.clone())
                });
            let _ = responder.respond_with_result(answer);
        }
        Incoming::Wait(request, responder) => {
            let answer = turn
                .terminals
                .get(&request.terminal_id.to_string())
                .map(|ran| WaitForTerminalExitResponse::new(ran.exit.clone()));
            let _ = responder.respond_with_result(answer);
        }
        Incoming::Kill(request, responder) => {
            // Its command has ended already: nothing left to kill.
            let answer = turn
                .terminals
                .get(&request.terminal_id.to_string())
                .map(|_| KillTerminalResponse::new());
            let _ = responder.respond_with_result(answer);
        }
        Incoming::Release(request, responder) => {
            turn.terminals.release(&request.terminal_id.to_string());
            let _ = responder.respond(ReleaseTerminalResponse::new());
        }
        Incoming::Permission(request, responder) => {
            let id = request.tool_call.tool_call_id.to_string();
            let fields = &request.tool_call.fields;
            let action_event = match turn.recorder.knows(&id) {
                true => find_action(conversation, &id),
                false => None,
            };
            let arguments = json!({
                "title": fields.title,
                "kind": serde_json::to_value(fields.kind).unwrap_or(serde_json::Value::Null),
                "input": fields.raw_input.clone().unwrap_or(serde_json::Value::Null),
            });
            let action_event = match action_event {
                Some(event) => event,
                None => turn
                    .recorder
                    .action(conversation, observer, &id, arguments.clone())?,
            };
            let pending = Pending {
                call_id: id,
                tool: REPORTED.to_string(),
                arguments,
                risk: Risk::Unknown,
                reason: format!(
                    "{} asks to run its own tool, which wright cannot rate",
                    driving.agent.name
                ),
                flag: None,
                action_event,
            };
            let permitted = conversation
                .permit_external(observer, &driving.cancel, &pending)
                .await?;
            let outcome = match permitted {
                Permitted::Decided(decision) => choose(&request, decision),
                Permitted::Ended(outcome) => {
                    turn.ended = Some(outcome);
                    // The agent stops: nothing runs that nobody allowed.
                    let _ =
                        connection.send_notification(CancelNotification::new(session_id.clone()));
                    turn.cancel_sent = true;
                    RequestPermissionOutcome::Cancelled
                }
            };
            let _ = responder.respond(RequestPermissionResponse::new(outcome));
        }
    }
    Ok(())
}

/// The run's end, when a served call ended it.
fn keep_end(turn: &mut Turn, served: Served) {
    if let Served::Ended(outcome) = served {
        turn.ended = Some(outcome);
    }
}

/// The `action` event of the agent's call `id`.
fn find_action(conversation: &Conversation, id: &str) -> Option<u64> {
    conversation
        .events()
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            wright_protocol::EventBody::Action { call_id, .. } if call_id == id => Some(e.id),
            _ => None,
        })
}

/// The agent's option for what the person decided (the narrowest that says it).
fn choose(request: &RequestPermissionRequest, decision: Decision) -> RequestPermissionOutcome {
    let kinds: &[PermissionOptionKind] = match decision {
        Decision::Approved => &[
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
        ],
        Decision::Always => &[
            PermissionOptionKind::AllowAlways,
            PermissionOptionKind::AllowOnce,
        ],
        Decision::Rejected => &[
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ],
    };
    kinds
        .iter()
        .find_map(|kind| {
            request
                .options
                .iter()
                .find(|option| option.kind == *kind)
                .map(|option| {
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        option.option_id.clone(),
                    ))
                })
        })
        .unwrap_or(RequestPermissionOutcome::Cancelled)
}
