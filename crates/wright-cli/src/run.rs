//! `wright run TASK`: connect to the model, set up the workspace's tools, run the loop to
//! its end, print the outcome. Ctrl-C stops cleanly (a second one exits at once).

use crate::connect::connect;
use crate::connect::context_window;
use crate::connect::ServerChoice;
use crate::progress::JsonLines;
use crate::progress::Progress;
use crate::report::print_report;
use crate::sandbox_setup::SandboxOptions;
use crate::sandbox_setup::SandboxSetup;
use crate::tool_mode;
use crate::working_copy;
use crate::working_copy::WorkingCopy;
use anyhow::Context;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use wright_core::conversations_dir;
use wright_core::new_conversation_id;
use wright_core::system_prompt;
use wright_core::Conversation;
use wright_core::Limits;
use wright_core::Observer;
use wright_llm::ClientConfig;
use wright_protocol::AgentState;
use wright_sandbox::SandboxMode;
use wright_tools::FileEditorTool;
use wright_tools::FinishTool;
use wright_tools::TerminalTool;
use wright_tools::ThinkTool;
use wright_tools::Tool;
use wright_tools::Toolbox;
use wright_tools::Workspace;

#[derive(Args)]
pub struct RunArgs {
    /// What to do, in plain words, in any language.
    task: String,
    /// Model server URL (default: $OPENAI_BASE_URL, $OLLAMA_HOST, else the local servers that answer).
    #[arg(long, env = "OPENAI_BASE_URL")]
    base_url: Option<String>,
    /// Model name (default: $OPENAI_MODEL, else the server's only model).
    #[arg(long, env = "OPENAI_MODEL")]
    model: Option<String>,
    /// API key, if the server wants one (any value works for local servers).
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// The repository to work in.
    #[arg(short = 'C', long, default_value = ".")]
    workspace: PathBuf,
    /// Stop after this many model steps.
    #[arg(long, default_value_t = 50)]
    max_steps: u32,
    /// Confinement of the model's commands: auto, landlock, namespaces, docker or none.
    #[arg(long, default_value = "auto")]
    sandbox: String,
    /// Let the model's commands use the network (off by default).
    #[arg(long)]
    network: bool,
    /// Most processes the model's commands may run at once.
    #[arg(long, default_value_t = 512)]
    max_processes: u64,
    /// Memory limit for all the model's commands together, in MiB (default: half the RAM, at most 16 GiB).
    #[arg(long)]
    max_memory: Option<u64>,
    /// Largest file a command may write, in MiB.
    #[arg(long, default_value_t = 4096)]
    max_file_size: u64,
    /// How tool calls travel: auto (probe the server once, remember), native, or text
    /// (tools described in the prompt, calls read from the reply).
    #[arg(long, default_value = "auto")]
    tool_calling: String,
    /// Never send more than this many tokens, even if the server's window is larger.
    #[arg(long)]
    context_window: Option<u64>,
    /// Work directly in the workspace instead of a clone on a new branch.
    #[arg(long)]
    in_place: bool,
    /// With --in-place: work even if the tree has uncommitted changes.
    #[arg(long)]
    force: bool,
    /// Print the event log's lines on stdout instead of progress on stderr.
    #[arg(long)]
    json: bool,
    /// Ask for whole replies instead of streamed ones.
    #[arg(long)]
    no_stream: bool,
    /// Sampling temperature sent to the server (default: the server's).
    #[arg(long)]
    temperature: Option<f32>,
    /// Seconds of silence from the server before a request is given up.
    #[arg(long, default_value_t = 600)]
    idle_timeout: u64,
}

