//! What `wright run` and `wright resume` share: the command-line options of a session,
//! connecting to the model, building the sandboxed tools for a workspace, and driving a
//! conversation to its end (Ctrl-C, budgets, the working copy, the report, exit code).

use crate::progress::JsonLines;
use crate::progress::Progress;
use crate::report::print_report;
use crate::sandbox_setup::SandboxSetup;
pub use crate::settings::CommonArgs;
use crate::settings::SessionSettings;
use crate::working_copy;
use crate::working_copy::WorkingCopy;
use anyhow::Result;
use clap::Args;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use wright_core::Conversation;
use wright_core::Observer;
use wright_llm::Client;
use wright_protocol::AgentState;
use wright_tools::FileEditorTool;
use wright_tools::FinishTool;
use wright_tools::GlobTool;
use wright_tools::GrepTool;
use wright_tools::TaskTrackerTool;
use wright_tools::TerminalTool;
use wright_tools::ThinkTool;
use wright_tools::Tool;
use wright_tools::ToolName;
use wright_tools::ToolSet;
use wright_tools::Toolbox;
use wright_tools::Workspace;

/// The sandboxed tools of one conversation, with what they need to be cleaned up.
pub struct Tools {
    pub toolbox: Toolbox,
    pub terminal: Arc<TerminalTool>,
    pub editor: Arc<FileEditorTool>,
    pub workspace: Workspace,
    pub setup: SandboxSetup,
    pub warm_up: tokio::task::JoinHandle<()>,
}

/// When the working copy is made ready: a new conversation checks its clone out once
/// the sandbox exists; a resumed one finds it as it was.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    Start,
    Reopen,
}

impl Tools {
    pub fn build(
        settings: &SessionSettings,
        working_copy: &WorkingCopy,
        id: &str,
        readiness: Readiness,
        names: &[ToolName],
    ) -> Result<Self> {
        let setup = SandboxSetup::new(
            settings.sandbox_mode()?,
            settings.sandbox_options(),
            &working_copy.placement(),
            id,
        )?;
        if readiness == Readiness::Start {
            working_copy.start(&setup)?;
        }
        // Opened once it exists, and never through a link the agent made.
        let workspace = working_copy.open_workspace()?;
        let terminal = Arc::new(TerminalTool::new(
            workspace.clone(),
            setup.env.clone(),
            setup.sandbox.clone(),
            setup.scratch()?,
        ));
        // The shell starts while the first request is prepared and sent (if the model
        // has it).
        let warm = terminal.clone();
        let shell = names.contains(&ToolName::Terminal);
        let warm_up = tokio::spawn(async move {
            if shell {
                let _ = warm.warm_up().await;
            }
        });
        let editor = Arc::new(FileEditorTool::new(workspace.clone()));
        let tools: Vec<Arc<dyn Tool>> = names
            .iter()
            .map(|name| -> Arc<dyn Tool> {
                match name {
                    ToolName::Terminal => terminal.clone(),
                    ToolName::FileEditor => editor.clone(),
                    ToolName::Grep => Arc::new(GrepTool::new(workspace.clone())),
                    ToolName::Glob => Arc::new(GlobTool::new(workspace.clone())),
                    ToolName::TaskTracker => Arc::new(TaskTrackerTool::new()),
                    ToolName::Think => Arc::new(ThinkTool),
                    ToolName::Finish => Arc::new(FinishTool),
                }
            })
            .collect();
        Ok(Self {
            toolbox: Toolbox::new(tools),
            terminal,
            editor,
            workspace,
            setup,
            warm_up,
        })
    }
}

/// Drives `conversation` to its end and reports it; returns the exit status. `locks` are
/// held until the working copy is handed over.
pub async fn drive(
    mut conversation: Conversation,
    message: Option<&str>,
    settings: &SessionSettings,
    tools: Tools,
    working_copy: &WorkingCopy,
    title: &str,
    locks: Vec<wright_core::RunLock>,
) -> Result<u8> {
    let started = Instant::now();
    let cancel = CancellationToken::new();
    let signal = crate::signals::watch(cancel.clone(), conversation.interrupt_reason());
    let mut observer: Box<dyn Observer> = if settings.json {
        Box::new(JsonLines)
    } else {
        Box::new(Progress::new())
    };
    for event in conversation.events() {
        observer.event(event);
    }
    let outcome = conversation
        .proceed(message, settings.limits(), &cancel, observer.as_mut())
        .await?;
    let id = conversation.id().to_string();
    // The model's own account of what it did, when it finished; the task either way.
    let commit_message = working_copy::commit_message(
        working_copy::task_of(conversation.events()).unwrap_or(title),
        outcome
            .summary
            .as_deref()
            .filter(|_| outcome.state == AgentState::Finished),
    );
    let log_path = conversation.log_path().to_path_buf();
    let Tools {
        terminal,
        workspace,
        setup,
        warm_up,
        toolbox,
        editor,
    } = tools;
    drop(editor);
    warm_up.abort();
    // The shell must be gone before the clone is committed.
    let mut log = conversation.into_log();
    drop(toolbox);
    drop(terminal);
    let changes = working_copy.finish(&commit_message, &setup);
    drop(workspace);
    crate::report::record_changes(&mut log, &changes, observer.as_mut()).await?;
    drop(locks);
    if !settings.json {
        tell!();
        print_report(&outcome, started.elapsed(), &changes, &id, &log_path);
    }
    if tell_failure(&changes, &id) {
        return Ok(1);
    }
    if crate::screen::output_closed() {
        return Ok(crate::screen::CLOSED_PIPE_STATUS);
    }
    Ok(match (outcome.state, signal.received()) {
        (AgentState::Stopped, Some(code)) => code,
        (state, _) => exit_status(state, false),
    })
}

