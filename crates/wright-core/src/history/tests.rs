//! Tests of the history as the model is sent it, rendered from logged events.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use wright_protocol::Start;

fn event(id: u64, source: Source, body: EventBody) -> Event {
    Event {
        id,
        ts: String::new(),
        source,
        body,
    }
}

/// A native-mode start event with the workspace map `map`.
fn start_event(map: Option<&str>) -> Event {
    event(
        0,
        Source::Environment,
        EventBody::Start(Start {
            secrets: Vec::new(),
            version: wright_protocol::LOG_FORMAT_VERSION,
            conversation: "c".into(),
            workspace: "/w".into(),
            model: "m".into(),
            base_url: "u".into(),
            system_prompt: "sys".into(),
            tools: vec![],
            tool_calling: ToolCalling::Native,
            forked_from: None,
            destination: None,
            workspace_map: map.map(str::to_string),
            last_change: None,
            instructions: Vec::new(),
            skills: Vec::new(),
            group: None,
            agent: None,
        }),
    )
}

#[test]
fn text_and_calls_of_a_step_form_one_assistant_turn() {
    let events = vec![
        event(
            0,
            Source::Environment,
            EventBody::Start(Start {
                secrets: Vec::new(),
                version: 1,
                conversation: "c".into(),
                workspace: "/w".into(),
                model: "m".into(),
                base_url: "u".into(),
                system_prompt: "sys".into(),
                tools: vec![],
                tool_calling: ToolCalling::Native,
                forked_from: None,
                workspace_map: None,
                last_change: None,
                destination: None,
                instructions: Vec::new(),
                skills: Vec::new(),
                group: None,
                agent: None,
            }),
        ),
        event(
            1,
            Source::User,
            EventBody::Message {
                text: "fix it".into(),
                step: None,
                reasoning: None,
                raw: None,
            },
        ),
        event(
            2,
            Source::Agent,
            EventBody::Message {
                text: "Looking.".into(),
                step: Some(1),
                reasoning: None,
                raw: None,
            },
        ),
        event(
            3,
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
        event(
            4,
            Source::Agent,
            EventBody::Action {
                step: 1,
                call_id: "b".into(),
                tool: "think".into(),
                arguments: json!("{bad"),
                risk: None,
                risk_reason: None,
            },
        ),
        event(
            5,
            Source::Environment,
            EventBody::Observation {
                call_id: "a".into(),
                tool: "terminal".into(),
                output: "x.py".into(),
                is_error: false,
                exit_code: Some(0),
            },
        ),
        event(
            6,
            Source::Environment,
            EventBody::Observation {
                call_id: "b".into(),
                tool: "think".into(),
                output: "bad json".into(),
                is_error: true,
                exit_code: None,
            },
        ),
    ];
    assert_eq!(
        render_history(&events),
        vec![
            ChatMessage::System {
                content: "sys".into()
            },
            ChatMessage::User {
                content: "fix it".into()
            },
            ChatMessage::Assistant {
                content: "Looking.".into(),
                tool_calls: vec![
                    ToolCall::function("a", "terminal", "{\"command\":\"ls\"}".into()),
                    ToolCall::function("b", "think", "{\"invalid_arguments\":\"{bad\"}".into()),
                ],
            },
            ChatMessage::Tool {
                tool_call_id: "a".into(),
                content: "x.py".into()
            },
            ChatMessage::Tool {
                tool_call_id: "b".into(),
                content: "ERROR: bad json".into()
            },
        ]
    );
}

#[test]
fn the_map_heads_the_first_user_message_only() {
    let start = start_event;
    let said = |id, text: &str| {
        event(
            id,
            Source::User,
            EventBody::Message {
                text: text.into(),
                step: None,
                reasoning: None,
                raw: None,
            },
        )
    };
    let rendered = render_history(&[
        start(Some("# Workspace map\nFiles")),
        said(1, "fix it"),
        said(2, "and this"),
    ]);
    assert_eq!(
        rendered[1..],
        [
            ChatMessage::User {
                content: "# Workspace map\nFiles\n\n# Task\nfix it".into()
            },
            ChatMessage::User {
                content: "and this".into()
            },
        ]
    );
    let without = render_history(&[start(None), said(1, "fix it")]);
    assert_eq!(
        without[1],
        ChatMessage::User {
            content: "fix it".into()
        }
    );
}

#[test]
fn a_condensed_history_carries_the_plan_it_dropped() {
    let start = start_event(None);
    let task = event(
        1,
        Source::User,
        EventBody::Message {
            text: "fix it".into(),
            step: None,
            reasoning: None,
            raw: None,
        },
    );
    let plan = event(
        4,
        Source::Environment,
        EventBody::Plan {
            step: 1,
            call_id: "c1".into(),
            tasks: vec![wright_protocol::PlanTask {
                title: "Find it".into(),
                status: wright_protocol::TaskStatus::Doing,
                notes: None,
            }],
        },
    );
    let condensed = |summary: Option<&str>| {
        event(
            9,
            Source::Environment,
            EventBody::Condensation(wright_protocol::Condensation {
                keep_from: 5,
                summary: summary.map(str::to_string),
                ..Default::default()
            }),
        )
    };
    let first_user = |events: &[Event]| match &render_history(events)[1] {
        ChatMessage::User { content } => content.clone(),
        other => panic!("{other:?}"),
    };
    let plan_text =
        "[Your plan (task_tracker) at that point:]\nPlan (0 of 1 done):\n1. [doing] Find it";
    assert_eq!(
        first_user(&[
            start.clone(),
            task.clone(),
            plan.clone(),
            condensed(Some("S"))
        ]),
        format!("fix it\n\n[Earlier work, condensed to fit the context window:]\nS\n\n{plan_text}")
    );
    assert_eq!(
        first_user(&[start.clone(), task.clone(), plan.clone(), condensed(None)]),
        format!("fix it\n\n[Earlier work, condensed to fit the context window:]\n{plan_text}")
    );
    // A plan made after the point kept from is in the kept events themselves.
    let late = Event { id: 6, ..plan };
    assert_eq!(
        first_user(&[start, task, late, condensed(Some("S"))]),
        "fix it\n\n[Earlier work, condensed to fit the context window:]\nS"
    );
}
