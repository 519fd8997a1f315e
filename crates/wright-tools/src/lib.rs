//! The tools a model calls, behind one `Tool` trait the agent core drives.
//!
//! Names and parameters follow OpenHands (`terminal`, `file_editor`, `think`, `finish`,
//! `task_tracker`; `grep` and `glob` as other agents name them, with the aliases `execute_bash`, `bash`, `str_replace_editor`) so models trained on its
//! trajectories feel at home; descriptions are short because every schema token is
//! prefilled on the user's hardware at every uncached step.
//!
//! Failures come in two kinds (`ToolError`): what the model can fix (bad arguments, no
//! match, a path outside the workspace) goes back to it as an error observation; what it
//! cannot (the terminal cannot start, the disk is full) stops the turn.

mod args;
mod browser;
mod catalog;
pub mod failure;
mod fetch;
mod file_editor;
mod finish;
mod guard;
mod mask;
mod page_text;
mod registry;
pub mod risk;
mod scratch;
mod search;
mod shapes;
mod skill;
mod snapshot;
mod task_tracker;
mod terminal;
mod test_files;
mod text;
mod think;
mod workspace;

// Files opened beneath a directory without following a link: the workspace map (in
// wright-strategies) reads the project's files beneath the workspace's descriptor too.
pub use browser::chromium_program;
pub use browser::BrowserTool;
pub use browser::CHROMIUM;
pub use browser::HEADLESS_SHELL;
pub use catalog::ToolName;
pub use catalog::ToolSet;
pub use fetch::FetchTool;
pub use file_editor::editable_text;
pub use file_editor::FileEditorTool;
pub use finish::FinishTool;
pub use guard::Last;
pub use guard::Target;
pub use mask::MaskError;
pub use mask::MaskStream;
pub use mask::Masker;
pub use registry::intern_name;
pub use registry::Toolbox;
pub use scratch::Scratch;
pub use search::GlobTool;
pub use search::GrepTool;
pub use shapes::CommandShape;
pub use skill::SkillTool;
pub use snapshot::walk::open_dir_nofollow;
pub use snapshot::walk::open_regular;
pub use snapshot::walk::parent_dir;
pub use snapshot::Bounds as SnapshotBounds;
pub use snapshot::ChangedFile;
pub use snapshot::Changes;
pub use snapshot::Delta as StampDelta;
pub use snapshot::Left as SnapshotLeft;
pub use snapshot::Restored;
pub use snapshot::RunState;
pub use snapshot::Snapshot;
pub use snapshot::SnapshotError;
pub use snapshot::StampError;
pub use snapshot::Tree as SnapshotTree;
pub use snapshot::TreeStamp;
pub use task_tracker::TaskTrackerTool;
pub use terminal::shell_quote;
pub use terminal::TerminalTool;
pub use test_files::is_test_file;
pub use text::clean_terminal_output;
pub use think::ThinkTool;
pub use workspace::Workspace;

use serde_json::Value;

/// What a tool call produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    pub text: String,
    /// The call did not do what was asked (shown to the model as an error).
    pub is_error: bool,
    pub exit_code: Option<i32>,
    /// Set by `finish`: the task is over, with this message for the user.
    pub finish: Option<String>,
    /// Set by `task_tracker` when it changed the plan: the whole new plan, to be logged.
    pub plan: Option<Vec<wright_protocol::PlanTask>>,
    /// Connections to the network made during the call (through wright's proxy, or by
    /// `fetch`), to be logged after its observation.
    pub network: Vec<wright_protocol::NetConnection>,
    /// The text came from outside (a web page, an MCP tool): the loop wraps it as
    /// untrusted content before it is logged (see `wright_protocol::wrap_untrusted`).
    pub untrusted: Option<wright_protocol::Provenance>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum ToolError {
    /// The model can fix this: it goes back to the model as an error observation.
    #[error("{0}")]
    Model(String),
    /// Nothing the model does can fix this: the turn stops.
    #[error("{0}")]
    Fatal(String),
}

