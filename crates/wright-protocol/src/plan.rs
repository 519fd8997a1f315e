//! The agent's plan (the `task_tracker` tool): a typed list of tasks, each todo, doing or
//! done. Every change is logged whole as a `plan` event, so the current plan is the last
//! one in the log — after a resume, and in a condensed history, which carries it on.

use serde::Deserialize;
use serde::Serialize;

/// One task of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanTask {
    pub title: String,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Todo,
    Doing,
    Done,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Todo => "todo",
            TaskStatus::Doing => "doing",
            TaskStatus::Done => "done",
        }
    }

    /// A status as models write it: wright's words, and OpenHands' and others'
    /// (`in_progress`, `completed`, `pending`).
    pub fn parse(text: &str) -> Option<Self> {
        match text
            .trim()
            .to_ascii_lowercase()
            .replace(['-', ' '], "_")
            .as_str()
        {
            "todo" | "to_do" | "pending" | "open" | "not_started" => Some(TaskStatus::Todo),
            "doing" | "in_progress" | "active" | "started" => Some(TaskStatus::Doing),
            "done" | "completed" | "complete" | "finished" => Some(TaskStatus::Done),
            _ => None,
        }
    }
}

/// The plan as the model and the user read it: a count, then one task a line, its notes
/// indented under it.
pub fn render_plan(tasks: &[PlanTask]) -> String {
    if tasks.is_empty() {
        return "The plan is empty.".to_string();
    }
    let done = tasks
        .iter()
        .filter(|task| task.status == TaskStatus::Done)
        .count();
    let mut text = format!("Plan ({done} of {} done):", tasks.len());
    for (n, task) in tasks.iter().enumerate() {
        text.push_str(&format!(
            "\n{}. [{}] {}",
            n + 1,
            task.status.as_str(),
            task.title
        ));
        if let Some(notes) = task.notes.as_deref().filter(|n| !n.trim().is_empty()) {
            for line in notes.lines() {
                text.push_str(&format!("\n   {line}"));
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_plan_reads_as_a_numbered_list() {
        let tasks = vec![
            PlanTask {
                title: "Find the bug".into(),
                status: TaskStatus::Done,
                notes: None,
            },
            PlanTask {
                title: "Fix it".into(),
                status: TaskStatus::Doing,
                notes: Some("in src/parse.rs".into()),
            },
        ];
        assert_eq!(
            render_plan(&tasks),
            "Plan (1 of 2 done):\n1. [done] Find the bug\n2. [doing] Fix it\n   in src/parse.rs"
        );
        assert_eq!(TaskStatus::parse("In Progress"), Some(TaskStatus::Doing));
        assert_eq!(TaskStatus::parse("completed"), Some(TaskStatus::Done));
        assert_eq!(TaskStatus::parse("maybe"), None);
    }
}
