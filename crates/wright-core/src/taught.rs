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

#[cfg(test)]
mod tests {
    use crate::history::render_history;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use wright_llm::ChatMessage;
    use wright_protocol::Event;
    use wright_protocol::EventBody;
    use wright_protocol::HookEvent;
    use wright_protocol::HookOrigin;
    use wright_protocol::HookOutcome;
    use wright_protocol::HookRun;
    use wright_protocol::SkillCause;
    use wright_protocol::Source;
    use wright_protocol::Start;
    use wright_protocol::ToolCalling;

    fn events(mode: ToolCalling) -> Vec<Event> {
        let bodies = vec![
            (
                Source::Environment,
                EventBody::Start(Start {
                    version: wright_protocol::LOG_FORMAT_VERSION,
                    conversation: "c".into(),
                    workspace: "/w".into(),
                    model: "m".into(),
                    base_url: "u".into(),
                    system_prompt: "sys".into(),
                    tools: vec![],
                    tool_calling: mode,
                    forked_from: None,
                    destination: None,
                    workspace_map: None,
                    last_change: None,
                    secrets: vec![],
                    instructions: vec![],
                    skills: vec![],
                    group: None,
                    agent: None,
                }),
            ),
            (
                Source::User,
                EventBody::Message {
                    text: "fix docker".into(),
                    step: None,
                    reasoning: None,
                    raw: None,
                },
            ),
            (
                Source::Environment,
                EventBody::Skill {
                    name: "docker".into(),
                    path: "s.md".into(),
                    cause: SkillCause::Keyword {
                        word: "docker".into(),
                    },
                    text: "Use podman.".into(),
                },
            ),
            (
                Source::Agent,
                EventBody::Message {
                    text: String::new(),
                    step: Some(1),
                    reasoning: None,
                    raw: Some("<tool_call>ls</tool_call>".into()),
                },
            ),
            (
                Source::Agent,
                EventBody::Action {
                    step: 1,
                    call_id: "a".into(),
                    tool: "terminal".into(),
                    arguments: json!({"command": "ls"}),
                    risk: None,
                    risk_reason: None,
                },
            ),
            (
                Source::Environment,
                EventBody::Observation {
                    call_id: "a".into(),
                    tool: "terminal".into(),
                    output: "x".into(),
                    is_error: false,
                    exit_code: Some(0),
                },
            ),
            (
                Source::Environment,
                EventBody::Hook(HookRun {
                    event: HookEvent::PostToolUse,
                    origin: HookOrigin::User,
                    command: "lint".into(),
                    call_id: Some("a".into()),
                    outcome: HookOutcome::Allowed,
                    exit_code: Some(0),
                    reason: None,
                    context: Some("lint: clean".into()),
                }),
            ),
        ];
        bodies
            .into_iter()
            .enumerate()
            .map(|(id, (source, body))| Event {
                id: id as u64,
                ts: String::new(),
                source,
                body,
            })
            .collect()
    }

    #[test]
    fn skills_and_hooks_follow_what_called_for_them_in_both_modes() {
        let task = ChatMessage::User {
            content: "fix docker\n\n[Skill docker (s.md), added because the message says \"docker\":]\nUse podman.".into(),
        };
        let text = render_history(&events(ToolCalling::Text));
        assert_eq!(text[1], task);
        assert_eq!(
            text[3],
            ChatMessage::User {
                content: "<tool_response name=\"terminal\">\nx\n</tool_response>\n[From a PostToolUse hook:]\nlint: clean".into()
            }
        );
        let native = render_history(&events(ToolCalling::Native));
        assert_eq!(native[1], task);
        assert_eq!(
            native[3],
            ChatMessage::Tool {
                tool_call_id: "a".into(),
                content: "x\n\n[From a PostToolUse hook:]\nlint: clean".into()
            }
        );
        assert_eq!(native.len(), 4);
    }
}
