//! `wright chat` (and `wright` alone in a terminal): one conversation over many turns.
//! Each line is a task or a question; the agent works until it answers or finishes, with
//! its reply streamed. Ctrl-C stops the current step and returns to the prompt. Commands:
//! /diff, /undo (revert the agent's last edit), /model NAME, /profile NAME, /new,
//! /resume ID, /ask QUESTION (answered beside the task, never in its history), /cost,
//! /help, /exit. Line editing and history come from rustyline.

mod external;
mod switch;

use crate::drive::print_header;
use crate::drive::CommonArgs;
use crate::drive::WorkspaceArgs;
use crate::progress::Progress;
use crate::report::print_report;
use crate::settings::SessionSettings;
use anyhow::Context;
use anyhow::Result;
use clap::Args;
use rustyline::error::ReadlineError;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use wright_core::chat_system_prompt;
use wright_core::conversations_dir;
use wright_core::new_conversation_id;
use wright_core::Conversation;
use wright_protocol::count;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_protocol::StopReason;
use wright_protocol::ToolCalling;
use wright_session::configure;
use wright_session::inspect::GitInspector;
use wright_session::Ending;
use wright_session::Replies;
use wright_session::Session;
use wright_session::Tools;
use wright_strategies::Help;
use wright_tools::Tool;

#[derive(Args)]
pub struct ChatArgs {
    /// Chat with the external agent `[agents.NAME]` of your configuration (one that
    /// speaks the Agent Client Protocol) instead of wright's own loop: in the sandbox,
    /// on the clone, each line a prompt in the same session of the agent's.
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    #[command(flatten)]
    place: WorkspaceArgs,
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    net: crate::settings::NetArgs,
}

const HELP: &str = "Type a task or a question. /diff shows the changes, /undo reverts the agent's last edit, /model NAME switches model, /profile NAME switches to a profile of your configuration, /new starts over, /resume ID goes back to a conversation, /ask QUESTION asks about the work beside it (the answer never enters the conversation's history), /cost shows tokens and time, /exit leaves. Ctrl-C stops the current step.";

struct Chat {
    conversation: Conversation,
    tool_calling: ToolCalling,
    /// The workspace map, made at the start of the chat.
    map: Option<String>,
    window: Option<u64>,
    inspector: Option<GitInspector>,
    settings: SessionSettings,
    started: Instant,
    /// The current conversation's lock: one writer per conversation.
    lock: Option<wright_core::RunLock>,
    /// When the user is asked before an action runs (every conversation of the chat).
    confirm: wright_protocol::ConfirmMode,
}

impl Chat {
    fn new_conversation(
        &self,
        session: &Session,
        client: wright_llm::Client,
    ) -> Result<(Conversation, wright_core::RunLock)> {
        let tools = &session.tools;
        let id = new_conversation_id();
        let root = tools.workspace.root().display().to_string();
        let dir = conversations_dir().join(&id);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let lock = wright_core::RunLock::conversation(&dir, &id)?;
        let mut conversation = Conversation::create(
            &id,
            &dir.join("events.jsonl"),
            &root,
            client,
            tools.toolbox.clone(),
            wright_core::Opening {
                system_prompt: chat_system_prompt(&root) + &session.teaching.prompt_section(),
                workspace_map: self.map.clone(),
                last_change: None,
                secrets: tools.secrets.names().to_vec(),
                instructions: session.teaching.instruction_files(),
                skills: session.teaching.skills.clone(),
                group: None,
                agent: None,
            },
            self.tool_calling,
        )?;
        configure(
            &mut conversation,
            self.window,
            &self.settings.values,
            &self.inspector,
            &tools.secrets,
        );
        conversation.add_step_guard(tools.disk_guard(self.settings.values.max_disk));
        conversation.set_workspace(tools.workspace.clone());
        self.asks(&mut conversation);
        session.give_hooks(&mut conversation);
        // The fallback chain the chat's conversation is on goes on with this one.
        session
            .profiles
            .go_on(self.conversation.profile(), &mut conversation);
        Ok((conversation, lock))
    }

    /// The chat's confirmation mode, answered from stdin.
    fn asks(&self, conversation: &mut Conversation) {
        conversation.set_confirm_mode(self.confirm);
        conversation.set_confirmer(crate::confirm::TerminalConfirmer::for_chat());
    }
}

