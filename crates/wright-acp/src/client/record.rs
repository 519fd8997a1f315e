//! What an external agent says, as wright's events: its words and thoughts (streamed in
//! pieces, logged whole, one `message` per turn of speech), its own tool calls (logged as
//! actions of the tool `reported`, their results as its observations: wright did not run
//! them and cannot vouch for them), its plan.

use agent_client_protocol::v1::schema::ContentBlock;
use agent_client_protocol::v1::schema::PlanEntryStatus;
use agent_client_protocol::v1::schema::SessionUpdate;
use agent_client_protocol::v1::schema::ToolCallContent;
use agent_client_protocol::v1::schema::ToolCallStatus;
use anyhow::Result;
use serde_json::json;
use serde_json::Value;
use std::collections::BTreeSet;
use wright_protocol::EventBody;
use wright_protocol::PlanTask;
use wright_protocol::Source;
use wright_protocol::TaskStatus;
use wright_session::Observer;
use wright_session::Running as Conversation;

/// The tool name of what an agent reported of its own tools.
pub const REPORTED: &str = "reported";

/// The words and thoughts not logged yet, and the reported calls logged so far.
#[derive(Default)]
pub(crate) struct Recorder {
    words: String,
    thoughts: String,
    /// The agent's calls whose action is logged.
    logged: BTreeSet<String>,
    /// Those whose result is logged.
    ended: BTreeSet<String>,
    /// The agent's last words, for the run's summary.
    pub(crate) last_words: Option<String>,
    plans: u32,
}

impl Recorder {
    pub(crate) fn update(
        &mut self,
        conversation: &mut Conversation,
        observer: &mut dyn Observer,
        update: SessionUpdate,
    ) -> Result<()> {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                self.words.push_str(&text_of(&chunk.content));
                Ok(())
            }
            SessionUpdate::AgentThoughtChunk(chunk) => {
                self.thoughts.push_str(&text_of(&chunk.content));
                Ok(())
            }
            SessionUpdate::ToolCall(call) => {
                self.flush(conversation, observer)?;
                let id = call.tool_call_id.to_string();
                let arguments = json!({
                    "title": call.title,
                    "kind": serde_json::to_value(call.kind).unwrap_or(Value::Null),
                    "status": serde_json::to_value(call.status).unwrap_or(Value::Null),
                    "input": call.raw_input.clone().unwrap_or(Value::Null),
                });
                self.action(conversation, observer, &id, arguments)?;
                if matches!(
                    call.status,
                    ToolCallStatus::Completed | ToolCallStatus::Failed
                ) {
                    let output = content_text(&call.content, call.raw_output.as_ref());
                    let failed = call.status == ToolCallStatus::Failed;
                    self.result(conversation, observer, &id, output, failed)?;
                }
                Ok(())
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let id = update.tool_call_id.to_string();
                let fields = update.fields;
                if !self.logged.contains(&id) {
                    self.flush(conversation, observer)?;
                    let arguments = json!({
                        "title": fields.title,
                        "kind": serde_json::to_value(fields.kind).unwrap_or(Value::Null),
                        "input": fields.raw_input.clone().unwrap_or(Value::Null),
                    });
                    self.action(conversation, observer, &id, arguments)?;
                }
                if let Some(status @ (ToolCallStatus::Completed | ToolCallStatus::Failed)) =
                    fields.status
                {
                    self.flush(conversation, observer)?;
                    let content = fields.content.clone().unwrap_or_default();
                    let output = content_text(&content, fields.raw_output.as_ref());
                    let failed = status == ToolCallStatus::Failed;
                    self.result(conversation, observer, &id, output, failed)?;
                }
                Ok(())
            }
            SessionUpdate::Plan(plan) => {
                self.flush(conversation, observer)?;
                self.plans += 1;
                let tasks = plan
                    .entries
                    .iter()
                    .map(|entry| PlanTask {
                        title: entry.content.clone(),
                        status: match entry.status {
                            PlanEntryStatus::Pending => TaskStatus::Todo,
                            PlanEntryStatus::InProgress => TaskStatus::Doing,
                            _ => TaskStatus::Done,
                        },
                        notes: None,
                    })
                    .collect();
                let step = conversation.next_external_step();
                conversation.log_external(
                    observer,
                    Source::Agent,
                    EventBody::Plan {
                        step,
                        call_id: format!("plan-{}", self.plans),
                        tasks,
                    },
                )?;
                Ok(())
            }
            // Modes, commands, usage, titles: nothing wright keeps.
            _ => Ok(()),
        }
    }

    /// Logs the words and thoughts gathered so far as one message.
    pub(crate) fn flush(
        &mut self,
        conversation: &mut Conversation,
        observer: &mut dyn Observer,
    ) -> Result<()> {
        if self.words.is_empty() && self.thoughts.is_empty() {
            return Ok(());
        }
        let text = std::mem::take(&mut self.words);
        let thoughts = std::mem::take(&mut self.thoughts);
        if !text.trim().is_empty() {
            self.last_words = Some(text.trim().to_string());
        }
        let step = conversation.next_external_step();
        conversation.log_external(
            observer,
            Source::Agent,
            EventBody::Message {
                text,
                step: Some(step),
                reasoning: Some(thoughts).filter(|t| !t.is_empty()),
                raw: None,
            },
        )?;
        Ok(())
    }

    /// Logs a call of the agent's own as reported, once; returns its action's event id.
    pub(crate) fn action(
        &mut self,
        conversation: &mut Conversation,
        observer: &mut dyn Observer,
        id: &str,
        arguments: Value,
    ) -> Result<u64> {
        let step = conversation.next_external_step();
        let id_logged = conversation.log_external(
            observer,
            Source::Agent,
            EventBody::Action {
                step,
                call_id: id.to_string(),
                tool: REPORTED.to_string(),
                arguments,
                risk: None,
                risk_reason: Some(
                    "reported by the agent: its own tool, which wright did not run".into(),
                ),
            },
        )?;
        self.logged.insert(id.to_string());
        Ok(id_logged)
    }

    /// Whether the agent's call `id` is logged.
    pub(crate) fn knows(&self, id: &str) -> bool {
        self.logged.contains(id)
    }

    fn result(
        &mut self,
        conversation: &mut Conversation,
        observer: &mut dyn Observer,
        id: &str,
        output: String,
        failed: bool,
    ) -> Result<()> {
        if !self.ended.insert(id.to_string()) {
            return Ok(());
        }
        conversation.log_external(
            observer,
            Source::Environment,
            EventBody::Observation {
                call_id: id.to_string(),
                tool: REPORTED.to_string(),
                output,
                is_error: failed,
                exit_code: None,
            },
        )?;
        Ok(())
    }
}

/// The text of a content block (a link by its address; images and sounds named).
fn text_of(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::ResourceLink(link) => link.uri.clone(),
        ContentBlock::Image(_) => "[an image]".into(),
        ContentBlock::Audio(_) => "[a sound]".into(),
        _ => String::new(),
    }
}

/// What a reported call's result says: its text, the files its diffs change, its raw
/// output when it gave nothing else.
fn content_text(content: &[ToolCallContent], raw: Option<&Value>) -> String {
    let mut parts = Vec::new();
    for piece in content {
        match piece {
            ToolCallContent::Content(content) => parts.push(text_of(&content.content)),
            ToolCallContent::Diff(diff) => {
                parts.push(format!("(edited {})", diff.path.display()));
            }
            _ => {}
        }
    }
    if parts.is_empty() {
        if let Some(raw) = raw {
            parts.push(match raw {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            });
        }
    }
    parts.join("\n")
}