/// Says why the working copy could not be handed over, if it could not; the run then
/// fails (exit 1), whatever the agent did.
pub fn tell_failure(changes: &working_copy::Outcome, id: &str) -> bool {
    let working_copy::Outcome::Failed { reason, kept } = changes else {
        return false;
    };
    tell!(
        "wright: {reason}\n  the agent's work is kept in {}: `wright resume {id}` goes on there, `wright discard {id}` drops it",
        kept.display()
    );
    true
}

pub fn exit_status(state: AgentState, interrupted: bool) -> u8 {
    match state {
        AgentState::Finished => 0,
        AgentState::Stopped if interrupted => 130,
        AgentState::Stopped | AgentState::Stuck | AgentState::AwaitingConfirmation => 3,
        AgentState::Failed | AgentState::Running => 1,
    }
}

/// The run's first lines, on stderr.
pub fn print_header(
    id: &str,
    client: &Client,
    workspace: &Path,
    working_copy: &WorkingCopy,
    lines: &[String],
    setup: &SandboxSetup,
) {
    let clone = match working_copy {
        WorkingCopy::Clone(clone) => format!(
            " (a clone of {} on branch {}; your checkout is not touched){}",
            clone.repo.top().display(),
            clone.branch,
            clone
                .uncommitted
                .describe()
                .map(|line| format!("\n  {line}"))
                .unwrap_or_default()
        ),
        WorkingCopy::InPlace(_) => " (in place; .git is read-only to the agent)".to_string(),
        WorkingCopy::Direct { .. } => String::new(),
    };
    tell!(
        "wright · conversation {id} · model {} on {}\n  workspace {}{clone}",
        client.config().model,
        client.config().base_url,
        workspace.display(),
    );
    for line in lines {
        tell!("  {line}");
    }
    tell!("  sandbox {}\n", setup.describe());
}

/// Where a new conversation works.
#[derive(Args, Clone)]
pub struct WorkspaceArgs {
    /// The repository to work in.
    #[arg(short = 'C', long, default_value = ".")]
    pub workspace: std::path::PathBuf,
    /// Work directly in the workspace instead of a clone on a new branch.
    #[arg(long)]
    pub in_place: bool,
    /// With --in-place: work even if the tree has uncommitted changes (they are then left
    /// uncommitted, with the agent's).
    #[arg(long, requires = "in_place")]
    pub force: bool,
    /// Give the agent your checkout's uncommitted changes too: a snapshot commit on its
    /// branch only, your checkout untouched (asked in a terminal when not given).
    #[arg(long)]
    pub include_uncommitted: bool,
    /// Outside git: keep no snapshot of the directory (no diff at the end, no undo by
    /// `wright discard`), for a directory too large to copy.
    #[arg(long)]
    pub no_snapshot: bool,
}

/// Everything a new conversation on a workspace needs before its log is created: the
/// model (and how it calls tools, and its window), the working copy and the tools.
pub struct NewSession {
    pub settings: SessionSettings,
    pub client: Client,
    pub tool_calling: wright_protocol::ToolCalling,
    pub tool_calling_why: String,
    /// Which constraint holds the model's replies to tool calls, and why.
    pub constraint_why: String,
    /// The model's tools, and why those.
    pub tools_why: String,
    pub window: crate::connect::Window,
    pub id: String,
    pub conversation_dir: std::path::PathBuf,
    pub working_copy: WorkingCopy,
    pub tools: Tools,
    /// Held until the conversation's run ends: one writer per conversation (and per
    /// checkout worked in place).
    pub locks: Vec<wright_core::RunLock>,
}

/// What a session's replies are: in a run every reply is a tool call (`finish` included),
/// so it may be constrained to one; in a chat a reply may be words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replies {
    AlwaysCalls,
    MayBeWords,
}