pub async fn chat(mut args: ChatArgs) -> Result<u8> {
    args.common.allow_hosts = std::mem::take(&mut args.net.allow_hosts);
    args.common.check()?;
    if let Some(name) = &args.agent {
        return external::chat(name, &args.place, args.common).await;
    }
    let (settings, mut session, profile_lines) =
        crate::drive::prepare(&args.common, &args.place, Replies::MayBeWords).await?;
    // Held for the whole chat: the first conversation's lock (whose sandbox this is) and
    // the checkout's, in the session; a conversation switched to later has its own lock.
    let mut root = session.tools.workspace.root().display().to_string();
    let mut id = session.id.clone();
    // Made once, before the agent's first step; a conversation started later in this
    // chat gets the same map.
    let map = session.workspace_map();
    // The session gives it its fallback profiles.
    let mut conversation = session.start_conversation(map.clone())?;
    conversation.set_confirmer(crate::confirm::TerminalConfirmer::for_chat());
    let confirm = conversation.confirm_mode();
    let mut chat = Chat {
        confirm,
        conversation,
        tool_calling: session.tool_calling,
        map,
        window: session.window.tokens,
        inspector: session.tools.inspector(&session.working_copy),
        settings,
        started: Instant::now(),
        lock: None,
    };
    print_header(
        &id,
        &session.client,
        session.tools.workspace.root(),
        &session.working_copy,
        &[crate::drive::model_lines(&session), profile_lines].concat(),
        &session.tools.setup,
    )?;
    tell!("{HELP}\n");

    let history_path = conversations_dir().parent().map(|d| d.join("chat_history"));
    let mut editor = rustyline::DefaultEditor::new().context("cannot start line editing")?;
    if let Some(path) = &history_path {
        let _ = editor.load_history(path);
    }
    let mut observer = Progress::new();
    let mut last_outcome: Option<wright_core::Outcome> = None;
    let leaving = crate::signals::Leaving::watch();
    let mut editor = Some(editor);
    loop {
        let Some(mut current) = editor.take() else {
            break;
        };
        let reading = tokio::task::spawn_blocking(move || {
            let line = current.readline("wright> ");
            (line, current)
        });
        // SIGTERM or SIGHUP while waiting for a line: the chat ends as /exit would.
        let (line, returned) = tokio::select! {
            read = reading => read?,
            _ = leaving.requested() => break,
        };
        editor = Some(returned);
        let line = match line {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(err) => return Err(err.into()),
        };
        let line = line.trim().to_string();
        if line.is_empty() {
            continue;
        }
        if let Some(editor) = editor.as_mut() {
            let _ = editor.add_history_entry(&line);
        }
        let (command, rest) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        match command {
            "/exit" | "/quit" => break,
            "/help" => say!("{HELP}"),
            "/cost" => {
                let totals = chat.conversation.totals();
                say!(
                    "{} · {} prompt tokens ({} cached) · {} generated · model time {:.1} s · {:.0} s in this chat",
                    count(u64::from(totals.steps), "step"),
                    totals.prompt_tokens,
                    totals.cached_tokens,
                    totals.completion_tokens,
                    totals.model_ms / 1000.0,
                    chat.started.elapsed().as_secs_f64()
                );
            }
            "/diff" => match &chat.inspector {
                Some(inspector) => {
                    let diff = inspector.diff_text();
                    say!(
                        "{}",
                        if diff.trim().is_empty() {
                            "no changes"
                        } else {
                            diff.trim_end()
                        }
                    );
                }
                None => say!("the workspace is not a git repository: no diff to show"),
            },
            "/undo" => {
                if undo(&mut chat, &session.tools, &mut observer).await? {
                    // The review of the changes before the undo no longer holds.
                    let review = chat.conversation.review_again();
                    if let Some(outcome) = last_outcome.as_mut() {
                        outcome.review = review;
                    }
                }
            }
            "/model" if !rest.trim().is_empty() => {
                let base_url = chat.conversation.client().config().base_url.clone();
                match chat.settings.client_for(&base_url, rest.trim()).await {
                    Ok(mut client) => {
                        let window = wright_session::connect::context_window(
                            &mut client,
                            chat.settings.values.context_window,
                        )
                        .await;
                        if let Some(tokens) = window.tokens {
                            chat.conversation.set_context_window(tokens);
                        }
                        chat.window = window.tokens;
                        choose_model(&mut chat, client, None, format!("/model {}", rest.trim()))?;
                        say!("now talking to {}", rest.trim());
                    }
                    Err(err) => say!(
                        "{}",
                        crate::wording::session_error(&err, crate::hints::Front::Chat)
                    ),
                }
            }
            "/ask" if !rest.trim().is_empty() => {
                // Beside the task: the progress shows the answer as it is logged.
                let cancel = CancellationToken::new();
                let asked = chat
                    .conversation
                    .ask_aside(rest.trim(), &cancel, &mut observer)
                    .await?;
                match asked {
                    Some(Ok(_)) => {}
                    Some(Err(err)) => say!(
                        "the side question could not be answered: {}",
                        crate::hints::explain(&err, crate::hints::Front::Chat)
                    ),
                    None => say!("the side question was interrupted"),
                }
            }
            "/profile" if !rest.trim().is_empty() => switch_profile(&mut chat, rest.trim()).await,
            "/new" => {
                let client = chat.conversation.client().clone();
                let (conversation, lock) = chat.new_conversation(&session, client)?;
                chat.conversation = conversation;
                chat.lock = Some(lock);
                say!("new conversation {}", chat.conversation.id());
            }
            "/resume" if !rest.trim().is_empty() => {
                // Another clone of this repository: the chat moves there.
                let other = crate::history_cmds::conversation_dir(rest.trim())
                    .ok()
                    .filter(|dir| switch::other_clone_of_this_repository(dir, &session));
                if let Some(dir) = other {
                    let last = last_outcome.take();
                    match switch::switch(&mut chat, &mut session, &dir, &mut observer, last).await {
                        Ok(()) => {
                            root = session.tools.workspace.root().display().to_string();
                            id = session.id.clone();
                            say!(
                                "back in conversation {}, in its clone {root}",
                                chat.conversation.id()
                            );
                        }
                        Err(err) => say!("{err:#}"),
                    }
                    continue;
                }
                let client = chat.conversation.client().clone();
                match resume_here(rest.trim(), &root, client, &session.tools, &id) {
                    Ok((mut resumed, lock)) => {
                        configure(
                            &mut resumed,
                            chat.window,
                            &chat.settings.values,
                            &chat.inspector,
                            &session.tools.secrets,
                        );
                        resumed.add_step_guard(
                            session.tools.disk_guard(chat.settings.values.max_disk),
                        );
                        resumed.set_workspace(session.tools.workspace.clone());
                        chat.asks(&mut resumed);
                        session.give_hooks(&mut resumed);
                        session
                            .profiles
                            .go_on(chat.conversation.profile(), &mut resumed);
                        chat.conversation = resumed;
                        chat.lock = lock;
                        say!("back in conversation {}", chat.conversation.id());
                    }
                    Err(err) => say!("{err:#}"),
                }
            }
            _ if command.starts_with('/') => say!("unknown command {command}. {HELP}"),
            _ => {
                let outcome = turn(&mut chat, &line, &mut observer, &leaving).await?;
                match outcome.state {
                    AgentState::Finished => {
                        if let Some(summary) = &outcome.summary {
                            if outcome.stop == StopReason::Finished {
                                say!("\n{}", summary.trim());
                            }
                        }
                    }
                    _ => say!(
                        "\n[{}: {}]",
                        outcome.state.as_str(),
                        crate::hints::stop_words(
                            &outcome.stop,
                            outcome.remedy,
                            crate::hints::Front::Chat,
                            chat.conversation.id()
                        )
                    ),
                }
                last_outcome = Some(outcome);
                if leaving.code().is_some() {
                    break;
                }
            }
        }
    }
    if let (Some(path), Some(editor)) = (&history_path, editor.as_mut()) {
        let _ = editor.save_history(path);
    }

    let summary = last_outcome
        .as_ref()
        .filter(|outcome| outcome.state == AgentState::Finished)
        .and_then(|outcome| outcome.summary.as_deref());
    // The conversation ends; its lock is held until the working copy is handed over.
    let ending = Ending {
        title: "chat",
        summary,
        locks: chat.lock.take().into_iter().collect(),
    };
    let finished = session
        .finish(chat.conversation, ending, &mut observer)
        .await?;
    let (changes, final_id) = (&finished.changes, &finished.id);
    if let Some(outcome) = last_outcome {
        print_report(
            &outcome,
            std::time::Duration::ZERO,
            changes,
            final_id,
            &finished.log_path,
        );
    }
    if crate::drive::tell_failure(changes, final_id) {
        return Ok(1);
    }
    Ok(leaving.code().unwrap_or(0))
}

