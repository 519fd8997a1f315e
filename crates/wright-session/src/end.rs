//! The two ends of a session's conversation that every front end shares: opening it
//! (prompt, workspace map, the session's limits and guards) and finishing it — the
//! teardown, written once: the tools stopped before the working copy is committed, the
//! working copy handed over, where the changes went logged as the last event, the locks
//! released only then.

use crate::session::configure;
use crate::session::Replies;
use crate::session::Session;
use crate::tools::Tools;
use crate::working_copy;
use crate::working_copy::InPlaceCommit;
use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;
use wright_config::assist::Piece;
use wright_config::Settings;
use wright_core::Conversation;
use wright_core::EventLog;
use wright_core::Limits;
use wright_core::Observer;
use wright_core::RunLock;
use wright_protocol::Changes;
use wright_protocol::ChangesOutcome;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_strategies::Help;

/// How a session's conversation ends, as the front end saw it.
pub struct Ending<'a> {
    /// What the commit is titled by when the log holds no task (the run's task, "chat").
    pub title: &'a str,
    /// The model's closing summary, when the agent finished.
    pub summary: Option<&'a str>,
    /// Locks held besides the session's own (a chat's current conversation's), released
    /// once the working copy is handed over.
    pub locks: Vec<RunLock>,
}

/// A finished session: its last conversation, and what became of its working copy.
pub struct Finished {
    pub id: String,
    pub log_path: PathBuf,
    pub changes: working_copy::Outcome,
}

/// The budgets the settings give one conversation's run.
pub fn limits(settings: &Settings) -> Limits {
    Limits {
        max_steps: settings.max_steps,
        max_tokens: settings.max_tokens,
        max_time: settings.max_time.map(Duration::from_secs),
        max_cost: settings.max_cost,
    }
}

impl Session {
    /// The workspace map a new conversation's first message starts with (when the
    /// settings want one): made from what the user gave the agent, before its first step.
    pub fn workspace_map(&self) -> Option<String> {
        self.working_copy
            .workspace_map(self.assisted(Piece::Map), &self.tools.workspace)
    }

    /// The session's conversation, created in its directory with `map` heading the first
    /// message, with a run's prompt or a chat's, and equipped (`equip`).
    pub fn start_conversation(&self, map: Option<String>) -> Result<Conversation> {
        let root = self.tools.workspace.root().display().to_string();
        let system_prompt = match self.replies {
            Replies::AlwaysCalls => wright_core::system_prompt(&root),
            Replies::MayBeWords => wright_core::chat_system_prompt(&root),
        };
        // Once, in the system prompt: the prefix every request extends stays the same.
        let system_prompt = system_prompt + &self.teaching.prompt_section();
        let mut conversation = Conversation::create(
            &self.id,
            &self.conversation_dir.join("events.jsonl"),
            &root,
            self.client.clone(),
            self.tools.toolbox.clone(),
            wright_core::Opening {
                system_prompt,
                workspace_map: map,
                last_change: self
                    .assisted(Piece::LastChange)
                    .then(|| self.working_copy.last_change())
                    .flatten(),
                secrets: self.tools.secrets.names().to_vec(),
                instructions: self.teaching.instruction_files(),
                skills: self.teaching.skills.clone(),
                group: self.group.clone(),
                agent: self.agent.clone(),
            },
            self.tool_calling,
        )?;
        self.equip(&mut conversation);
        self.profiles.attach(&mut conversation)?;
        if let Some(review) = &self.review {
            review.attach(self, &mut conversation)?;
        }
        if let Some((path, script)) = &self.hooks.setup {
            conversation.set_up_first(path.clone(), script.clone());
        }
        Ok(conversation)
    }

    /// Gives a conversation of this session what the session knows: its window, prices,
    /// review, disk guard, the files of each step kept (for `wright fork --at`), and
    /// in a run the rule that only `finish` ends the task.
    pub(crate) fn equip(&self, conversation: &mut Conversation) {
        configure(
            conversation,
            self.window.tokens,
            &self.settings,
            &self.tools.inspector(&self.working_copy),
            &self.tools.secrets,
        );
        if let Some(ready) = self.tools.workspace_ready() {
            // The clone's checkout may still run: nothing of the first reply runs before it.
            conversation.wait_for_workspace(async move {
                ready.wait_async().await.map_err(|err| err.to_string())
            });
        }
        conversation.add_step_guard(self.tools.disk_guard(self.settings.max_disk));
        conversation.set_workspace(self.tools.workspace.clone());
        if let Some(keeper) = crate::working_copy::steps::keeper(
            &self.working_copy,
            &self.tools.setup,
            &self.conversation_dir,
        ) {
            conversation.set_step_snapshot(keeper);
        }
        // Not a chat: only `finish` says the task is done.
        conversation.set_require_finish(self.replies == Replies::AlwaysCalls);
        conversation.set_confirm_mode(
            self.settings
                .confirm
                .unwrap_or(wright_protocol::ConfirmMode::Never),
        );
        self.give_hooks(conversation);
    }

    /// Gives a conversation of this session the session's hooks (a chat's later
    /// conversations too), run in its sandbox or as the user.
    pub fn give_hooks(&self, conversation: &mut Conversation) {
        if !self.hooks.set.is_empty() || self.hooks.setup.is_some() {
            let runner = crate::hooks::Runner {
                sandbox: self.tools.setup.sandbox.clone(),
                env: self.tools.setup.env.clone(),
                workspace: self.tools.workspace.root().to_path_buf(),
            };
            conversation.set_hooks(self.hooks.set.clone(), std::sync::Arc::new(runner));
        }
    }