/// Where a tool sends its output as it comes, for a person to watch (the result still
/// comes whole at the end): raw bytes, which the receiver makes printable.
pub type OutputSink = dyn Fn(&[u8]) + Send + Sync;

/// Whether a call, as logged (a tool's name or alias, its arguments), may change files:
/// anything but viewing. One rule for the loop, which keeps the files of each step that
/// may have changed them, and for `fork`, which reads the log to know where they did. A
/// tool it does not know may change anything.
pub fn may_change_files(tool: &str, arguments: &Value) -> bool {
    match tool {
        "file_editor" | "str_replace_editor" => arguments["command"] != "view",
        // The browser writes only its profile in the private tmp; downloads are refused.
        "think" | "finish" | "grep" | "glob" | "task_tracker" | "skill" | "fetch" | "browser" => {
            false
        }
        _ => true,
    }
}

/// Whether a call, as the model made it, only reads the workspace and may run at the same
/// time as other such calls of the same reply: `grep`, `glob`, `file_editor view` and
/// `skill` (which reads the conversation's own skills).
/// Everything else (a command, an edit, the plan) runs alone, in the order it was made.
pub fn runs_concurrently(tool: &str, arguments: &Value) -> bool {
    match tool {
        "grep" | "glob" | "skill" => true,
        "file_editor" | "str_replace_editor" => arguments["command"] == "view",
        _ => false,
    }
}

/// A tool the model can call.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;

    /// Other names models use for the same tool.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// The OpenAI `tools` entry: `{"type":"function","function":{...}}`.
    fn schema(&self) -> Value;

    /// For a tool whose `command` picks one of several forms: each form's parameters, so
    /// a constrained reply requires what the form needs (see `shapes`). Empty for a tool
    /// with one form.
    fn command_shapes(&self) -> &'static [CommandShape] {
        &[]
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError>;

    /// Given the conversation's log when it is resumed, so a tool that keeps state across
    /// calls (the plan) takes it up where it was; most tools keep none.
    fn restore(&self, _events: &[wright_protocol::Event]) {}

    /// Told the model's context window in tokens (again whenever it changes), so what the
    /// tool shows stays a small share of it.
    fn fit_window(&self, _tokens: u64) {}

    /// The terminal's shell as the commands it ran left it (its aliases, functions,
    /// traps, `PATH`), which the risk of its next command depends on; `None` for the
    /// other tools.
    fn shell_state(&self) -> Option<risk::ShellState> {
        None
    }

    /// `run`, with what it prints sent to `output` as it comes (a command's output); most
    /// tools print nothing and keep this default.
    async fn run_watched(
        &self,
        arguments: &Value,
        output: &OutputSink,
    ) -> Result<ToolOutput, ToolError> {
        let _ = output;
        self.run(arguments).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_viewing_leaves_files_alone() {
        for (tool, arguments, changes) in [
            (
                "file_editor",
                json!({"command": "view", "path": "a"}),
                false,
            ),
            ("str_replace_editor", json!({"command": "view"}), false),
            (
                "file_editor",
                json!({"command": "create", "path": "a"}),
                true,
            ),
            ("file_editor", json!({"command": "undo_edit"}), true),
            ("file_editor", json!("not json at all"), true),
            ("terminal", json!({"command": "ls"}), true),
            ("think", json!({"thought": "x"}), false),
            ("finish", json!({"message": "x"}), false),
            ("grep", json!({"pattern": "x"}), false),
            ("glob", json!({"pattern": "*.rs"}), false),
            ("task_tracker", json!({"command": "plan"}), false),
            ("some_mcp_tool", json!({}), true),
        ] {
            assert_eq!(
                may_change_files(tool, &arguments),
                changes,
                "{tool} {arguments}"
            );
        }
    }
}
