//! The in-process harness for the loop and its strategies: a scripted model (the testkit's
//! server, on 127.0.0.1 in this process), a temporary workspace with the real file
//! editor, and a scripted shell, so a strategy is tested in milliseconds without the
//! `wright` binary, a sandbox or a subprocess. The end-to-end tests of `wright-cli` keep
//! what a user sees; this is for the decisions.
//!
//! ```ignore
//! let mut h = Harness::run_mode(vec![reply().call("finish", json!({"message": "done"}))]).await;
//! let outcome = h.run("fix it").await;
//! assert!(h.results().iter().any(|(tool, text)| tool == "finish" && text.contains("…")));
//! ```

#![allow(dead_code)]

use serde_json::json;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;
use wright_core::Conversation;
use wright_core::Limits;
use wright_core::Observer;
use wright_core::Opening;
use wright_core::Outcome;
use wright_llm::Client;
use wright_llm::ClientConfig;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::ToolCalling;
use wright_strategies::Help;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;
use wright_tools::Tool;
use wright_tools::ToolError;
use wright_tools::ToolOutput;
use wright_tools::Toolbox;
use wright_tools::Workspace;

pub use wright_testkit::reply;

/// A conversation over a temporary workspace, its model scripted.
pub struct Harness {
    pub workspace: tempfile::TempDir,
    /// Where the log is: apart from the workspace, as a front end keeps it.
    home: tempfile::TempDir,
    pub server: ScriptedServer,
    pub conversation: Conversation,
    pub shell: Arc<ScriptedShell>,
    run_mode: bool,
}

impl Harness {
    /// `wright run`'s loop: only `finish` ends the task.
    pub async fn run_mode(script: Vec<Reply>) -> Self {
        Self::start(script, true).await
    }

    /// A chat's loop: a plain answer ends the turn.
    pub async fn chat_mode(script: Vec<Reply>) -> Self {
        Self::start(script, false).await
    }

    async fn start(script: Vec<Reply>, run_mode: bool) -> Self {
        let workspace = tempfile::tempdir().expect("workspace");
        let home = tempfile::tempdir().expect("home");
        let server = ScriptedServer::start(script).await.expect("server");
        let shell = Arc::new(ScriptedShell::default());
        let log = home.path().join("events.jsonl");
        let mut conversation = Conversation::create(
            "harness",
            &log,
            &workspace.path().display().to_string(),
            client(&server),
            toolbox(workspace.path(), &shell),
            Opening {
                system_prompt: "You fix code.".into(),
                ..Opening::default()
            },
            ToolCalling::Native,
        )
        .expect("create");
        wright_strategies::register(&mut conversation);
        conversation.set_require_finish(run_mode);
        conversation.set_workspace(Workspace::new(workspace.path()).expect("workspace"));
        Self {
            workspace,
            home,
            server,
            conversation,
            shell,
            run_mode,
        }
    }

