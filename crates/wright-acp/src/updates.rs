//! A run as the editor sees it: the events of the log, as they are logged, and the
//! pieces of the model's reply, as they stream, turned into `session/update`
//! notifications — the model's words and reasoning as message and thought chunks, each
//! tool call as a `tool_call` when it is logged (before it runs) and a
//! `tool_call_update` with its output once it ran, a file edit with a diff of the
//! whole file (read before and after, beneath the workspace's descriptor, masked like
//! the log), the plan, and where the changes went. The same mapping replays a
//! conversation's log for `session/load`, without the diffs (the files are no longer as
//! they were then).

use crate::notify::Notifier;
use crate::tool_calls::describe;
use crate::tool_calls::fenced;
use agent_client_protocol::v1::schema::ContentBlock;
use agent_client_protocol::v1::schema::Diff;
use agent_client_protocol::v1::schema::Plan;
use agent_client_protocol::v1::schema::PlanEntry;
use agent_client_protocol::v1::schema::PlanEntryPriority;
use agent_client_protocol::v1::schema::PlanEntryStatus;
use agent_client_protocol::v1::schema::SessionUpdate;
use agent_client_protocol::v1::schema::ToolCall;
use agent_client_protocol::v1::schema::ToolCallContent;
use agent_client_protocol::v1::schema::ToolCallLocation;
use agent_client_protocol::v1::schema::ToolCallStatus;
use agent_client_protocol::v1::schema::ToolCallUpdate;
use agent_client_protocol::v1::schema::ToolCallUpdateFields;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use wright_llm::StreamDelta;
use wright_protocol::AgentState;
use wright_protocol::Changes;
use wright_protocol::ChangesOutcome;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::TaskStatus;
use wright_session::Observer;
use wright_tools::Masker;
use wright_tools::Workspace;

/// The largest file whose contents make a diff (the file editor edits no larger).
const DIFF_BYTES: u64 = 8 << 20;

/// Where the run's files are read for diffs, and how they are masked.
pub(crate) struct Files {
    pub(crate) workspace: Workspace,
    pub(crate) masker: Arc<Masker>,
}

/// Turns a session's events and deltas into updates for the editor.
pub(crate) struct Updates {
    notifier: Notifier,
    conversation: String,
    /// The files, for a live run's diffs; `None` when replaying a log.
    files: Option<Files>,
    /// Events before this id were shown already (the run shows its whole log first).
    from: u64,
    /// The model's words stream as deltas (native tool calls): its logged message then
    /// repeats them. In text mode the stream holds the calls too, so the message, which
    /// holds the words alone, is what is shown.
    stream_text: bool,
    /// Words streamed since the last message event.
    streamed: bool,
    /// The calls that started and have not ended.
    calls: HashMap<String, Started>,
}

/// A call between its action and its observation.
struct Started {
    arguments: Value,
    tool: String,
    /// The edited file, relative to the workspace, and its text before the edit
    /// (`None`: no file there).
    before: Option<(PathBuf, Option<String>)>,
}

impl Updates {
    /// A live run's updates: `from` is the first event it has not shown.
    pub(crate) fn live(
        notifier: Notifier,
        conversation: &str,
        files: Files,
        from: u64,
        stream_text: bool,
    ) -> Self {
        Self {
            notifier,
            conversation: conversation.to_string(),
            files: Some(files),
            from,
            stream_text,
            streamed: false,
            calls: HashMap::new(),
        }
    }

    /// A logged conversation's updates, from its first event (`session/load`).
    pub(crate) fn replay(notifier: Notifier, conversation: &str) -> Self {
        Self {
            notifier,
            conversation: conversation.to_string(),
            files: None,
            from: 0,
            stream_text: false,
            streamed: false,
            calls: HashMap::new(),
        }
    }

    fn started(&mut self, call_id: &str, tool: &str, arguments: &Value, source: Source) {
        let described = describe(tool, arguments, source);
        let mut before = None;
        let mut locations = Vec::new();
        if let (Some(files), Some(file)) = (&self.files, &described.file) {
            if let Ok(relative) = files.workspace.relative(&file.to_string_lossy()) {
                locations.push(ToolCallLocation::new(
                    files.workspace.root().join(&relative),
                ));
                if described.edits {
                    before = read(files, &relative).map(|text| (relative, text));
                }
            }
        }
        let mut content = Vec::new();
        if tool == "think" {
            if let Some(thought) = arguments["thought"].as_str() {
                content.push(text_content(thought.to_string()));
            }
        }
        self.notifier.send(SessionUpdate::ToolCall(
            ToolCall::new(call_id.to_string(), described.title)
                .kind(described.kind)
                .status(ToolCallStatus::InProgress)
                .locations(locations)
                .content(content)
                .raw_input(arguments.clone()),
        ));
        self.calls.insert(
            call_id.to_string(),
            Started {
                arguments: arguments.clone(),
                tool: tool.to_string(),
                before,
            },
        );
    }

