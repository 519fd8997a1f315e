//! The shortest way to embed wright: a conversation on a workspace with a model, in a
//! few lines (see `examples/fix_a_test.rs`).
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! let ran = wright_session::Builder::new("/path/to/repo")?
//!     .model_server("http://127.0.0.1:8080/v1")
//!     .model("qwen2.5-coder-7b-instruct")
//!     .run("the test test_export_csv fails, fix it", &mut wright_session::Quiet)
//!     .await?;
//! println!("{:?}: {}", ran.outcome.stop, ran.finished.log_path.display());
//! # Ok(()) }
//! ```
//!
//! What it guarantees: the same session `wright run` prepares — the agent works in a
//! clone on a new branch of a git repository (never the checkout itself), every command
//! runs in the sandbox (`auto`: the strongest this machine has), the event log is written
//! as for any conversation (`wright show`, `wright resume` and the server read it) —
//! with wright's default settings, not the user's configuration file: an embedding
//! program says what it wants.

use crate::connect::connect;
use crate::connect::ServerChoice;
use crate::sandbox_setup::SandboxOptions;
use crate::Finished;
use crate::Front;
use crate::Grants;
use crate::Launcher;
use crate::Place;
use crate::Replies;
use crate::Request;
use crate::SandboxChoice;
use crate::Session;
use crate::Unattended;
use crate::UncommittedChoice;
use anyhow::Context;
use anyhow::Result;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;
use wright_config::Settings;
use wright_core::Observer;
use wright_llm::ClientConfig;
use wright_llm::StreamDelta;
use wright_protocol::Event;
use wright_sandbox::SandboxMode;

/// A conversation about to be made: where, with which model, with which settings.
pub struct Builder {
    workspace: PathBuf,
    server: ServerChoice,
    settings: Settings,
    launcher: Option<Launcher>,
    sandbox: SandboxMode,
    cancel: CancellationToken,
}

/// How a run built here ended: the loop's outcome (state, typed stop reason, the
/// model's summary) and where its changes and log went.
pub struct Ran {
    pub outcome: wright_core::Outcome,
    pub finished: Finished,
}

/// An observer that looks at nothing (the log on disk has every event anyway).
pub struct Quiet;

impl Observer for Quiet {
    fn event(&mut self, _event: &Event) {}
    fn delta(&mut self, _delta: &StreamDelta) {}
}

impl Builder {
    /// A conversation on `workspace` (a directory; a git repository's is worked on in a
    /// clone on a new branch) with wright's default settings; without a model server,
    /// the local one that answers is used.
    pub fn new(workspace: impl Into<PathBuf>) -> Result<Self> {
        let settings = Settings::from_config(&wright_config::Config::default(), None, |_| None)
            .context("wright's default settings do not load")?;
        Ok(Self {
            workspace: workspace.into(),
            server: ServerChoice {
                base_url: None,
                model_file: None,
                window: None,
                model: None,
                preferred_model: None,
                api_key: None,
            },
            settings,
            launcher: None,
            sandbox: SandboxMode::Auto,
            cancel: CancellationToken::new(),
        })
    }

    /// The OpenAI-compatible server (`http://host:port/v1`).
    pub fn model_server(mut self, base_url: impl Into<String>) -> Self {
        self.server.base_url = Some(base_url.into());
        self
    }

    /// The model's name on that server (default: the one it serves, when it serves one).
    pub fn model(mut self, name: impl Into<String>) -> Self {
        self.server.model = Some(name.into());
        self
    }

    /// The key the server wants, if any.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.server.api_key = Some(key.into());
        self
    }

    /// The sandbox level (default `auto`); `none` only where the caller confines wright
    /// itself.
    pub fn sandbox(mut self, mode: SandboxMode) -> Self {
        self.sandbox = mode;
        self
    }

    /// Changes any setting (`max_steps`, `tool_calling`, `tools`, …: the keys of
    /// `wright config`).
    pub fn settings(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        change(&mut self.settings);
        self
    }

    /// The program confined commands start through (default: `wright-launcher` or
    /// `wright` beside this program, see `Launcher::find`).
    pub fn launcher(mut self, launcher: Launcher) -> Self {
        self.launcher = Some(launcher);
        self
    }

    /// Cancelling this token stops the run after the step in flight is logged.
    pub fn cancel_with(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// Prepares the session (connects, makes the clone and the sandbox), without running
    /// it: for a program that drives the conversation itself.
    pub async fn prepare(&self, front: &dyn Front) -> Result<Session> {
        let start = Session::locate(&self.workspace, front)?;
        let mut config = ClientConfig::new("", "");
        config.stream = self.settings.stream;
        config.temperature = self.settings.temperature;
        let client = connect(self.server.clone(), config).await?;
        let launcher = match &self.launcher {
            Some(launcher) => launcher.clone(),
            None => Launcher::find()?,
        };
        let request = Request {
            client,
            settings: self.settings.clone(),
            place: Place {
                in_place: false,
                force: false,
                uncommitted: UncommittedChoice::Leave,
                snapshot: true,
            },
            sandbox: SandboxChoice {
                mode: self.sandbox,
                options: SandboxOptions::of(&self.settings, false),
                launcher,
                secrets: Grants::none(),
                // An embedding program's front answers; `Unattended` says no.
                repo_hooks: crate::hooks::RepoHooksChoice::Ask,
                repo_mcp: crate::hooks::RepoHooksChoice::Ask,
            },
            replies: Replies::AlwaysCalls,
            profiles: crate::Profiles::default(),
        };
        Session::prepare(start, request, front).await
    }

    /// Runs `task` to its end (finished, or stopped by a limit or the token), showing
    /// each event and streamed delta to `observer`, and hands the changes over.
    pub async fn run(self, task: &str, observer: &mut dyn Observer) -> Result<Ran> {
        let session = self.prepare(&Unattended).await?;
        let mut conversation = session.start_conversation(session.workspace_map())?;
        session.begin_with_first_look(&mut conversation);
        let limits = crate::limits(&session.settings);
        let (outcome, finished) = session
            .run_to_end(
                conversation,
                Some(task),
                limits,
                &self.cancel,
                observer,
                task,
            )
            .await?;
        Ok(Ran { outcome, finished })
    }
}
