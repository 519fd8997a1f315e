//! The reviewer with fresh eyes (`--review PROFILE`): at each `finish`, a second agent —
//! on its own model, which may be another profile's — looks at the change. It sees only
//! the task, the repository and the diff, never the writer's history: it works in a
//! conversation and a clone of its own (a new session from the writer's start commit,
//! given the writer's files as they are now, copied inside a sandbox since they are the
//! agent's), with tools that only read (file views, grep, glob) and the terminal in its
//! sandbox to run the tests. It ends through a typed call, `verdict` (approve, or request
//! changes with findings).
//!
//! What it guarantees: nothing the reviewer does reaches the writer's clone or branch
//! (its clone is removed after each review, its branch is never handed over); its log is
//! kept, in a group named after the writer, for `wright show`.

use crate::sandbox_setup::Placement;
use crate::sandbox_setup::SandboxSetup;
use crate::working_copy::AgentClone;
use crate::working_copy::StartPoint;
use crate::working_copy::UncommittedChoice;
use crate::working_copy::WorkingCopy;
use crate::Place;
use crate::Replies;
use crate::Request;
use crate::SandboxChoice;
use crate::Session;
use anyhow::bail;
use anyhow::Context;
use serde_json::json;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;
use wright_config::Settings;
use wright_core::second_look::NoVerdict;
use wright_core::second_look::Opinion;
use wright_core::Conversation;
use wright_llm::Client;
use wright_protocol::Verdict;
use wright_sandbox::RunLimits;
use wright_strategies::Help;
use wright_tools::Tool;
use wright_tools::ToolError;
use wright_tools::ToolOutput;
use wright_tools::Toolbox;

/// The reviewer's tools: terminal, file views, grep, glob, think; `verdict` ends it.
const TOOLS: &str = "terminal,file_editor,grep,glob,think";

/// The most of the diff put in the reviewer's first message; it reads the rest itself.
const DIFF_SHOWN: usize = 40_000;

/// A reviewer for the conversation of one session.
pub struct FreshReviewer {
    client: Client,
    settings: Settings,
    sandbox: SandboxChoice,
    /// The writer's repository (the user's), as a start point's directory.
    start_dir: PathBuf,
    base: wright_sandbox::git::Oid,
    /// The writer's clone, read (never written) to give the reviewer its files.
    writer_root: PathBuf,
    writer: crate::inspect::GitInspector,
    writer_id: String,
}

impl FreshReviewer {
    /// A reviewer of `writer`'s change on `client`, with its own `settings` and sandbox.
    /// Refused where the writer has no clone of its own (in place, outside git): the
    /// reviewer must not work where the writer does.
    pub fn new(
        writer: &Session,
        client: Client,
        mut settings: Settings,
        sandbox: SandboxChoice,
    ) -> anyhow::Result<Self> {
        let WorkingCopy::Clone(clone) = &writer.working_copy else {
            bail!("a reviewer needs the agent to work in a clone of a git repository (not in place, not outside git)");
        };
        let Some(inspector) = writer.tools.inspector(&writer.working_copy) else {
            bail!("the agent's changes cannot be read for a reviewer");
        };
        let sub = clone
            .workspace
            .strip_prefix(&clone.clone_root)
            .unwrap_or(std::path::Path::new(""));
        settings.tools = TOOLS.into();
        // The toolbox is changed after the session is prepared: a schema made for the
        // other tools would hold the reviewer's replies away from `verdict`.
        settings.constrain = "off".into();
        settings.assist = settings.assist.clone().with(
            wright_config::assist::Piece::Map,
            wright_config::assist::Level::Off,
        );
        Ok(Self {
            client,
            settings,
            sandbox,
            start_dir: clone.repo.top().join(sub),
            base: clone.base.clone(),
            writer_root: clone.clone_root.clone(),
            writer: inspector,
            writer_id: writer.id.clone(),
        })
    }