    fn ended(&mut self, call_id: &str, output: &str, is_error: bool, exit_code: Option<i32>) {
        let started = self.calls.remove(call_id);
        let mut content = Vec::new();
        if let (Some(files), Some((relative, before))) =
            (&self.files, started.as_ref().and_then(|s| s.before.clone()))
        {
            // A file removed (an undone creation) is a diff to nothing.
            if let Some(after) = read(files, &relative).filter(|after| *after != before) {
                content.push(ToolCallContent::Diff(
                    Diff::new(
                        files.workspace.root().join(&relative),
                        after.unwrap_or_default(),
                    )
                    .old_text(before),
                ));
            }
        }
        if !output.is_empty() {
            content.push(text_content(fenced(output)));
        }
        let status = match is_error {
            true => ToolCallStatus::Failed,
            false => ToolCallStatus::Completed,
        };
        let mut fields = ToolCallUpdateFields::new().status(status).content(content);
        if let Some(code) = exit_code {
            fields = fields.raw_output(serde_json::json!({ "exit_code": code }));
        }
        self.notifier
            .send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id.to_string(),
                fields,
            )));
        // The model's closing words, once `finish` was taken: its answer to the user.
        if let Some(started) = started.filter(|s| s.tool == "finish" && !is_error) {
            if let Some(message) = started.arguments["message"].as_str() {
                self.notifier.say(message.to_string());
            }
        }
    }

    /// A started call's new status.
    fn status(&self, call_id: &str, status: ToolCallStatus) {
        self.notifier
            .send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id.to_string(),
                ToolCallUpdateFields::new().status(status),
            )));
    }

    fn plan(&self, tasks: &[wright_protocol::PlanTask]) {
        let entries = tasks
            .iter()
            .map(|task| {
                let status = match task.status {
                    TaskStatus::Todo => PlanEntryStatus::Pending,
                    TaskStatus::Doing => PlanEntryStatus::InProgress,
                    TaskStatus::Done => PlanEntryStatus::Completed,
                };
                PlanEntry::new(task.title.clone(), PlanEntryPriority::Medium, status)
            })
            .collect();
        self.notifier.send(SessionUpdate::Plan(Plan::new(entries)));
    }

    /// Where the run's changes went, in the words of the commands that take them.
    fn changes(&self, changes: &Changes) {
        let id = &self.conversation;
        let words = match changes.outcome {
            ChangesOutcome::Branch => format!(
                "The changes are on branch {} of your repository: `wright apply {id}` takes them into your branch, `wright diff {id}` shows them.",
                changes.branch.as_deref().unwrap_or_default()
            ),
            ChangesOutcome::Committed => format!(
                "wright committed the changes on your branch ({}).",
                changes.commit.as_deref().unwrap_or_default()
            ),
            ChangesOutcome::Uncommitted => {
                "The changes are in your work tree, uncommitted.".to_string()
            }
            ChangesOutcome::None => "No file changed.".to_string(),
            ChangesOutcome::NotGit => format!(
                "The changes are in the directory itself: `wright discard {id}` puts it back as it was."
            ),
            ChangesOutcome::Failed => format!(
                "The changes could not be handed over: {}; they are kept in {}, and the next prompt goes on there.",
                changes.reason.as_deref().unwrap_or_default(),
                changes.kept.as_deref().unwrap_or_default()
            ),
        };
        self.notifier.say(format!("\n\n{words}"));
    }
}