impl NewSession {
    pub async fn prepare(
        common: &CommonArgs,
        place: &WorkspaceArgs,
        replies: Replies,
    ) -> Result<Self> {
        let (workspace, in_place, force) = (&place.workspace, place.in_place, place.force);
        use anyhow::Context;
        // Not dumpable: the model's commands (no capabilities) cannot read this process's
        // memory or /proc/PID/environ, where the API key may be.
        let _ = nix::sys::prctl::set_dumpable(false);
        let requested = workspace.canonicalize().with_context(|| {
            format!(
                "the workspace {} must be an existing directory",
                workspace.display()
            )
        })?;
        refuse_workspace_holding_wright(&requested)?;
        let start = crate::working_copy::StartPoint::find(&requested);
        let settings = SessionSettings::resolve(common, Some(&start.config_source()))?;
        let mut client = settings
            .client(None, crate::hints::Front::CommandLine)
            .await?;
        // The window first: on Ollama it decides the wire, which the probe then uses.
        let window =
            crate::connect::context_window(&mut client, settings.values.context_window).await;
        let (tool_calling, tool_calling_why) =
            crate::tool_mode::decide(&settings.values.tool_calling, &client, &window.server)
                .await?;
        let constraint = match replies {
            Replies::AlwaysCalls => {
                let asking = crate::constrain_mode::Asking {
                    client: &client,
                    server: &window.server,
                    kind: window.kind,
                    tool_calling,
                };
                crate::constrain_mode::decide(&settings.values.constrain, &asking).await?
            }
            Replies::MayBeWords => crate::constrain_mode::Decision {
                constraint: None,
                why: "none (in a chat a reply may be words)".into(),
            },
        };
        let id = wright_core::new_conversation_id();
        let mut locks = Vec::new();
        if in_place {
            if let Some(repo) = &start.repo {
                locks.push(wright_core::RunLock::checkout(repo.top())?);
            }
        }
        let conversation_dir = wright_core::conversations_dir().join(&id);
        std::fs::create_dir_all(&conversation_dir)
            .with_context(|| format!("cannot create {}", conversation_dir.display()))?;
        locks.push(wright_core::RunLock::conversation(&conversation_dir, &id)?);
        crate::sandbox_setup::reap_dead_runs(&id);
        let uncommitted = if place.include_uncommitted {
            crate::working_copy::UncommittedChoice::Include
        } else if crate::ask::can_ask(settings.json) {
            crate::working_copy::UncommittedChoice::Ask
        } else {
            crate::working_copy::UncommittedChoice::Leave
        };
        let options = crate::working_copy::Options {
            in_place,
            force,
            uncommitted,
            snapshot: !place.no_snapshot,
        };
        let (tool_names, tools_why) = choose_tools(&settings.values.tools, &client.config().model)?;
        let prepared =
            WorkingCopy::prepare(start, &conversation_dir, &id, options).and_then(|working_copy| {
                let tools =
                    Tools::build(&settings, &working_copy, &id, Readiness::Start, &tool_names)?;
                Ok((working_copy, tools))
            });
        let (working_copy, tools) = match prepared {
            Ok(prepared) => prepared,
            Err(err) => {
                // Nothing ran: leave no half-made conversation (or clone) behind.
                crate::working_copy::remove_unstarted(&conversation_dir, &id);
                return Err(err);
            }
        };
        // The schema covers every tool the model may call; built once, it is the same
        // bytes in every request of the conversation.
        crate::constrain_mode::apply(&mut client, constraint.constraint, &tools.toolbox.schemas());
        Ok(Self {
            settings,
            client,
            tool_calling,
            tool_calling_why,
            constraint_why: constraint.why,
            tools_why,
            window,
            id,
            conversation_dir,
            working_copy,
            tools,
            locks,
        })
    }

    /// The header's lines about the model.
    pub fn model_lines(&self) -> Vec<String> {
        vec![
            format!("tool calls {}", self.tool_calling_why),
            format!("constraint {}", self.constraint_why),
            format!("context {}", self.window.description),
            format!("tools {}", self.tools_why),
        ]
    }
}