    /// The reviewer's session: a clone of the writer's repository at its start commit,
    /// given the writer's files.
    async fn prepare(&self) -> anyhow::Result<Session> {
        let front = crate::Unattended;
        let mut start = StartPoint::find(&self.start_dir, &front);
        start.head = Some(self.base.clone());
        let request = Request {
            client: self.client.clone(),
            settings: self.settings.clone(),
            place: Place {
                in_place: false,
                force: false,
                uncommitted: UncommittedChoice::Leave,
                snapshot: false,
            },
            sandbox: self.sandbox.clone(),
            replies: Replies::AlwaysCalls,
            profiles: crate::Profiles::default(),
        };
        let session = Session::prepare(start, request, &front).await?;
        let WorkingCopy::Clone(clone) = &session.working_copy else {
            bail!("the reviewer did not get a clone of its own");
        };
        // The writer's files go over the clone once its checkout (in the background) is
        // done: never beside it.
        let checked_out = match session.tools.workspace_ready() {
            Some(ready) => ready.wait_async().await.map_err(anyhow::Error::from),
            None => Ok(()),
        };
        let given = checked_out
            .and_then(|()| give_files(&self.sandbox, &self.writer_root, clone, &session.id));
        if let Err(err) = given {
            let (dir, id) = (session.conversation_dir.clone(), session.id.clone());
            drop(session);
            crate::working_copy::remove_unstarted(&dir, &id);
            return Err(err);
        }
        Ok(session)
    }

    /// Runs the reviewer's conversation to its verdict.
    async fn run(
        &self,
        session: Session,
        task: &str,
        diff: &str,
        cancel: CancellationToken,
    ) -> anyhow::Result<Opinion> {
        let Session {
            client,
            tool_calling,
            window,
            id,
            conversation_dir,
            tools,
            locks,
            teaching,
            settings,
            working_copy,
            ..
        } = session;
        let said = Arc::new(Mutex::new(None));
        let toolbox = reviewer_tools(&tools.toolbox, said.clone());
        let root = tools.workspace.root().display().to_string();
        let mut conversation = Conversation::create(
            &id,
            &conversation_dir.join("events.jsonl"),
            &root,
            client,
            toolbox,
            wright_core::Opening {
                system_prompt: system_prompt(&root) + &teaching.prompt_section(),
                workspace_map: None,
                last_change: None,
                secrets: tools.secrets.names().to_vec(),
                instructions: teaching.instruction_files(),
                skills: Vec::new(),
                group: Some(format!("review-of-{}", self.writer_id)),
                agent: None,
            },
            tool_calling,
        )?;
        crate::configure(
            &mut conversation,
            window.tokens,
            &settings,
            &None,
            &tools.secrets,
        );
        conversation.set_require_finish(true);
        let outcome = conversation
            .proceed(
                Some(&first_message(task, diff)),
                crate::limits(&settings),
                &cancel,
                &mut crate::Quiet,
            )
            .await?;
        drop(conversation);
        let crate::Tools {
            terminal,
            workspace,
            setup,
            warm_up,
            toolbox,
            editor,
            ..
        } = tools;
        if let Some(warm_up) = warm_up {
            warm_up.abort();
        }
        drop((
            toolbox,
            editor,
            terminal,
            workspace,
            setup,
            working_copy,
            locks,
        ));
        let taken = said.lock().map(|mut said| said.take()).unwrap_or(None);
        match taken {
            Some((verdict, findings)) => Ok(Opinion {
                verdict,
                findings,
                conversation: Some(id),
            }),
            None => bail!("it stopped without a verdict: {}", outcome.stop),
        }
    }
}

#[async_trait::async_trait]
impl wright_core::second_look::Reviewer for FreshReviewer {
    fn model(&self) -> String {
        self.client.config().model.clone()
    }

