//! The log is the truth: kill -9 at any moment loses at most the step in flight, resume
//! goes on from the log, budgets stop cleanly, and replaying a log gives back exactly the
//! requests the model saw.

use crate::common::observations;
use crate::common::shape;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use std::time::Duration;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

/// Starts `wright run`, waits until `ready(log)` holds, then kills it with SIGKILL.
async fn run_and_kill(h: &Harness, url: &str, ready: impl Fn(&str) -> bool) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args([
            "run",
            "--base-url",
            url,
            "--model",
            "test-model",
            "--tool-calling",
            "native",
            "do it",
        ])
        .current_dir(h.repo())
        .env("XDG_DATA_HOME", h.data.path())
        .env("XDG_CACHE_HOME", h.data.path().join("cache"))
        .env("XDG_CONFIG_HOME", h.data.path().join("config"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let log = std::fs::read_dir(h.data.path().join("wright/conversations"))
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .and_then(|e| std::fs::read_to_string(e.path().join("events.jsonl")).ok())
            .unwrap_or_default();
        if ready(&log) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never reached the kill point; log:\n{log}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_during_a_command_then_resumed() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo one > one.txt"})),
        reply().call(
            "terminal",
            json!({"command": "sleep 30; echo never > two.txt"}),
        ),
    ])
    .await
    .unwrap();
    run_and_kill(&h, &server.url(), |log| log.contains("sleep 30")).await;
    let before = h.events();
    assert_eq!(shape(&before).last().unwrap(), "action:terminal");

    let next = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "cat one.txt; ls"})),
        reply().call("finish", json!({"message": "resumed and done"})),
    ])
    .await
    .unwrap();
    let id = h.conversation_id();
    let url = next.url();
    let output = h
        .wright(
            &["resume", &id, "--base-url", &url, "--model", "test-model"],
            &[],
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("a terminal call was cut off by the stop"),
        "{}",
        stderr(&output)
    );
    let events = h.events();
    let obs = observations(&events);
    assert!(obs[1]["output"]
        .as_str()
        .unwrap()
        .starts_with("interrupted: wright stopped while this call ran"));
    assert_eq!(obs[1]["is_error"], true);
    assert_eq!(obs[2]["output"], "one\none.txt");
    assert!(!h.repo().join("two.txt").exists());
    // The resumed request is the old history plus the interruption, byte for byte.
    let resumed = next.chat_requests()[0].json();
    let messages = resumed["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["role"], "tool");
    assert!(messages.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .contains("interrupted"));
    let first = server.chat_requests();
    let old = &first.last().unwrap().body;
    assert!(next.chat_requests()[0]
        .body
        .starts_with(&old[..old.len() - 2]));
    assert!(stdout(&output).contains("resumed and done"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_while_waiting_for_the_model_and_a_torn_line_is_cut() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo one"})),
        Reply::Delayed(Duration::from_secs(30), Box::new(reply().text("late"))),
    ])
    .await
    .unwrap();
    run_and_kill(&h, &server.url(), |log| {
        log.contains("\"kind\":\"observation\"")
    })
    .await;
    // A write cut in the middle, as a crash can leave.
    let path = h.log_path();
    let mut text = std::fs::read_to_string(&path).unwrap();
    let complete = text.len();
    text.push_str("{\"id\":99,\"ts\":\"2026-");
    std::fs::write(&path, &text).unwrap();
    let listed = stdout(&h.wright(&["ls"], &[]).await);
    assert!(listed.contains("(log torn at the end)"), "{listed}");

    let next = ScriptedServer::start(vec![reply().call("finish", json!({"message": "ok"}))])
        .await
        .unwrap();
    let id = h.conversation_id();
    let url = next.url();
    let output = h.resume(&url, &id, "go on").await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("the log ended in a torn line"),
        "{}",
        stderr(&output)
    );
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.len() > complete && !after.contains("{\"id\":99,"));
    assert_eq!(crate::common::last_state(&h.events()), "state:finished");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budgets_stop_cleanly_and_resume_goes_on() {
    let h = Harness::new();
    let script = (0..6)
        .map(|i| reply().call("terminal", json!({"command": format!("echo {i}")})))
        .collect();
    let server = ScriptedServer::start(script).await.unwrap();
    let output = h
        .run(&server.url(), "loop", &["--max-tokens", "1500"])
        .await;
    assert_eq!(output.status.code(), Some(3));
    assert!(
        stdout(&output).contains("the token budget (1500) was spent"),
        "{}",
        stdout(&output)
    );

    let slow = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "sleep 20"}))
    ])
    .await
    .unwrap();
    let h2 = Harness::new();
    let started = std::time::Instant::now();
    let output = h2.run(&slow.url(), "wait", &["--max-time", "2"]).await;
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(output.status.code(), Some(3));
    assert!(
        stdout(&output).contains("the time limit was reached"),
        "{}",
        stdout(&output)
    );
    let obs = observations(&h2.events());
    assert!(obs[0]["output"]
        .as_str()
        .unwrap()
        .starts_with("This call did not finish: the time limit of this run was reached."));

    // A stopped conversation resumes without a message.
    let more = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo again"})),
        reply().call("finish", json!({"message": "fine"})),
    ])
    .await
    .unwrap();
    let id = h2.conversation_id();
    let url = more.url();
    let output = h2
        .wright(
            &["resume", &id, "--base-url", &url, "--model", "test-model"],
            &[],
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaying_the_log_gives_the_exact_requests() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply()
            .text("Looking.")
            .call("terminal", json!({"command": "echo a"}))
            .call("think", json!({"thought": "ok"})),
        reply().call_raw("terminal", "{\"command\": "),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "replay me", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let events = h.events();
    let start = match &events[0].body {
        wright_protocol::EventBody::Start(start) => start.clone(),
        other => panic!("{other:?}"),
    };
    let client = wright_llm::Client::new({
        let mut config = wright_llm::ClientConfig::new(server.url(), "test-model");
        config.max_tokens = Some(4096);
        config
    })
    .unwrap();
    let usage_at: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.body, wright_protocol::EventBody::Usage(_)))
        .map(|(i, _)| i)
        .collect();
    let requests = server.chat_requests();
    assert_eq!(usage_at.len(), requests.len());
    for (at, request) in usage_at.iter().zip(&requests) {
        let messages = wright_core::render_history(&events[..*at]);
        let body = client.request_body(&messages, &start.tools);
        assert_eq!(
            String::from_utf8(body).unwrap(),
            String::from_utf8(request.body.clone()).unwrap()
        );
    }
}
