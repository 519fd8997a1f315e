//! What `wright run`, `wright chat` and `wright resume` add to the session library: the
//! command-line options of where a conversation works, the terminal as the session's
//! `Front`, preparing a session from the flags, and driving a run to its end (Ctrl-C,
//! the report, the exit code). The work itself is `wright_session`'s.

use crate::progress::JsonLines;
use crate::progress::Progress;
use crate::report::print_report;
pub use crate::settings::CommonArgs;
use crate::settings::SessionSettings;
use anyhow::Result;
use clap::Args;
use std::path::Path;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use wright_core::Conversation;
use wright_core::Observer;
use wright_llm::Client;
use wright_protocol::AgentState;
use wright_protocol::ConfirmMode;
use wright_session::sandbox_setup::SandboxSetup;
use wright_session::working_copy;
use wright_session::working_copy::WorkingCopy;
use wright_session::Replies;
use wright_session::Session;

/// The terminal, as the session library's front: results on stdout, warnings on stderr
/// (through `say!` and `tell!`: sanitized), and questions only where someone can answer.
pub struct Terminal {
    /// `--json`: stdout is the event log's, and nobody is asked anything.
    pub json: bool,
}

impl wright_session::Front for Terminal {
    fn notice(&self, notice: wright_protocol::Notice) {
        match notice.is_warning() {
            true => tell!("wright: {notice}"),
            false => say!("{notice}"),
        }
    }
    fn confirm(&self, question: &wright_protocol::Question) -> bool {
        crate::ask::can_ask(self.json) && crate::ask::yes(&question.to_string())
    }
}

/// A new session on the workspace `place` names, with the settings of the flags, the
/// environment and the configuration files (the repository's own read at the commit
/// the conversation starts from), on the first profile of the chain whose server
/// answers; with the header's lines about the profiles.
pub async fn prepare(
    common: &CommonArgs,
    place: &WorkspaceArgs,
    replies: Replies,
) -> Result<(SessionSettings, Session, Vec<String>)> {
    let front = Terminal { json: common.json };
    let start = Session::locate(&place.workspace, &front)?;
    let command = match replies {
        Replies::AlwaysCalls => wright_config::RouteCommand::Run,
        Replies::MayBeWords => wright_config::RouteCommand::Chat,
    };
    let settings =
        SessionSettings::resolve_routed(common, Some(&start.config_source()), Some(command))?;
    // A key or flag of an earlier version still works; its replacement is named once.
    for line in &settings.values.deprecated {
        tell!("warning: {line}");
    }
    // First: a secret that is not stored stops the run before the server is asked.
    let sandbox = settings.sandbox_choice()?;
    // The fallback profiles too, before anything is made (each checked for egress).
    let wright_session::settings::Connected {
        mut settings,
        client,
        profiles,
        lines,
    } = wright_session::settings::connect(settings, common, None).await?;
    // A chat asks before risky actions unless told otherwise; a run does not.
    settings.values.confirm.get_or_insert(match replies {
        Replies::MayBeWords => wright_protocol::ConfirmMode::Risky,
        Replies::AlwaysCalls => wright_protocol::ConfirmMode::Never,
    });
    let uncommitted = if place.include_uncommitted {
        working_copy::UncommittedChoice::Include
    } else if crate::ask::can_ask(settings.json) {
        working_copy::UncommittedChoice::Ask
    } else {
        working_copy::UncommittedChoice::Leave
    };
    let request = wright_session::Request {
        client,
        settings: settings.values.clone(),
        place: wright_session::Place {
            in_place: place.in_place,
            force: place.force,
            uncommitted,
            snapshot: !place.no_snapshot,
        },
        sandbox,
        replies,
        profiles,
    };
    // A model server's error in it is worded with its remedy where it is printed.
    let session = Session::prepare(start, request, &front).await?;
    // A terminal's header says what the sandbox enforces: its check is awaited now, and a
    // refusal ends the run before the model is asked (with --json, the first request
    // does not wait for it).
    let session = match settings.json {
        true => session,
        false => session.checked()?,
    };
    Ok((settings, session, lines))
}

/// The header's lines about the model.
pub fn model_lines(session: &Session) -> Vec<String> {
    vec![
        format!("tool calls {}", session.tool_calling_why),
        format!("constraint {}", session.constraint_why),
        format!("context {}", window_words(&session.window)),
        format!("tools {}", session.tools_why),
        format!(
            "confirm {}",
            confirm_words(session.settings.confirm.unwrap_or(ConfirmMode::Never))
        ),
    ]
    .into_iter()
    .chain(teaching_lines(session))
    .collect()
}

