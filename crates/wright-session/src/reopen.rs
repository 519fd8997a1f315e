//! Going on with a conversation that exists (`wright resume`, a server's resume): locked
//! before its log is read, its working copy found from its record (checked against the
//! log), then the session prepared as for a new one — the model's window, the tools over
//! the working copy as it was, the constraint it started with — and the conversation
//! read back from its log.

use crate::front::Front;
use crate::session::Replies;
use crate::session::SandboxChoice;
use crate::session::Session;
use crate::tools::Readiness;
use crate::tools::Tools;
use crate::working_copy::WorkingCopy;
use anyhow::bail;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use wright_config::Settings;
use wright_core::Conversation;
use wright_core::ResumeNotes;
use wright_core::RunLock;
use wright_llm::Client;
use wright_protocol::EventBody;
use wright_protocol::Start;

/// Which conversations a reopen takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// Those of wright's own loop; an external agent's is refused, saying why.
    OwnOnly,
    /// An external agent's too, which the caller goes on with in the agent's own
    /// session (`session/load`), never with wright's model.
    ExternalToo,
}

/// A conversation found on disk, locked, before a model is chosen for it.
pub struct Existing {
    pub dir: PathBuf,
    /// Its start event: the workspace, model, server and tool-calling mode it began with.
    pub start: Start,
    pub working_copy: WorkingCopy,
    /// The model it went on with after its last switch to a fallback profile, if any:
    /// the model in force, which a resumed run goes on with unless told otherwise.
    pub in_force: Option<wright_protocol::ModelAt>,
    /// Its own lock (and the checkout's, when it works in place).
    pub locks: Vec<RunLock>,
}

impl Existing {
    /// Locks the conversation in `dir` (before its log is read: another process may be
    /// writing it), clears what dead runs left, and finds its working copy. The record,
    /// not the log, says where it works; both are checked before any server is asked
    /// anything.
    ///
    /// An external agent's conversation is refused (wright's own model cannot go on
    /// with it): see `open_any`.
    pub fn open(dir: &Path, front: &dyn Front) -> Result<Self> {
        Self::open_taking(dir, front, Takes::OwnOnly)
    }

    /// As `open`, an external agent's conversation too (`start.agent` names its agent):
    /// the caller goes on with it in the agent's own session (`wright_acp::client`,
    /// `session/load`), never with wright's model.
    pub fn open_any(dir: &Path, front: &dyn Front) -> Result<Self> {
        Self::open_taking(dir, front, Takes::ExternalToo)
    }

    /// `open` or `open_any`, as `takes` says.
    pub fn open_taking(dir: &Path, front: &dyn Front, takes: Takes) -> Result<Self> {
        let id = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut locks = vec![RunLock::conversation(dir, &id)?];
        crate::sandbox_setup::reap_dead_runs(&id);
        let log_path = dir.join("events.jsonl");
        let logged = wright_protocol::read_log(&log_path)?;
        let Some(start) = logged.events.iter().find_map(|e| match &e.body {
            EventBody::Start(start) => Some(start.clone()),
            _ => None,
        }) else {
            bail!(
                "{} has no start event; it cannot be resumed",
                log_path.display()
            );
        };
        if let (Some(agent), Takes::OwnOnly) = (&start.agent, takes) {
            bail!(
                "{}",
                crate::running::external_refusal(
                    agent,
                    "going on with it here (only `wright resume ID MESSAGE` goes on with it, in the agent's own session through its session/load)"
                )
            );
        }
        let in_force = logged.events.iter().rev().find_map(|e| match &e.body {
            EventBody::ModelSwitch(switch) => Some(switch.to.clone()),
            _ => None,
        });
        let working_copy = WorkingCopy::reopen(dir, Path::new(&start.workspace), front)?;
        if let WorkingCopy::InPlace(in_place) = &working_copy {
            locks.push(RunLock::checkout(in_place.repo.top())?);
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            start,
            working_copy,
            in_force,
            locks,
        })
    }
}