pub async fn run(args: RunArgs) -> Result<u8> {
    let started = Instant::now();
    // Not dumpable: the model's commands (no capabilities) cannot read this process's
    // memory or /proc/PID/environ, where the API key may be.
    let _ = nix::sys::prctl::set_dumpable(false);
    let mode: SandboxMode = args.sandbox.parse()?;
    let requested = args.workspace.canonicalize().with_context(|| {
        format!(
            "the workspace {} must be an existing directory",
            args.workspace.display()
        )
    })?;

    let mut config = ClientConfig::new("", "");
    config.stream = !args.no_stream;
    config.temperature = args.temperature;
    config.idle_timeout = Duration::from_secs(args.idle_timeout.max(1));
    let choice = ServerChoice {
        base_url: args.base_url.filter(|v| !v.is_empty()),
        model: args.model.filter(|v| !v.is_empty()),
        api_key: args.api_key,
    };
    let client = connect(choice, config).await?;
    let (tool_calling, tool_calling_why) = tool_mode::decide(&args.tool_calling, &client).await?;
    let window = context_window(&client, args.context_window).await;

    let id = new_conversation_id();
    let conversation_dir = conversations_dir().join(&id);
    std::fs::create_dir_all(&conversation_dir)
        .with_context(|| format!("cannot create {}", conversation_dir.display()))?;
    let working_copy = WorkingCopy::prepare(
        &requested,
        &conversation_dir,
        &id,
        args.in_place,
        args.force,
    )?;
    let workspace =
        Workspace::new(working_copy.workspace()).map_err(|err| anyhow::anyhow!("{err}"))?;
    let options = SandboxOptions {
        network: args.network,
        max_processes: args.max_processes,
        max_memory_mb: args.max_memory,
        max_file_mb: args.max_file_size,
    };
    let setup = SandboxSetup::new(
        mode,
        options,
        working_copy.writable_root(),
        &working_copy.shared_read_only(),
        &id,
    )?;
    let terminal = Arc::new(TerminalTool::new(
        workspace.clone(),
        setup.env.clone(),
        setup.sandbox.clone(),
    ));
    // The shell starts while the first request is prepared and sent.
    let warm = terminal.clone();
    let warm_up = tokio::spawn(async move { warm.warm_up().await });

    let tools: Vec<Arc<dyn Tool>> = vec![
        terminal.clone(),
        Arc::new(FileEditorTool::new(workspace.clone())),
        Arc::new(ThinkTool),
        Arc::new(FinishTool),
    ];
    let log_path = conversation_dir.join("events.jsonl");
    let root = workspace.root().display().to_string();
    let mut conversation = Conversation::create(
        &id,
        &log_path,
        &root,
        client.clone(),
        Toolbox::new(tools),
        system_prompt(&root),
        tool_calling,
    )?;
    if let Some(tokens) = window.tokens {
        conversation.set_context_window(tokens);
    }
    if !args.json {
        eprintln!(
            "wright · conversation {id} · model {} on {}\n  workspace {root}{}\n  tool calls {tool_calling_why}\n  context {}\n  sandbox {}\n",
            client.config().model,
            client.config().base_url,
            match &working_copy {
                WorkingCopy::Clone(clone) => format!(" (a clone of {} on branch {}; your checkout is not touched)", clone.repo_root.display(), clone.branch),
                WorkingCopy::Direct { .. } => String::new(),
            },
            window.description,
            setup.describe()
        );
        if let Some(warning) = &window.warning {
            eprintln!("warning: {warning}\n");
        }
    }

    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!(
                "\nwright: stopping after logging the current step (Ctrl-C again to quit at once)"
            );
            on_signal.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });

    let mut observer: Box<dyn Observer> = if args.json {
        Box::new(JsonLines)
    } else {
        Box::new(Progress::new())
    };
    for event in conversation.events() {
        observer.event(event);
    }
    let limits = Limits {
        max_steps: args.max_steps,
    };
    let outcome = conversation
        .run(&args.task, limits, &cancel, observer.as_mut())
        .await?;
    warm_up.abort();
    // The shell must be gone before the clone is committed.
    drop(conversation);
    drop(terminal);
    let changes = match working_copy.finish(&args.task, &setup.sandbox, &setup.env) {
        Ok(changes) => changes,
        Err(err) => {
            eprintln!("wright: {err:#}");
            working_copy::Outcome::Direct
        }
    };
    if !args.json {
        eprintln!();
        print_report(
            &outcome,
            started.elapsed(),
            &changes,
            &id,
            workspace.root(),
            &log_path,
        );
    }
    Ok(match outcome.state {
        AgentState::Finished => 0,
        AgentState::Stopped if cancel.is_cancelled() => 130,
        AgentState::Stopped | AgentState::Stuck | AgentState::AwaitingConfirmation => 3,
        AgentState::Failed | AgentState::Running => 1,
    })
}