    /// Writes a file of the workspace.
    pub fn write(&self, path: &str, text: &str) {
        let path = self.workspace.path().join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("dirs");
        }
        std::fs::write(path, text).expect("write");
    }

    /// Runs `task` to its end (at most `steps` steps).
    pub async fn run_steps(&mut self, task: Option<&str>, steps: u32) -> Outcome {
        let limits = Limits {
            max_steps: steps,
            max_tokens: None,
            max_time: None,
            max_cost: None,
        };
        self.conversation
            .proceed(task, limits, &CancellationToken::new(), &mut Quiet)
            .await
            .expect("log")
    }

    pub async fn run(&mut self, task: &str) -> Outcome {
        self.run_steps(Some(task), 30).await
    }

    /// The process ends (the conversation and its model are dropped, as when wright is
    /// killed) and a new one resumes the conversation from its log, its model answering
    /// with `script`: nothing carries over but the log and the workspace.
    pub async fn resume(self, script: Vec<Reply>) -> Self {
        let Harness {
            workspace,
            home,
            conversation,
            shell,
            run_mode,
            ..
        } = self;
        drop(conversation);
        let server = ScriptedServer::start(script).await.expect("server");
        let (mut conversation, _notes) = Conversation::resume(
            &home.path().join("events.jsonl"),
            client(&server),
            toolbox(workspace.path(), &shell),
        )
        .expect("resume");
        wright_strategies::register(&mut conversation);
        conversation.set_require_finish(run_mode);
        conversation.set_workspace(Workspace::new(workspace.path()).expect("workspace"));
        Self {
            workspace,
            home,
            server,
            conversation,
            shell,
            run_mode,
        }
    }

    pub fn events(&self) -> &[Event] {
        self.conversation.events()
    }

    /// What wright told the model in messages of its own, in order.
    pub fn said(&self) -> Vec<String> {
        self.events()
            .iter()
            .filter_map(|e| match (&e.body, e.source) {
                (EventBody::Message { text, .. }, Source::Environment) => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    /// Each call's result as the model read it: (tool, text), in order.
    pub fn results(&self) -> Vec<(String, String)> {
        self.events()
            .iter()
            .filter_map(|e| match &e.body {
                EventBody::Observation { tool, output, .. } => Some((tool.clone(), output.clone())),
                _ => None,
            })
            .collect()
    }

    /// The results of the calls of `tool`.
    pub fn results_of(&self, tool: &str) -> Vec<String> {
        self.results()
            .into_iter()
            .filter(|(t, _)| t == tool)
            .map(|(_, text)| text)
            .collect()
    }

    pub fn log_path(&self) -> PathBuf {
        self.home.path().join("events.jsonl")
    }
}

fn client(server: &ScriptedServer) -> Client {
    let mut config = ClientConfig::new(server.url(), "scripted");
    config.max_retries = 0;
    Client::new(config).expect("client")
}

fn toolbox(root: &std::path::Path, shell: &Arc<ScriptedShell>) -> Toolbox {
    let workspace = Workspace::new(root).expect("workspace");
    Toolbox::new(vec![
        shell.clone() as Arc<dyn Tool>,
        Arc::new(wright_tools::FileEditorTool::new(workspace)),
        Arc::new(wright_tools::ThinkTool),
        Arc::new(wright_tools::FinishTool),
    ])
}

/// Sees nothing: the log is what tests read.
pub struct Quiet;

impl Observer for Quiet {
    fn event(&mut self, _event: &Event) {}
    fn delta(&mut self, _delta: &wright_llm::StreamDelta) {}
}

/// How the scripted shell answers a command, when it does: exit code and output.
type Rule = Box<dyn Fn(&str) -> Option<(i32, String)> + Send + Sync>;

/// A `terminal` that runs nothing: each command is answered by the first rule that
/// answers it (the newest first), else exits 0 printing nothing. For the decisions that
/// read exit codes; the real shell is tested with the sandbox elsewhere.
#[derive(Default)]
pub struct ScriptedShell {
    rules: Mutex<Vec<Rule>>,
}

impl ScriptedShell {
    /// A command that holds `words` exits with `exit_code`, printing `output`.
    pub fn answers(&self, words: &str, exit_code: i32, output: &str) {
        let (words, output) = (words.to_string(), output.to_string());
        self.reacts(move |command| {
            command
                .contains(&words)
                .then(|| (exit_code, output.clone()))
        });
    }

    /// Commands answered by `rule` (say, from what a file of the workspace holds now).
    pub fn reacts(&self, rule: impl Fn(&str) -> Option<(i32, String)> + Send + Sync + 'static) {
        self.rules.lock().expect("rules").insert(0, Box::new(rule));
    }
}

#[async_trait::async_trait]
impl Tool for ScriptedShell {
    fn name(&self) -> &'static str {
        "terminal"
    }

    fn schema(&self) -> Value {
        json!({"type": "function", "function": {
            "name": "terminal",
            "description": "Run a shell command.",
            "parameters": {"type": "object", "properties": {
                "command": {"type": "string"}
            }, "required": ["command"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let command = arguments["command"].as_str().unwrap_or_default();
        let (code, text) = self
            .rules
            .lock()
            .expect("rules")
            .iter()
            .find_map(|rule| rule(command))
            .unwrap_or_default();
        Ok(ToolOutput {
            text: format!("{text}\n[exit code: {code}]"),
            exit_code: Some(code),
            ..ToolOutput::default()
        })
    }
}