impl Session {
    /// The session of an existing conversation, and the conversation read back from its
    /// log (with what resuming found: a torn last line, calls cut off by the stop). It
    /// is a run again: its replies are calls, held to them as at its start.
    pub async fn reopen(
        existing: Existing,
        mut client: Client,
        mut settings: Settings,
        sandbox: &SandboxChoice,
        profiles: crate::Profiles,
        front: &dyn Front,
    ) -> Result<(Session, Conversation, ResumeNotes)> {
        let Existing {
            dir,
            start,
            working_copy,
            locks,
            ..
        } = existing;
        // The engine's cache saved when the conversation last ran comes back from here.
        client.keep_state_in(&dir);
        let window = crate::connect::context_window(&mut client, settings.context_window).await;
        // The tools its start offered, whatever the settings say now: their schemas are
        // part of the prefix every request extends.
        let names = crate::session::logged_tools(&start);
        // Hooks are read again (the user's as they are now, the repository's at the start
        // commit); instructions and skills are the log's own.
        let source = working_copy.config_source();
        let files = crate::repo_config::RepoFiles::list(
            &source,
            &[crate::hooks::paths(), crate::mcp::paths()].concat(),
        );
        let hooks = crate::hooks::SessionHooks::load(&files, sandbox.repo_hooks, front)?;
        let mcp = crate::mcp::McpConfig::load(&files, sandbox.repo_mcp, front)?;
        let teaching = crate::teach::Teaching {
            instructions: start
                .instructions
                .iter()
                .map(|file| (file.clone(), String::new()))
                .collect(),
            skills: start.skills.clone(),
            skipped: Vec::new(),
        };
        let mut tools = Tools::build(
            sandbox,
            &working_copy,
            &start.conversation,
            Readiness::Reopen,
            &names,
            &start.skills,
        )?;
        tools.settle()?;
        // Its MCP tools are those it started with, their schemas the log's own.
        let logged_mcp = crate::mcp::logged_schemas(&start.tools);
        if !logged_mcp.is_empty() {
            tools
                .add_mcp(&mcp, &settings, source.key(), Some(&logged_mcp), front)
                .await;
        }
        // The schemas as they started: with `security_risk` when they offered it.
        if start
            .tools
            .iter()
            .any(wright_tools::risk::offers_stated_risk)
        {
            tools.toolbox = tools.toolbox.with_stated_risk();
        }
        let list = tools.toolbox.names().join(", ");
        let asking = crate::constrain_mode::Asking {
            client: &client,
            server: &window.server,
            kind: window.kind,
            tool_calling: start.tool_calling,
        };
        let constraint = crate::constrain_mode::decide(&settings.constrain, &asking).await?;
        crate::constrain_mode::apply(&mut client, constraint.constraint, &tools.toolbox);
        let (mut conversation, notes) = Conversation::resume(
            &dir.join("events.jsonl"),
            client.clone(),
            tools.toolbox.clone(),
        )?;
        // Unless told otherwise, it asks before actions as its last run did.
        if settings.confirm.is_none() {
            settings.confirm = wright_core::confirm::last_mode(conversation.events());
        }
        let session = Session {
            settings,
            replies: Replies::AlwaysCalls,
            client,
            tool_calling: start.tool_calling,
            tool_calling_why: format!(
                "{} (as the conversation began)",
                start.tool_calling.as_str()
            ),
            constraint_why: constraint.why,
            tools_why: format!("{list} (as the conversation started; --tools applies to new ones)"),
            window,
            id: start.conversation.clone(),
            conversation_dir: dir,
            working_copy,
            tools,
            locks,
            teaching,
            hooks,
            group: start.group.clone(),
            profiles,
            agent: start.agent.clone(),
            review: None,
        };
        session.equip(&mut conversation);
        session.profiles.attach(&mut conversation)?;
        Ok((session, conversation, notes))
    }
}
