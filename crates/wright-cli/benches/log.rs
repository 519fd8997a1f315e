//! `cargo bench -p wright-cli --bench log`: the event log's own cost. Appending an event
//! (one `write` of one JSON line; a sync per step runs in the background) and replaying a
//! 10,000-event log (reading, parsing, and rendering the history the model would see).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_macros)]

use serde_json::json;
use std::time::Instant;
use wright_core::render_history;
use wright_core::EventLog;
use wright_protocol::read_log;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::Start;
use wright_protocol::ToolCalling;
use wright_protocol::Usage;

const EVENTS: usize = 10_000;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut log = EventLog::create(&path).unwrap();
    log.append(
        Source::Environment,
        EventBody::Start(Start {
            secrets: Vec::new(),
            version: 1,
            conversation: "bench".into(),
            workspace: "/w".into(),
            model: "m".into(),
            base_url: "http://127.0.0.1:1/v1".into(),
            system_prompt: "You are wright.".repeat(40),
            tools: vec![json!({"type": "function", "function": {"name": "terminal"}})],
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
    )
    .unwrap();
    // Steps of four events (usage, action, observation with ~300 bytes of output, message).
    let started = Instant::now();
    let mut step = 0u32;
    while log.events().len() < EVENTS {
        step += 1;
        log.append(
            Source::Environment,
            EventBody::Usage(Usage {
                step,
                prompt_tokens: 1000,
                completion_tokens: 20,
                ..Usage::default()
            }),
        )
        .unwrap();
        log.append(
            Source::Agent,
            EventBody::Action {
                step,
                call_id: format!("call_{step}"),
                tool: "terminal".into(),
                arguments: json!({"command": format!("echo step {step}")}),
                risk: Some(wright_protocol::Risk::Low),
                risk_reason: Some("echo reads".into()),
            },
        )
        .unwrap();
        log.append(
            Source::Environment,
            EventBody::Observation {
                call_id: format!("call_{step}"),
                tool: "terminal".into(),
                output: format!("step {step} ").repeat(30),
                is_error: false,
                exit_code: Some(0),
            },
        )
        .unwrap();
        log.append(
            Source::Agent,
            EventBody::Message {
                text: "Next.".into(),
                step: Some(step),
                reasoning: None,
                raw: None,
            },
        )
        .unwrap();
        log.sync_step().await.unwrap();
    }
    log.wait_sync().await.unwrap();
    let append_us = started.elapsed().as_secs_f64() * 1e6 / log.events().len() as f64;

    // The same appends with no sync at all: the cost of the write itself.
    let bare_path = dir.path().join("bare.jsonl");
    let mut bare = EventLog::create(&bare_path).unwrap();
    let started = Instant::now();
    for event in log.events() {
        bare.append(event.source, event.body.clone()).unwrap();
    }
    let bare_us = started.elapsed().as_secs_f64() * 1e6 / log.events().len() as f64;

    let mut replays = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let parsed = read_log(&path).unwrap();
        let messages = render_history(&parsed.events);
        assert!(messages.len() > EVENTS / 2);
        replays.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    replays.sort_by(f64::total_cmp);
    let size = std::fs::metadata(&path).unwrap().len();
    println!(
        "wright event log benchmark ({} events, {:.1} MB)",
        log.events().len(),
        size as f64 / 1e6
    );
    println!("  append: {bare_us:.1} µs per event (one write of one line)");
    println!(
        "  append with a data sync per 4-event step, steps back to back (no model time to hide the sync): {append_us:.1} µs per event"
    );
    println!(
        "  replay (read + parse + render the history): median {:.1} ms (5 runs)",
        replays[2]
    );
}
