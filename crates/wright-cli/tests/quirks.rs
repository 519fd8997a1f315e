//! Servers as they really stream: Ollama's whole calls without `index` and "stop" after
//! tool calls, reasoning fields, llama.cpp's `timings` and cached-token counts.

use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::ServerOptions;

fn two_calls_then_finish() -> Vec<wright_testkit::Reply> {
    vec![
        reply()
            .reasoning("The user wants two files. ")
            .text("Creating them.")
            .call("terminal", json!({"command": "echo a > a.txt"}))
            .call("terminal", json!({"command": "echo b > b.txt && ls -1"})),
        reply().call("finish", json!({"message": "made a.txt and b.txt"})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_style_streams_work() {
    let h = Harness::new();
    let options = ServerOptions {
        ollama_style: true,
        ..ServerOptions::default()
    };
    let server = ScriptedServer::start_with(two_calls_then_finish(), options)
        .await
        .unwrap();
    let output = h.run(&server.url(), "make two files", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let events = h.events();
    assert_eq!(observations(&events)[1]["output"], "a.txt\nb.txt");
    let message = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .find(|v| v["kind"] == "message" && v["source"] == "agent")
        .unwrap();
    assert_eq!(message["reasoning"], "The user wants two files. ");
    assert_eq!(message["text"], "Creating them.");
    // Reasoning is shown, never sent back.
    let second = server.chat_requests()[1].json();
    assert!(!second.to_string().contains("The user wants two files"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_cpp_timings_and_cached_tokens_are_logged() {
    let h = Harness::new();
    let options = ServerOptions {
        llama_cpp_context: Some(32768),
        ..ServerOptions::default()
    };
    let server = ScriptedServer::start_with(two_calls_then_finish(), options)
        .await
        .unwrap();
    let output = h.run(&server.url(), "make two files", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let usage: Vec<serde_json::Value> = h
        .events()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|v| v["kind"] == "usage")
        .collect();
    assert_eq!(usage[0]["prefill_ms"], 40.0);
    assert_eq!(usage[0]["generation_ms"], 200.0);
    assert!(usage[0]["cached_tokens"].as_u64().unwrap() > 0);
    let out = crate::common::stdout(&output);
    assert!(out.contains("cached") && out.contains("prefill"), "{out}");
}