/// The header's lines about what the repository and the user teach the agent: the
/// instructions and skills (with their cost in tokens), and the hooks.
pub fn teaching_lines(session: &Session) -> Vec<String> {
    let mut lines = session.teaching.describe();
    lines.extend(session.hooks.describe());
    if matches!(
        session.hooks.repo,
        Some(wright_session::hooks::RepoHooks::NotAllowed(_))
    ) {
        lines.push(
            "  (`wright allow repo-hooks` shows and allows them; --allow-repo-hooks for one run)"
                .into(),
        );
    }
    lines.extend(session.tools.mcp.describe());
    if matches!(
        session.tools.mcp.repo,
        Some(wright_session::mcp::RepoMcp::NotAllowed(_))
    ) {
        lines.push(
            "  (`wright allow repo-mcp` shows and allows them; --allow-repo-mcp for one run)"
                .into(),
        );
    }
    lines
}

/// What a confirmation mode asks before, for the header.
pub fn confirm_words(mode: ConfirmMode) -> &'static str {
    match mode {
        ConfirmMode::Never => "never: no action waits for you (--confirm risky asks before pushes, installs, the network, deleting many files)",
        ConfirmMode::Risky => "risky: asks before high- and unknown-risk actions",
        ConfirmMode::Always => "always: asks before every action but think, finish and the plan",
    }
}

/// Where the window comes from, naming the flag that sets it.
pub fn window_words(window: &wright_session::connect::Window) -> String {
    use wright_session::connect::WindowSource;
    let tokens = window.tokens.unwrap_or_default();
    match &window.source {
        WindowSource::UserLimit {
            server: Some(server),
        } => format!("{tokens} tokens (--context-window; the server has {server})"),
        WindowSource::UserLimit { server: None } => format!("{tokens} tokens (--context-window)"),
        WindowSource::Unknown => format!(
            "unknown ({} did not say); pass --context-window N so wright never sends more than it holds",
            window.kind.name()
        ),
        WindowSource::Server { .. } | WindowSource::Ollama { .. } => window.description(),
    }
}

