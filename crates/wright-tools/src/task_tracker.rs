//! `task_tracker`: the agent's plan as a typed list (see `wright_protocol::PlanTask`).
//! `plan` replaces the whole list, `view` shows it. A change comes back in the output's
//! `plan`, which the loop logs as a `plan` event; on resume the tool takes the last one
//! from the log, so the plan outlives the process as it outlives a condensation.

use crate::args;
use crate::Tool;
use crate::ToolError;
use crate::ToolOutput;
use serde_json::json;
use serde_json::Value;
use std::sync::Mutex;
use wright_protocol::render_plan;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::PlanTask;
use wright_protocol::TaskStatus;

/// Tasks in one plan, at most: a plan, not a backlog.
const MAX_TASKS: usize = 50;
/// Characters of a title, and of notes, kept.
const MAX_TITLE: usize = 200;
const MAX_NOTES: usize = 1000;

#[derive(Default)]
pub struct TaskTrackerTool {
    tasks: Mutex<Vec<PlanTask>>,
}

impl TaskTrackerTool {
    pub fn new() -> Self {
        Self::default()
    }

    fn current(&self) -> Vec<PlanTask> {
        self.tasks.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

#[async_trait::async_trait]
impl Tool for TaskTrackerTool {
    fn name(&self) -> &'static str {
        "task_tracker"
    }

    fn command_shapes(&self) -> &'static [crate::CommandShape] {
        const SHAPES: &[crate::CommandShape] = &[
            crate::CommandShape {
                command: "plan",
                required: &["tasks"],
                optional: &[],
            },
            crate::CommandShape {
                command: "view",
                required: &[],
                optional: &[],
            },
        ];
        SHAPES
    }

    fn schema(&self) -> Value {
        json!({"type": "function", "function": {
            "name": "task_tracker",
            "description": "Keep a plan for multi-step work. plan: replace it with tasks; view: show it.",
            "parameters": {"type": "object", "properties": {
                "command": {"type": "string", "enum": ["view", "plan"]},
                "tasks": {"type": "array", "items": {"type": "object", "properties": {
                    "title": {"type": "string"},
                    "status": {"type": "string", "enum": ["todo", "doing", "done"]},
                    "notes": {"type": "string"}
                }, "required": ["title", "status"]}}
            }, "required": ["command"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let command = args::required_str(arguments, "command")?;
        match command {
            "view" => Ok(ToolOutput::text(render_plan(&self.current()))),
            "plan" => {
                let tasks = read_tasks(arguments)?;
                let text = format!("Plan updated. {}", render_plan(&tasks));
                if let Ok(mut current) = self.tasks.lock() {
                    *current = tasks.clone();
                }
                Ok(ToolOutput {
                    plan: Some(tasks),
                    ..ToolOutput::text(text)
                })
            }
            other => Err(ToolError::Model(format!(
                "unknown command '{other}'; use view or plan"
            ))),
        }
    }

    fn restore(&self, events: &[Event]) {
        let last = events.iter().rev().find_map(|event| match &event.body {
            EventBody::Plan { tasks, .. } => Some(tasks.clone()),
            _ => None,
        });
        if let (Some(tasks), Ok(mut current)) = (last, self.tasks.lock()) {
            *current = tasks;
        }
    }
}

/// The `tasks` argument (an array, or JSON text of one, as small models send it).
fn read_tasks(arguments: &Value) -> Result<Vec<PlanTask>, ToolError> {
    let parsed;
    let value = match arguments.get("tasks") {
        None | Some(Value::Null) => {
            return Err(ToolError::Model(
                "plan needs 'tasks': the whole list, like [{\"title\": \"Reproduce the bug\", \"status\": \"doing\"}]".into(),
            ))
        }
        Some(Value::String(text)) => {
            parsed = serde_json::from_str::<Value>(text).map_err(|_| {
                ToolError::Model("parameter 'tasks' must be an array of {title, status, notes}".into())
            })?;
            &parsed
        }
        Some(value) => value,
    };
    let items = value.as_array().ok_or_else(|| {
        ToolError::Model("parameter 'tasks' must be an array of {title, status, notes}".into())
    })?;
    if items.len() > MAX_TASKS {
        return Err(ToolError::Model(format!(
            "a plan holds at most {MAX_TASKS} tasks; group them"
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(n, item)| {
            let title = args::required_str(item, "title")
                .map_err(|err| ToolError::Model(format!("task {}: {err}", n + 1)))?;
            if title.trim().is_empty() {
                return Err(ToolError::Model(format!(
                    "task {}: the title is empty",
                    n + 1
                )));
            }
            let status_text = args::optional_str(item, "status")
                .map_err(|err| ToolError::Model(format!("task {}: {err}", n + 1)))?
                .unwrap_or("todo");
            let status = TaskStatus::parse(status_text).ok_or_else(|| {
                ToolError::Model(format!(
                    "task {}: status '{status_text}' is not todo, doing or done",
                    n + 1
                ))
            })?;
            let notes = args::optional_str(item, "notes")
                .map_err(|err| ToolError::Model(format!("task {}: {err}", n + 1)))?
                .map(|notes| cut(notes.trim(), MAX_NOTES))
                .filter(|notes| !notes.is_empty());
            Ok(PlanTask {
                title: cut(title.trim(), MAX_TITLE),
                status,
                notes,
            })
        })
        .collect()
}

fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn a_plan_is_replaced_whole_and_viewed() {
        let tool = TaskTrackerTool::new();
        let empty = tool.run(&json!({"command": "view"})).await.unwrap();
        assert_eq!(empty.text, "The plan is empty.");
        let set = tool
            .run(&json!({"command": "plan", "tasks": "[{\"title\": \"Read\", \"status\": \"completed\"}, {\"title\": \"Fix\", \"status\": \"in_progress\", \"notes\": \"parser\"}]"}))
            .await
            .unwrap();
        let tasks = vec![
            PlanTask {
                title: "Read".into(),
                status: TaskStatus::Done,
                notes: None,
            },
            PlanTask {
                title: "Fix".into(),
                status: TaskStatus::Doing,
                notes: Some("parser".into()),
            },
        ];
        assert_eq!(set.plan, Some(tasks.clone()));
        let viewed = tool.run(&json!({"command": "view"})).await.unwrap();
        assert_eq!(viewed.text, render_plan(&tasks));
        assert_eq!(viewed.plan, None);
        let wrong = tool
            .run(&json!({"command": "plan", "tasks": [{"title": "x", "status": "someday"}]}))
            .await
            .unwrap_err();
        assert_eq!(
            wrong.to_string(),
            "task 1: status 'someday' is not todo, doing or done"
        );
        // A failed change leaves the plan as it was.
        assert_eq!(tool.current(), tasks);
    }

    #[test]
    fn the_last_logged_plan_is_restored() {
        let plan = |title: &str| {
            Event::new(
                1,
                wright_protocol::Source::Environment,
                EventBody::Plan {
                    step: 1,
                    call_id: "c".into(),
                    tasks: vec![PlanTask {
                        title: title.into(),
                        status: TaskStatus::Todo,
                        notes: None,
                    }],
                },
            )
        };
        let tool = TaskTrackerTool::new();
        tool.restore(&[plan("old"), plan("new")]);
        assert_eq!(tool.current()[0].title, "new");
    }
}