/// Another conversation of this workspace, to go on with in this chat. Its record says
/// where it worked, and is checked (with its log) before its log is touched.
fn resume_here(
    id: &str,
    root: &str,
    client: wright_llm::Client,
    tools: &Tools,
    first: &str,
) -> Result<(Conversation, Option<wright_core::RunLock>)> {
    let dir = crate::history_cmds::conversation_dir(id)?;
    // This chat holds its first conversation's lock already.
    let lock = match dir.file_name().is_some_and(|name| name == first) {
        true => None,
        false => Some(wright_core::RunLock::conversation(&dir, id)?),
    };
    let record = wright_session::working_copy::Record::read(&dir)?;
    if record.workspace() != std::path::Path::new(root) {
        anyhow::bail!(
            "that conversation worked in {}; use `wright resume {id}` from the shell",
            record.workspace().display()
        );
    }
    let log = wright_protocol::read_log(&dir.join("events.jsonl"))?;
    let logged = log.events.first().and_then(|e| match &e.body {
        EventBody::Start(start) => Some(start.workspace.clone()),
        _ => None,
    });
    record.check_logged_workspace(std::path::Path::new(&logged.unwrap_or_default()))?;
    let (mut resumed, _) =
        Conversation::resume(&dir.join("events.jsonl"), client, tools.toolbox.clone())?;
    // It goes on with the chat's model: when that is not the one it was on, the log says so.
    let now = resumed.model_at();
    if let Some(was) = wright_protocol::model_in_force(resumed.events()) {
        if (was.model.as_str(), was.base_url.as_str())
            != (now.model.as_str(), now.base_url.as_str())
        {
            resumed.log_switch_before_step(
                was,
                now,
                wright_protocol::SwitchReason::Chosen,
                "/resume in a chat on this model".to_string(),
            )?;
        }
    }
    Ok((resumed, lock))
}

