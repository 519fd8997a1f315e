//! A 40-step task on a 16k window: the history is condensed (old outputs masked, then the
//! middle summarized) a few times, far apart, and the run still finishes; after a
//! condensation the requests are append-only again. Large outputs alone are condensed by
//! masking, without asking the model for anything.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;
use wright_testkit::ServerOptions;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_task_on_a_small_window_condenses_and_finishes() {
    let h = Harness::new();
    let mut script: Vec<Reply> = (0..40)
        .map(|n| {
            let command = if n % 2 == 0 {
                "seq 1 2000".to_string()
            } else {
                format!("echo step {n} {}", "lorem ipsum dolor sit amet ".repeat(30))
            };
            reply()
                .text(&format!("Step {n}."))
                .call("terminal", json!({"command": command}))
        })
        .collect();
    script.push(reply().call("finish", json!({"message": "all 40 steps done"})));
    let options = ServerOptions {
        llama_cpp_context: Some(16384),
        ..ServerOptions::default()
    };
    let server = ScriptedServer::start_with(script, options).await.unwrap();
    let output = h
        .run(&server.url(), "run the forty steps", &["--max-steps", "60"])
        .await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stderr(&output),
        stdout(&output)
    );
    assert_eq!(server.remaining(), 0);

    let condensations: Vec<serde_json::Value> = h
        .events()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|v| v["kind"] == "condensation")
        .collect();
    // Each condensation changes the prefix (the server prefills the history again), so
    // they must be far apart: before masking worked and the outputs shrank with the
    // window, this run needed 9, every one a summary.
    eprintln!(
        "condensations in 40 steps on a 16k window: {} ({} summaries)",
        condensations.len(),
        server.summaries()
    );
    assert!(
        !condensations.is_empty() && condensations.len() <= 4,
        "{} condensations: {condensations:?}",
        condensations.len()
    );
    assert!(
        condensations.iter().any(|c| c["summary"].is_null()),
        "none masked only: {condensations:?}"
    );
    assert!(
        condensations.iter().any(|c| c["summary"].is_string()),
        "no summary: {condensations:?}"
    );
    // The summary request's destination is logged as every model request's is.
    assert!(condensations
        .iter()
        .filter(|c| c["summary_prompt_tokens"].is_number())
        .all(|c| c["summary_destination"] == "loopback"));
    assert!(server.summaries() >= 1);
    // Every request fit in the window (the test server counts 4 bytes a token).
    let requests = server.chat_requests();
    for request in &requests {
        assert!(
            request.body.len() / 4 < 16384,
            "a request of {} bytes",
            request.body.len()
        );
    }
    // The summary is in the next request, and the requests after it extend it.
    let first = requests
        .iter()
        .position(|r| {
            String::from_utf8_lossy(&r.body).contains(
                "[Earlier work, condensed to fit the context window:]\\nTASK: the scripted task",
            )
        })
        .expect("no request carries the summary");
    assert!(first + 1 < requests.len());
    // The prefix is broken exactly once per condensation, and only there.
    let breaks = requests
        .windows(2)
        .filter(|pair| {
            let previous = &pair[0].body;
            !pair[1].body.starts_with(&previous[..previous.len() - 2])
        })
        .count();
    assert_eq!(breaks, condensations.len());
    let out = stdout(&output);
    assert!(out.contains("condensation"), "{out}");
    // Each condensation is told as what it did: a summary kept from before is not a new one.
    let err = stderr(&output);
    let masked_only = condensations
        .iter()
        .filter(|c| c["summary_prompt_tokens"].is_null())
        .count();
    assert_eq!(
        err.matches("[condensed the history: masked old outputs")
            .count(),
        masked_only,
        "{err}"
    );
    assert_eq!(
        err.matches("[condensed the history: summarized the earlier steps")
            .count(),
        server.summaries(),
        "{err}"
    );
    assert!(
        stderr(&output).contains("[condensed the history: summarized the earlier steps"),
        "{}",
        stderr(&output)
    );
}

/// Steps of large outputs on a 16k window: old outputs are cut to their first and last
/// lines, no summary is asked for, and the last steps' outputs stay whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_outputs_are_masked_without_asking_the_model() {
    let h = Harness::new();
    let mut script: Vec<Reply> = (0..16)
        .map(|n| {
            reply().text(&format!("Step {n}.")).call(
                "terminal",
                json!({"command": format!("seq {0}0000 {0}2000", n + 1)}),
            )
        })
        .collect();
    script.push(reply().call("finish", json!({"message": "done"})));
    let options = ServerOptions {
        llama_cpp_context: Some(16384),
        ..ServerOptions::default()
    };
    let server = ScriptedServer::start_with(script, options).await.unwrap();
    let output = h
        .run(&server.url(), "count sixteen times", &["--max-steps", "30"])
        .await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stderr(&output),
        stdout(&output)
    );
    assert_eq!(server.remaining(), 0);
    assert_eq!(server.summaries(), 0);
    let events: Vec<serde_json::Value> = h
        .events()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    let condensations: Vec<&serde_json::Value> = events
        .iter()
        .filter(|v| v["kind"] == "condensation")
        .collect();
    assert!(!condensations.is_empty());
    for condensation in &condensations {
        assert!(condensation["summary"].is_null(), "{condensation}");
        assert!(
            condensation["masked"]
                .as_array()
                .is_some_and(|m| m.len() >= 4),
            "{condensation}"
        );
        assert!(condensation["tokens_after"].as_u64().unwrap() < 16384 / 2);
    }
    // The request after the first condensation shows the old outputs cut, the last two whole.
    let at = events
        .iter()
        .position(|v| v["kind"] == "condensation")
        .unwrap();
    let step = events[..at].iter().filter(|v| v["kind"] == "usage").count();
    let request = String::from_utf8_lossy(&server.chat_requests()[step].body).into_owned();
    assert!(
        request.contains("lines cut to save context; run the command or view the file again"),
        "{request}"
    );
    // Line 101 of step N's output (masking keeps only 6 at each end).
    let line_101 = |n: usize| format!("\\n{n}0100\\n");
    assert!(!request.contains(&line_101(1)), "the first output is whole");
    assert!(request.contains(&line_101(step)), "the last output is cut");
    assert!(
        request.contains(&line_101(step - 1)),
        "the one before is cut"
    );
    assert!(
        stderr(&output).contains("[condensed the history: masked old outputs"),
        "{}",
        stderr(&output)
    );
}