impl Observer for Updates {
    fn event(&mut self, event: &Event) {
        if event.id < self.from {
            return;
        }
        match &event.body {
            EventBody::Message {
                text, reasoning, ..
            } => match event.source {
                // In a live run the editor shows the prompt it sent; a replay says it.
                Source::User if self.files.is_none() => self.notifier.user(text.clone()),
                Source::User => {}
                Source::Agent | Source::Environment => {
                    if !self.streamed {
                        self.notifier.think(reasoning.clone().unwrap_or_default());
                        self.notifier.say(text.clone());
                    }
                    self.streamed = false;
                }
            },
            EventBody::Action {
                call_id,
                tool,
                arguments,
                ..
            } => self.started(call_id, tool, arguments, event.source),
            EventBody::Observation {
                call_id,
                output,
                is_error,
                exit_code,
                ..
            } => self.ended(call_id, output, *is_error, *exit_code),
            EventBody::Plan { tasks, .. } => self.plan(tasks),
            EventBody::Error { message } => self.notifier.say(format!("\n\nwright: {message}")),
            EventBody::State {
                state,
                reason,
                stop,
                call_id,
                ..
            } => match state {
                AgentState::Running | AgentState::Finished => {}
                // The call asked about waits as `pending` while the person in the
                // editor answers its `session/request_permission` (see `permission`).
                AgentState::AwaitingConfirmation => {
                    if let Some(call_id) = call_id {
                        self.status(call_id, ToolCallStatus::Pending);
                    }
                    if let Some(stop) = stop {
                        self.notifier.say(format!("\n\nwright: {stop}"));
                    }
                }
                AgentState::Stopped | AgentState::Stuck | AgentState::Failed => {
                    let why = stop
                        .as_ref()
                        .map(ToString::to_string)
                        .or_else(|| reason.clone())
                        .unwrap_or_else(|| state.as_str().to_string());
                    self.notifier
                        .say(format!("\n\nwright {}: {why}", state.as_str()));
                }
            },
            EventBody::Changes(changes) => self.changes(changes),
            EventBody::Flagged { flag, .. } => {
                self.notifier.say(format!("\n\nwright flagged: {flag}"))
            }
            // Approved: it runs now; rejected: its observation says so and ends it.
            EventBody::Confirmation {
                call_id, decision, ..
            } => {
                if decision.runs() {
                    self.status(call_id, ToolCallStatus::InProgress);
                }
            }
            EventBody::Skill { name, .. } => {
                self.notifier.say(format!("\n\nwright: skill {name} added"))
            }
            // What a hook decided reaches the model as the call's result or a message.
            EventBody::Hook(_) => {}
            EventBody::ModelSwitch(switch) => self.notifier.say(format!(
                "\n\nwright: from step {}, {} goes on with {} ({})",
                switch.step,
                switch.from.model,
                switch.to.model,
                switch.reason.describe()
            )),
            EventBody::SideQuestion(_) | EventBody::Route(_) => {}
            // The model's own words about the failure, asked apart: a thought of the agent.
            EventBody::Reading(reading) if reading.failed.is_none() => self.notifier.think(
                format!("which line of {} fails: {}", reading.path, reading.answer),
            ),
            EventBody::Reading(_) => {}
            // A version tried by wright before the first step: said, as a check is.
            EventBody::Candidate(candidate) => self
                .notifier
                .say(format!("\n\nwright: {}", candidate.summary())),
            // wright's own check of the work: said, as a run's notes are.
            EventBody::Check(check) => self
                .notifier
                .say(format!("\n\nwright: {}", check.summary())),
            // Help turned on during the run: said, as a check is.
            EventBody::Assist(decision) => self
                .notifier
                .say(format!("\n\nwright: {}", decision.summary())),
            // wright's account of the change at a finish: said, as a check is.
            EventBody::Account(account) => self
                .notifier
                .say(format!("\n\nwright: {}", account.summary())),
            // A refused connection reaches the model in the command's output.
            EventBody::Network(_) => {}
            // Logged by the server after the run, for an automation: no editor's.
            EventBody::HandedBack(_) => {}
            // What the model is told, or what counts and times the run: not the editor's.
            EventBody::Start(_)
            | EventBody::Usage(_)
            | EventBody::Condensation(_)
            | EventBody::Review(_)
            | EventBody::SecondLook(_)
            | EventBody::Retry { .. }
            | EventBody::Together { .. } => {}
        }
    }

    fn delta(&mut self, delta: &StreamDelta) {
        match delta {
            StreamDelta::Text(text) if self.stream_text => {
                self.streamed = true;
                self.notifier.say(text.clone());
            }
            StreamDelta::Reasoning(text) if self.stream_text => {
                self.streamed = true;
                self.notifier.think(text.clone());
            }
            StreamDelta::Text(_)
            | StreamDelta::Reasoning(_)
            | StreamDelta::ToolCallStarted { .. }
            | StreamDelta::ToolCallArguments(_)
            | StreamDelta::PromptProgress(_)
            | StreamDelta::Retrying { .. } => {}
        }
    }
}

/// The text of the workspace's file at `relative`, masked: `Some(None)` when there is
/// none, `None` when it cannot make a diff (not a regular file, too large, not text).
fn read(files: &Files, relative: &std::path::Path) -> Option<Option<String>> {
    match files.workspace.read_file(relative, DIFF_BYTES) {
        Ok(None) => Some(None),
        Ok(Some(bytes)) => String::from_utf8(bytes)
            .ok()
            .map(|text| Some(files.masker.mask(&text))),
        Err(_) => None,
    }
}

fn text_content(text: String) -> ToolCallContent {
    ToolCallContent::Content(agent_client_protocol::v1::schema::Content::new(
        ContentBlock::from(text),
    ))
}
