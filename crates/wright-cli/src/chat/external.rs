//! `wright chat --agent NAME`: a chat whose turns an external agent takes (`[agents.NAME]`
//! of the user's own file, over the Agent Client Protocol), as `wright run --agent` runs
//! one task: in the session's sandbox and clone, its updates in the log. Each line typed
//! is a prompt in the same session of the agent's (which keeps its own history), logged
//! as a turn of one conversation; its risky requests are asked about at the terminal.
//!
//! What it guarantees: the session is finished once the chat ends (`/exit`, the end of
//! the input, SIGTERM), as for every front end — the clone's changes handed over on the
//! conversation's branch for `wright apply`. Ctrl-C cancels the turn in flight
//! (`session/cancel`), not the chat. wright's own slash commands that need wright's
//! model or history (`/model`, `/undo`, `/ask`, …) are refused with the reason.

use crate::drive::SessionConfirmer;
use crate::drive::SessionObserver;
use crate::drive::WorkspaceArgs;
use crate::progress::Progress;
use crate::report::print_report;
use anyhow::Context;
use anyhow::Result;
use rustyline::error::ReadlineError;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use wright_protocol::AgentState;
use wright_session::external::Ended;
use wright_session::Replies;

const HELP: &str = "Type a task or a question for the agent. /exit leaves (the changes are handed over on the conversation's branch). Ctrl-C stops the current turn.";

/// What is typed, a line at a time, with the line editor (a pipe is read as lines too).
struct Lines {
    editor: Option<rustyline::DefaultEditor>,
    leaving: crate::signals::Leaving,
    /// Ends the Ctrl-C watcher of the turn in flight.
    turn_done: Option<CancellationToken>,
}

impl Lines {
    /// The next line that is a prompt (slash commands answered meanwhile); `None` at the
    /// end of the input, on `/exit`, or when the chat is asked to end.
    async fn prompt(&mut self) -> Result<Option<String>> {
        loop {
            let Some(mut editor) = self.editor.take() else {
                return Ok(None);
            };
            let reading = tokio::task::spawn_blocking(move || {
                let line = editor.readline("wright> ");
                (line, editor)
            });
            let (line, editor) = tokio::select! {
                read = reading => read?,
                _ = self.leaving.requested() => return Ok(None),
            };
            self.editor = Some(editor);
            let line = match line {
                Ok(line) => line,
                Err(ReadlineError::Interrupted) => continue,
                Err(ReadlineError::Eof) => return Ok(None),
                Err(err) => return Err(err.into()),
            };
            let line = line.trim().to_string();
            match line.split_once(' ').map_or(line.as_str(), |(command, _)| command) {
                "" => continue,
                "/exit" | "/quit" => return Ok(None),
                "/help" => say!("{HELP}"),
                command if command.starts_with('/') => say!(
                    "{command} is not for an external agent's chat: wright holds no model and no history of its own for it ({HELP})"
                ),
                _ => return Ok(Some(line)),
            }
        }
    }

    /// A new turn's token, cancelled by Ctrl-C until the turn ends.
    fn turn(&mut self) -> CancellationToken {
        if let Some(done) = self.turn_done.take() {
            done.cancel();
        }
        let cancel = CancellationToken::new();
        let done = CancellationToken::new();
        let (on_signal, turn_done) = (cancel.clone(), done.clone());
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => on_signal.cancel(),
                _ = turn_done.cancelled() => {}
            }
        });
        self.turn_done = Some(done);
        cancel
    }
}

#[async_trait::async_trait]
impl wright_acp::client::Prompts for Lines {
    async fn next(&mut self, ended: &Ended) -> Option<(String, CancellationToken)> {
        if let Some(done) = self.turn_done.take() {
            done.cancel();
        }
        say!("({})", ended.stop());
        if ended.state() == AgentState::Failed {
            return None;
        }
        match self.prompt().await {
            Ok(Some(line)) => Some((line, self.turn())),
            Ok(None) => None,
            Err(err) => {
                say!("cannot read the next line: {err:#}");
                None
            }
        }
    }
}

/// The chat: the first line typed is the conversation's task; each next one goes on.
pub async fn chat(
    name: &str,
    place: &WorkspaceArgs,
    mut common: crate::drive::CommonArgs,
) -> Result<u8> {
    let agent = crate::drive::external_agent(name)?;
    common.allow_hosts.extend(agent.allow_hosts.iter().cloned());
    let (_settings, mut session, profile_lines) =
        crate::drive::prepare(&common, place, Replies::MayBeWords).await?;
    session.agent = Some(agent.name.clone());
    let mut conversation = session.begin_external()?;
    crate::drive::print_external_header(&session, &agent, profile_lines)?;
    tell!("{HELP}\n");
    conversation.set_confirmer(std::sync::Arc::new(SessionConfirmer(
        crate::confirm::TerminalConfirmer::for_chat(),
    )));
    let editor = rustyline::DefaultEditor::new().context("cannot start line editing")?;
    let mut lines = Lines {
        editor: Some(editor),
        leaving: crate::signals::Leaving::watch(),
        turn_done: None,
    };
    let mut progress = Progress::new();
    let started = Instant::now();
    // Nothing typed: the session is finished all the same (its clone handed over empty).
    let task = lines.prompt().await?;
    let (ended, finished) = match task {
        Some(task) => {
            let cancel = lines.turn();
            wright_acp::client::converse_to_end(
                session,
                conversation,
                &agent,
                &task,
                &cancel,
                wright_acp::client::Opening::New,
                Some(&mut lines),
                &mut SessionObserver(&mut progress),
            )
            .await?
        }
        None => {
            let finished = session
                .finish_external(conversation, "", None, &mut SessionObserver(&mut progress))
                .await?;
            say!(
                "nothing was asked: conversation {} made no change",
                finished.id
            );
            return Ok(0);
        }
    };
    if let Some(done) = lines.turn_done.take() {
        done.cancel();
    }
    let outcome = ended.into_outcome();
    tell!();
    print_report(
        &outcome,
        started.elapsed(),
        &finished.changes,
        &finished.id,
        &finished.log_path,
    );
    if crate::drive::tell_failure(&finished.changes, &finished.id) {
        return Ok(1);
    }
    Ok(0)
}