    async fn review(&self, task: &str, cancel: CancellationToken) -> Result<Opinion, NoVerdict> {
        let writer = self.writer.clone();
        let diff = tokio::task::spawn_blocking(move || writer.diff_text())
            .await
            .unwrap_or_else(|err| format!("(the changes cannot be read: {err})"));
        let session = self.prepare().await.map_err(|err| NoVerdict {
            message: format!("the reviewer could not start: {err:#}"),
            conversation: None,
        })?;
        let id = session.id.clone();
        let dir = session.conversation_dir.clone();
        let clone = wright_core::workspaces_dir().join(&id);
        let result = self.run(session, task, &diff, cancel).await;
        // Its edits never reach anyone: the clone and its record go, the log stays.
        if clone.symlink_metadata().is_ok() {
            let _ = wright_sandbox::remove_tree(&clone);
        }
        let _ = crate::working_copy::Record::forget(&dir);
        result.map_err(|err| NoVerdict {
            message: format!("{err:#}"),
            conversation: Some(id),
        })
    }
}

/// The reviewer's system prompt.
fn system_prompt(root: &str) -> String {
    format!(
        "You review a change another agent made, for a task a user gave it. You did not write it and you do not fix it. The repository is at {root}, with the change's files in place: `git diff` shows the change against the commit it started from. Read the diff and the code around it, run the tests with the terminal where the repository has them, and look for bugs, cases the change misses, and changes the task did not ask for. Your edits are thrown away. When you are done, call `verdict` once: approve when the change does what the task asks and you found nothing wrong; request_changes otherwise, with findings that each name the file, what is wrong and why."
    )
}

/// The reviewer's first message: the task and the diff (its head, when long).
fn first_message(task: &str, diff: &str) -> String {
    let shown: String = diff.chars().take(DIFF_SHOWN).collect();
    let cut = if shown.len() < diff.len() {
        "\n(the diff goes on: run `git diff` for all of it)"
    } else {
        ""
    };
    format!("The task the change was made for:\n{task}\n\nThe change:\n```diff\n{shown}\n```{cut}\nReview it, then call verdict.")
}

/// The session's tools without `finish`, `file_editor` held to viewing, and `verdict`.
fn reviewer_tools(toolbox: &Toolbox, said: Said) -> Toolbox {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    for tool in toolbox.tools() {
        match tool.name() {
            "finish" => {}
            "file_editor" => tools.push(Arc::new(ViewOnly(tool.clone()))),
            _ => tools.push(tool.clone()),
        }
    }
    tools.push(Arc::new(VerdictTool { said }));
    Toolbox::new(tools)
}

/// Where `verdict` leaves what the reviewer said.
type Said = Arc<Mutex<Option<(Verdict, Vec<String>)>>>;

/// `verdict`: the reviewer's typed finishing call.
struct VerdictTool {
    said: Said,
}

