//! How what people teach the agent shows in the history: a skill's text and what a hook
//! adds go after what called for them (the user message, the tool result, the results
//! being assembled in text mode), so a request only ever extends the one before; and what
//! a condensation keeps of them.

use crate::history::append_result;
use wright_llm::ChatMessage;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::HookEvent;
use wright_protocol::HookOutcome;
use wright_protocol::HookRun;
use wright_protocol::ToolCalling;

/// What a condensation never drops, since it holds for the whole task: the skills added,
/// and what the session's first hooks and the setup script said. Dropped from their place,
/// they come right after the task.
pub(crate) fn lasting(event: &Event) -> bool {
    match &event.body {
        EventBody::Skill { .. } => true,
        EventBody::Hook(run) => matches!(run.event, HookEvent::SessionStart | HookEvent::Setup),
        _ => false,
    }
}

/// What a `skill` or `hook` event shows the model, if anything.
pub(crate) fn shown(body: &EventBody) -> Option<String> {
    match body {
        EventBody::Skill {
            name,
            path,
            cause,
            text,
        } => Some(format!(
            "[Skill {name} ({path}), added because {cause}:]\n{text}"
        )),
        EventBody::Hook(run) => hook_text(run),
        _ => None,
    }
}

/// What a `hook` event shows the model, if anything: what it adds, and what a
/// `PostToolUse` hook that blocked says. (A blocked call or finish is answered in its
/// observation; a refused message never reaches the model.)
fn hook_text(run: &HookRun) -> Option<String> {
    let context = run.context.as_deref().filter(|c| !c.is_empty());
    match (run.event, run.outcome, context) {
        (HookEvent::Setup, _, Some(context)) => Some(context.to_string()),
        (HookEvent::PostToolUse, HookOutcome::Blocked, _) => Some(format!(
            "[A PostToolUse hook says:]\n{}",
            run.reason.as_deref().unwrap_or_default()
        )),
        (
            HookEvent::SessionStart | HookEvent::UserPromptSubmit | HookEvent::PostToolUse,
            _,
            Some(context),
        ) => Some(format!("[From a {} hook:]\n{context}", run.event)),
        _ => None,
    }
}

/// Adds `text` after what came last: into the open user message or tool result (text
/// mode: the results being assembled), else as a user message of its own.
pub(crate) fn attach(
    messages: &mut Vec<ChatMessage>,
    results: &mut Option<String>,
    mode: ToolCalling,
    text: &str,
) {
    if mode == ToolCalling::Text && results.is_some() {
        append_result(results, text);
        return;
    }
    match messages.last_mut() {
        Some(ChatMessage::User { content }) | Some(ChatMessage::Tool { content, .. }) => {
            content.push_str("\n\n");
            content.push_str(text);
        }
        _ => match mode {
            ToolCalling::Text => append_result(results, text),
            ToolCalling::Native => messages.push(ChatMessage::User {
                content: text.to_string(),
            }),
        },
    }
}