/// Drives `session`'s `conversation` to its end and reports it; returns the exit status.
pub async fn drive(
    session: Session,
    mut conversation: Conversation,
    message: Option<&str>,
    settings: &SessionSettings,
    title: &str,
) -> Result<u8> {
    let started = Instant::now();
    let cancel = CancellationToken::new();
    let signal = crate::signals::watch(cancel.clone(), conversation.interrupt_reason());
    conversation.set_confirmer(crate::confirm::TerminalConfirmer::for_run(settings.json));
    let mut observer: Box<dyn Observer> = if settings.json {
        Box::new(JsonLines)
    } else {
        Box::new(Progress::new())
    };
    let (outcome, finished) = session
        .run_to_end(
            conversation,
            message,
            settings.limits(),
            &cancel,
            observer.as_mut(),
            title,
        )
        .await?;
    let (changes, id, log_path) = (&finished.changes, &finished.id, &finished.log_path);
    if !settings.json {
        tell!();
        print_report(&outcome, started.elapsed(), changes, id, log_path);
        // What each model did, when more than one worked.
        if let Ok(parsed) = wright_protocol::read_log(log_path) {
            for line in wright_session::settings::fleet::share_lines(&parsed.events) {
                say!("{line}");
            }
        }
    }
    if tell_failure(changes, id) {
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

/// `wright run --agent NAME TASK`: the external agent `[agents.NAME]` of the user's own
/// file runs the task in a new session's sandbox and clone (its `allow_hosts` added to
/// the sandbox's), instead of wright's own loop (`wright_acp::client`).
pub async fn run_external(
    name: &str,
    task: &str,
    place: &WorkspaceArgs,
    mut common: CommonArgs,
) -> Result<u8> {
    let agent = external_agent(name)?;
    common.allow_hosts.extend(agent.allow_hosts.iter().cloned());
    let (settings, mut session, profile_lines) =
        prepare(&common, place, Replies::AlwaysCalls).await?;
    session.agent = Some(agent.name.clone());
    let conversation = session.begin_external()?;
    if !settings.json {
        print_external_header(&session, &agent, profile_lines)?;
    }
    drive_external(
        session,
        conversation,
        &agent,
        task,
        wright_acp::client::Opening::New,
        settings.json,
    )
    .await
}

/// Runs `conversation` with the external agent `agent` — `task` its prompt, in a new
/// session of the agent's or the one it had (`opening`) — to its end, reported as a
/// run's; the exit status.
pub async fn drive_external(
    session: Session,
    mut conversation: wright_session::Running,
    agent: &wright_config::agents::AgentConfig,
    task: &str,
    opening: wright_acp::client::Opening<'_>,
    json: bool,
) -> Result<u8> {
    let started = Instant::now();
    let cancel = CancellationToken::new();
    let signal = crate::signals::watch(cancel.clone(), conversation.interrupt_reason());
    conversation.set_confirmer(std::sync::Arc::new(SessionConfirmer(
        crate::confirm::TerminalConfirmer::for_run(json),
    )));
    let mut observer: Box<dyn Observer> = if json {
        Box::new(JsonLines)
    } else {
        Box::new(Progress::new())
    };
    let mut observer = SessionObserver(observer.as_mut());
    let (ended, finished) = wright_acp::client::run_to_end(
        session,
        conversation,
        agent,
        task,
        opening,
        &cancel,
        &mut observer,
    )
    .await?;
    let outcome = ended.into_outcome();
    let (changes, id, log_path) = (&finished.changes, &finished.id, &finished.log_path);
    if !json {
        tell!();
        print_report(&outcome, started.elapsed(), changes, id, log_path);
    }
    if tell_failure(changes, id) {
        return Ok(1);
    }
    Ok(match (outcome.state, signal.received()) {
        (AgentState::Stopped, Some(code)) => code,
        (state, _) => exit_status(state, false),
    })
}

/// The external agent `[agents.NAME]` of the user's own file.
pub fn external_agent(name: &str) -> Result<wright_config::agents::AgentConfig> {
    let file = wright_config::Config::user_file().ok_or_else(|| {
        anyhow::anyhow!(
            "no configuration file to read [agents.{name}] from (set HOME or XDG_CONFIG_HOME)"
        )
    })?;
    Ok(wright_config::agents::find(&file, name)?)
}

/// The header of a session an external agent works in: where, and which agent.
pub fn print_external_header(
    session: &Session,
    agent: &wright_config::agents::AgentConfig,
    profile_lines: Vec<String>,
) -> anyhow::Result<()> {
    print_header(
        &session.id,
        &session.client,
        session.tools.workspace.root(),
        &session.working_copy,
        &[
            vec![format!(
                "agent {} (external, over ACP): {}",
                agent.name,
                agent.command.join(" ")
            )],
            profile_lines,
        ]
        .concat(),
        &session.tools.setup,
    )
}

/// The terminal's confirmer as the session's.
pub struct SessionConfirmer(pub std::sync::Arc<dyn wright_core::confirm::Confirmer>);

#[async_trait::async_trait]
impl wright_session::Confirmer for SessionConfirmer {
    fn can_answer(&self) -> bool {
        self.0.can_answer()
    }
    async fn ask(&self, pending: &wright_protocol::Pending) -> wright_protocol::Answer {
        self.0.ask(pending).await
    }
}

/// The terminal's observer as the session's.
pub struct SessionObserver<'a>(pub &'a mut dyn Observer);

impl wright_session::Observer for SessionObserver<'_> {
    fn event(&mut self, event: &wright_protocol::Event) {
        self.0.event(event);
    }
    fn delta(&mut self, delta: &wright_llm::StreamDelta) {
        self.0.delta(delta);
    }
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

/// The run's first lines, on stderr. They say what the sandbox enforces, so they wait
/// for its check (elsewhere the first request does not); its refusal is the error.
pub fn print_header(
    id: &str,
    client: &Client,
    workspace: &Path,
    working_copy: &WorkingCopy,
    lines: &[String],
    setup: &SandboxSetup,
) -> anyhow::Result<()> {
    setup.settle_check()?;
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
        WorkingCopy::InPlace(in_place) => format!(" (in place; {})", in_place.read_only_words()),
        WorkingCopy::Direct { .. } => String::new(),
    };
    let place = if client.is_in_process() {
        "in wright's embedded engine (no server)".to_string()
    } else {
        format!("on {}", client.config().base_url)
    };
    tell!(
        "wright · conversation {id} · model {} {place}\n  workspace {}{clone}",
        client.config().model,
        workspace.display(),
    );
    for line in lines {
        tell!("  {line}");
    }
    let details = match setup.has_details() {
        true => " (--verbose: the details)",
        false => "",
    };
    tell!("  sandbox {}{details}\n", setup.describe());
    Ok(())
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