#[async_trait::async_trait]
impl Tool for VerdictTool {
    fn name(&self) -> &'static str {
        "verdict"
    }

    fn schema(&self) -> Value {
        json!({"type": "function", "function": {
            "name": "verdict",
            "description": "End the review with your verdict on the change.",
            "parameters": {"type": "object", "properties": {
                "verdict": {"type": "string", "enum": ["approve", "request_changes"]},
                "findings": {"type": "array", "items": {"type": "string"}, "description": "What is wrong, one finding each: the file, what, why. Required with request_changes."}
            }, "required": ["verdict"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let verdict = match arguments["verdict"].as_str() {
            Some("approve") => Verdict::Approve,
            Some("request_changes") => Verdict::RequestChanges,
            _ => {
                return Err(ToolError::Model(
                    "verdict must be approve or request_changes".into(),
                ))
            }
        };
        let findings: Vec<String> = match &arguments["findings"] {
            Value::Array(items) => items
                .iter()
                .filter_map(|item| match item {
                    Value::String(text) => Some(text.trim().to_string()),
                    Value::Null => None,
                    other => Some(other.to_string()),
                })
                .filter(|text| !text.is_empty())
                .collect(),
            Value::String(text) if !text.trim().is_empty() => vec![text.trim().to_string()],
            _ => Vec::new(),
        };
        if verdict == Verdict::RequestChanges && findings.is_empty() {
            return Err(ToolError::Model(
                "request_changes needs findings: say what is wrong, where and why".into(),
            ));
        }
        let summary = format!("{}: {}", verdict.words(), findings.join("; "));
        if let Ok(mut said) = self.said.lock() {
            *said = Some((verdict, findings));
        }
        Ok(ToolOutput {
            text: "Review recorded.".into(),
            finish: Some(summary),
            ..ToolOutput::default()
        })
    }
}

/// `file_editor` that only views: the reviewer reads, it does not edit.
struct ViewOnly(Arc<dyn Tool>);

#[async_trait::async_trait]
impl Tool for ViewOnly {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn aliases(&self) -> &'static [&'static str] {
        self.0.aliases()
    }

    fn schema(&self) -> Value {
        let mut schema = self.0.schema();
        schema["function"]["description"] = json!("View a file (with line numbers, `view_range` for a part) or list a directory. Viewing only: a reviewer does not edit.");
        if let Some(command) = schema["function"]["parameters"]["properties"].get_mut("command") {
            command["enum"] = json!(["view"]);
        }
        schema
    }

    fn fit_window(&self, tokens: u64) {
        self.0.fit_window(tokens);
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        if arguments["command"] != "view" {
            return Err(ToolError::Model(
                "a reviewer only views files (command view); report what should change in your verdict".into(),
            ));
        }
        self.0.run(arguments).await
    }
}

/// Gives the reviewer's clone the writer's files as they are now: its own files removed
/// (`.git` kept), the writer's copied in, in a sandbox that reads the writer's clone and
/// writes only the reviewer's — they are the agent's, and may be links or anything else.
fn give_files(
    choice: &SandboxChoice,
    writer_root: &std::path::Path,
    clone: &AgentClone,
    id: &str,
) -> anyhow::Result<()> {
    let placement = Placement {
        writable: clone.clone_root.clone(),
        read_only: vec![writer_root.to_path_buf()],
        protected: wright_sandbox::Protected::new(),
        needs_git: false,
        users_tree: false,
    };
    let setup = SandboxSetup::new(
        choice.mode,
        choice.options.clone(),
        &placement,
        &format!("{id}-copy"),
        &choice.launcher,
        &crate::Grants::none(),
    )?;
    let target = clone.clone_root.display().to_string();
    let copied = setup
        .sandbox
        .capture(
            writer_root,
            &setup.env,
            "bash",
            &[
                "-c",
                r#"find "$1" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} + && tar --exclude=./.git -cf - . | tar -C "$1" -xf -"#,
                "wright-review",
                &target,
            ],
            b"",
            RunLimits {
                timeout: std::time::Duration::from_secs(600),
                ..RunLimits::default()
            },
        )
        .context("cannot give the reviewer the agent's files")?;
    if !copied.success() {
        bail!(
            "cannot give the reviewer the agent's files: {}",
            copied.said()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_verdict_is_typed_and_changes_need_findings() {
        let said: Said = Arc::new(Mutex::new(None));
        let tool = VerdictTool { said: said.clone() };
        let refused = tool
            .run(&json!({"verdict": "request_changes", "findings": []}))
            .await;
        assert!(matches!(refused, Err(ToolError::Model(_))));
        assert!(said.lock().unwrap().is_none());
        let out = tool
            .run(&json!({"verdict": "request_changes", "findings": ["calc.py: total() drops the last item"]}))
            .await
            .unwrap();
        assert!(out.finish.is_some());
        assert_eq!(
            said.lock().unwrap().clone(),
            Some((
                Verdict::RequestChanges,
                vec!["calc.py: total() drops the last item".to_string()]
            ))
        );
        assert!(tool.run(&json!({"verdict": "maybe"})).await.is_err());
    }
}