    /// What every front end does with a run: shows `observer` the events logged so far,
    /// runs `conversation` (after `message`, if any) to its end within `limits`, then
    /// finishes the session (`finish`), the model's summary kept only when it finished.
    pub async fn run_to_end(
        self,
        mut conversation: Conversation,
        message: Option<&str>,
        limits: Limits,
        cancel: &tokio_util::sync::CancellationToken,
        observer: &mut dyn Observer,
        title: &str,
    ) -> Result<(wright_core::Outcome, Finished)> {
        for event in conversation.events() {
            observer.event(event);
        }
        let outcome = conversation
            .proceed(message, limits, cancel, observer)
            .await?;
        let summary = outcome
            .summary
            .as_deref()
            .filter(|_| outcome.state == wright_protocol::AgentState::Finished);
        let ending = Ending {
            title,
            summary,
            locks: Vec::new(),
        };
        let finished = self.finish(conversation, ending, observer).await?;
        Ok((outcome, finished))
    }

    /// Ends the session with `conversation` (its last): the tools stop, the working copy
    /// is committed and handed over, and a `changes` event, shown to `observer`, says
    /// where it went. A hand-over that failed is in `Finished::changes`, not an error:
    /// the work is kept, and the front end says where.
    pub async fn finish(
        self,
        mut conversation: Conversation,
        ending: Ending<'_>,
        observer: &mut dyn Observer,
    ) -> Result<Finished> {
        // The session's end, for its hooks: how its last run ended.
        let last_state = conversation
            .events()
            .iter()
            .rev()
            .find_map(|e| match &e.body {
                EventBody::State { state, .. } => Some(state.as_str()),
                _ => None,
            })
            .unwrap_or("other");
        conversation.end_session(observer, last_state).await?;
        // The model's own account of what it did, when it finished; the task either way.
        let commit_message = working_copy::commit_message(
            working_copy::task_of(conversation.events()).unwrap_or(ending.title),
            ending.summary,
        );
        let id = conversation.id().to_string();
        let log_path = conversation.log_path().to_path_buf();
        let Session {
            tools,
            working_copy,
            locks,
            ..
        } = self;
        let Tools {
            terminal,
            workspace,
            checkout,
            setup,
            warm_up,
            toolbox,
            editor,
            secrets,
            mcp,
        } = tools;
        // The servers (in the sandbox) end before the working copy is committed.
        mcp.stop().await;
        drop(editor);
        if let Some(warm_up) = warm_up {
            warm_up.abort();
        }
        // The shell must be gone before the clone is committed.
        let mut log = conversation.into_log();
        drop(toolbox);
        drop(terminal);
        let changes = match checkout.map(|mut checkout| checkout.finish()) {
            // Never checked out: nothing ran in the clone, which goes (see `checkout`).
            Some(Err(_)) => working_copy.remove_unmade(),
            Some(Ok(())) | None => working_copy.finish(&commit_message, &setup),
        }
        .masked(&secrets.masker());
        drop(workspace);
        record_changes(&mut log, &changes, observer).await?;
        drop((ending.locks, locks));
        Ok(Finished {
            id,
            log_path,
            changes,
        })
    }
}

/// Logs where the changes went as the run's last event (`--json` prints it), and waits
/// until the log is on disk.
async fn record_changes(
    log: &mut EventLog,
    changes: &working_copy::Outcome,
    observer: &mut dyn Observer,
) -> anyhow::Result<()> {
    let event = log.append(
        Source::Environment,
        EventBody::Changes(changes_event(changes)),
    )?;
    observer.event(event);
    log.sync_step().await?;
    log.wait_sync().await?;
    Ok(())
}

/// The `changes` event for what became of the working copy.
fn changes_event(changes: &working_copy::Outcome) -> Changes {
    let mut event = Changes {
        outcome: ChangesOutcome::None,
        branch: None,
        commit: None,
        diff: None,
        configuring: Vec::new(),
        reason: None,
        kept: None,
    };
    match changes {
        working_copy::Outcome::Branch {
            branch,
            tip,
            diff,
            configuring,
        } => {
            event.outcome = ChangesOutcome::Branch;
            event.branch = Some(branch.clone());
            event.commit = Some(tip.as_str().to_string());
            event.diff = Some(diff.clone());
            event.configuring = configuring.clone();
        }
        working_copy::Outcome::NoChanges => {}
        working_copy::Outcome::InPlace { diff, commit, .. } => match commit {
            InPlaceCommit::Made(tip) => {
                event.outcome = ChangesOutcome::Committed;
                event.commit = Some(tip.as_str().to_string());
                event.diff = Some(diff.clone());
            }
            InPlaceCommit::NothingToCommit => {}
            InPlaceCommit::LeftWithYours => {
                event.outcome = ChangesOutcome::Uncommitted;
                event.diff = Some(diff.clone());
            }
        },
        working_copy::Outcome::NotGit { diff, .. } => {
            event.outcome = ChangesOutcome::NotGit;
            event.diff = diff.clone();
        }
        working_copy::Outcome::Failed { reason, kept } => {
            event.outcome = ChangesOutcome::Failed;
            event.reason = Some(reason.clone());
            event.kept = Some(kept.display().to_string());
        }
    }
    event
}