/// The tools a new conversation gets from the `tools` setting, and the header's account
/// of them: `auto` is the small set for a model whose name says 8B or less (every schema
/// is prefilled at each uncached step), the full set otherwise.
pub fn choose_tools(setting: &str, model: &str) -> Result<(Vec<ToolName>, String)> {
    let set = ToolSet::parse(setting)
        .map_err(|err| anyhow::anyhow!("the tools setting (--tools, or the `tools` key): {err}"))?;
    let small = wright_llm::constrain::size_says_small(model) == Some(true);
    let names = set.resolve(small);
    let list = names
        .iter()
        .map(|n| n.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let why = match (&set, small) {
        (ToolSet::Auto, true) => format!(
            "{list} (the small set: the model's name says 8B or less; --tools full for all)"
        ),
        (ToolSet::Auto, false) => format!("{list} (all)"),
        (ToolSet::Named(_), _) => format!("{list} (as asked)"),
    };
    Ok((names, why))
}

/// The tools of a conversation being resumed: those its log started with, whatever the
/// settings say now (the tool schemas are part of the prefix every request extends).
pub fn logged_tools(start: &wright_protocol::Start) -> Vec<ToolName> {
    start
        .tools
        .iter()
        .filter_map(|schema| schema["function"]["name"].as_str())
        .filter_map(ToolName::parse)
        .collect()
}

/// A workspace the agent may write must not hold wright's own files, nor lie among them:
/// its data (conversations' logs and records, clones, what the user allowed), the user's
/// configuration, its cache, or the private directories of sandboxes (in the temp
/// directory). Otherwise the agent could write what wright later reads as its own.
fn refuse_workspace_holding_wright(workspace: &std::path::Path) -> Result<()> {
    let real = real_path;
    let data = wright_core::conversations_dir()
        .parent()
        .map(std::path::Path::to_path_buf);
    let config =
        wright_config::Config::user_file().and_then(|f| f.parent().map(|d| d.to_path_buf()));
    let cache = crate::tool_mode::cache_dir();
    let mut wright_dirs: Vec<(&str, std::path::PathBuf)> = Vec::new();
    wright_dirs.extend(data.map(|d| ("wright's data (logs, clones, what you allowed)", real(d))));
    wright_dirs.extend(config.map(|d| ("your wright configuration", real(d))));
    wright_dirs.push(("wright's cache", real(cache)));
    for (what, dir) in &wright_dirs {
        if dir.starts_with(workspace) || workspace.starts_with(dir) {
            anyhow::bail!(
                "the workspace {} {} {what} ({}), which the agent must not reach; point -C at a project directory",
                workspace.display(),
                if dir.starts_with(workspace) { "contains" } else { "is inside" },
                dir.display()
            );
        }
    }
    let temp = real(std::env::temp_dir());
    if temp.starts_with(workspace) {
        anyhow::bail!(
            "the workspace {} contains the sandboxes' private directories ({}), which the agent must not reach; point -C at a project directory",
            workspace.display(),
            temp.display()
        );
    }
    Ok(())
}

/// `path` as the directory it will be: absolute, its deepest existing ancestor resolved
/// (links included), the rest appended — so a directory that does not exist yet, reached
/// through a link, still compares with the workspace it would be in.
fn real_path(path: std::path::PathBuf) -> std::path::PathBuf {
    let absolute = std::path::absolute(&path).unwrap_or(path);
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(resolved) = existing.canonicalize() {
            return rest
                .iter()
                .rev()
                .fold(resolved, |path, name| path.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

/// Gives a conversation what the session knows: the window, the condensing threshold, the
/// prices and the inspector that reviews its changes before `finish`.
pub fn configure(
    conversation: &mut Conversation,
    window: Option<u64>,
    settings: &SessionSettings,
    inspector: &Option<crate::inspect::GitInspector>,
) {
    if let Some(tokens) = window {
        conversation.set_context_window(tokens);
    }
    conversation.set_condense_at(settings.values.condense_at);
    conversation.set_price(settings.values.price);
    if let Some(inspector) = inspector {
        conversation.set_inspector(Box::new(inspector.clone()));
    }
}

/// Stops the run when the agent's files outgrow `--max-disk`.
struct DiskGuard(wright_sandbox::DiskUse);

impl wright_core::StepGuard for DiskGuard {
    fn stop_reason(&self) -> Option<String> {
        self.0.exceeded().map(|grew| {
            format!(
                "the agent's files grew by {} MiB, past the disk limit of {} MiB; raise it with --max-disk",
                grew >> 20,
                self.0.limit() >> 20
            )
        })
    }
}

impl Tools {
    /// The guard on the disk the agent's commands fill, for one conversation.
    pub fn disk_guard(&self, max_disk_mb: Option<u64>) -> Box<dyn wright_core::StepGuard> {
        let paths = self.setup.written_paths();
        let limit = max_disk_mb.map(|mb| mb << 20).unwrap_or_else(|| {
            paths
                .first()
                .and_then(|path| wright_sandbox::DiskUse::half_the_free_space(path))
                .unwrap_or(u64::MAX)
        });
        Box::new(DiskGuard(wright_sandbox::DiskUse::start(paths, limit)))
    }

    /// The reviewer of the working copy's changes, when it is a git repository.
    pub fn inspector(&self, working_copy: &WorkingCopy) -> Option<crate::inspect::GitInspector> {
        let (root, base) = working_copy.changes_base()?;
        Some(crate::inspect::GitInspector {
            root,
            base,
            sandbox: self.setup.sandbox.clone(),
            env: self.setup.env.clone(),
        })
    }
}