/// Talks to the profile `name`'s server and model from the next step on, with its window
/// and prices; the conversation (and how it calls tools) stays as it is.
async fn switch_profile(chat: &mut Chat, name: &str) {
    let settings = match chat.settings.with_profile(name) {
        Ok(settings) => settings,
        Err(err) => return say!("{err:#}"),
    };
    let mut client = match settings.client(None).await {
        Ok(client) => client,
        Err(err) => {
            return say!(
                "{}",
                crate::wording::session_error(&err, crate::hints::Front::Chat)
            )
        }
    };
    let window =
        wright_session::connect::context_window(&mut client, settings.values.context_window).await;
    if let Some(tokens) = window.tokens {
        chat.conversation.set_context_window(tokens);
    }
    chat.window = window.tokens;
    chat.conversation.set_price(settings.values.price);
    say!(
        "now using profile {name}: {} on {} (context {})",
        client.config().model,
        client.config().base_url,
        crate::drive::window_words(&window)
    );
    if let Err(err) = choose_model(
        chat,
        client,
        Some(name.to_string()),
        format!("/profile {name}"),
    ) {
        say!("{err:#}");
    }
    chat.settings = settings;
}

/// Goes on with `client` from the next step on, a model the user chose in the chat: logged
/// as a switch (reason `chosen`) when it is not the model the conversation is on, so
/// `wright ls`, `wright show` and a resume name the model it is on.
fn choose_model(
    chat: &mut Chat,
    client: wright_llm::Client,
    profile: Option<String>,
    detail: String,
) -> Result<()> {
    let from = chat.conversation.model_at();
    let to = wright_session::settings::model_at(profile, &client);
    chat.conversation.set_client(client);
    if (from.model.as_str(), from.base_url.as_str()) != (to.model.as_str(), to.base_url.as_str()) {
        chat.conversation.log_switch_before_step(
            from,
            to,
            wright_protocol::SwitchReason::Chosen,
            detail,
        )?;
    }
    Ok(())
}

/// One turn: the agent works on `line` until it answers; Ctrl-C stops it.
async fn turn(
    chat: &mut Chat,
    line: &str,
    observer: &mut Progress,
    leaving: &crate::signals::Leaving,
) -> Result<wright_core::Outcome> {
    let cancel = CancellationToken::new();
    let _stops = leaving.stops(cancel.clone(), chat.conversation.interrupt_reason());
    let done = CancellationToken::new();
    let (on_signal, turn_done) = (cancel.clone(), done.clone());
    let watcher = tokio::spawn(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => on_signal.cancel(),
            _ = turn_done.cancelled() => {}
        }
    });
    let limits = chat.settings.limits();
    let outcome = chat
        .conversation
        .proceed(Some(line), limits, &cancel, observer)
        .await;
    done.cancel();
    let _ = watcher.await;
    Ok(outcome?)
}

/// Reverts the agent's last edit and tells the model; whether it was reverted.
async fn undo(chat: &mut Chat, tools: &Tools, observer: &mut Progress) -> Result<bool> {
    let last_edit = chat
        .conversation
        .events()
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            EventBody::Action {
                tool, arguments, ..
            } if matches!(tool.as_str(), "file_editor" | "str_replace_editor")
                && matches!(
                    arguments["command"].as_str(),
                    Some("create" | "str_replace" | "insert")
                ) =>
            {
                arguments["path"].as_str().map(str::to_string)
            }
            _ => None,
        });
    let Some(path) = last_edit else {
        say!("the agent has not edited a file yet");
        return Ok(false);
    };
    match tools
        .editor
        .run(&serde_json::json!({"command": "undo_edit", "path": path}))
        .await
    {
        Ok(output) => {
            say!("{}", output.text);
            chat.conversation
                .note_from_user(observer, &format!("(I reverted your last edit of {path}.)"))?;
            chat.conversation.keep_files_now().await;
            Ok(true)
        }
        Err(err) => {
            say!("{err}");
            Ok(false)
        }
    }
}
