//! Bad input gets one clear sentence and loses nothing.

use crate::common::observations;
use crate::common::shape;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connection_says_what_to_do() {
    let h = Harness::new();
    let output = h.run("http://127.0.0.1:9", "anything", &[]).await;
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("cannot reach the model server at http://127.0.0.1:9/v1 (connection refused)"),
        "{err}"
    );
    assert!(err.contains("--base-url"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_model_lists_the_available_ones() {
    let h = Harness::new();
    let server = ScriptedServer::start_with_models(
        vec![],
        vec!["qwen2.5-coder:7b".into(), "llama3.2:latest".into()],
    )
    .await
    .unwrap();
    let url = server.url();
    let output = h
        .wright(
            &[
                "run",
                "--sandbox",
                "none",
                "--base-url",
                &url,
                "--model",
                "qwen2.5-codr:7b",
                "x",
            ],
            &[],
        )
        .await;
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("model 'qwen2.5-codr:7b' not found")
            && err.contains("available: qwen2.5-coder:7b, llama3.2:latest")
            && err.contains("Did you mean 'qwen2.5-coder:7b'?"),
        "{err}"
    );
    assert!(server.chat_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_models_and_none_chosen_asks_for_one() {
    let h = Harness::new();
    let server = ScriptedServer::start_with_models(vec![], vec!["a".into(), "b".into()])
        .await
        .unwrap();
    let url = server.url();
    let output = h
        .wright(&["run", "--sandbox", "none", "--base-url", &url, "x"], &[])
        .await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(
            "serves several models (a, b), and none was chosen. Choose one with --model NAME"
        ),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unavailable_sandbox_levels_fail_closed() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let url = server.url();
    // No Docker daemon there: refused before any request, with the way to fix it.
    let args = [
        "run",
        "--base-url",
        &url,
        "--model",
        "test-model",
        "--sandbox",
        "docker",
        "x",
    ];
    let output = h
        .wright(&args, &[("DOCKER_HOST", "unix:///nonexistent/docker.sock")])
        .await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output)
            .contains("the Docker daemon is not reachable at unix:///nonexistent/docker.sock")
            && stderr(&output).contains("dockerd"),
        "{}",
        stderr(&output)
    );
    assert!(server.chat_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_arguments_and_unknown_tools_go_back_to_the_model() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call_raw("terminal", "{\"command\": \"echo hi\""),
        reply().call("run_shell", json!({"command": "ls"})),
        reply().call("file_editor", json!({"command": "view"})),
        reply().call("execute_bash", json!({"command": "echo alias-ok"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "x", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let obs = observations(&h.events());
    assert_eq!(obs[0]["is_error"], true);
    assert!(
        obs[0]["output"]
            .as_str()
            .unwrap()
            .contains("not valid JSON"),
        "{}",
        obs[0]
    );
    assert!(obs[1]["output"]
        .as_str()
        .unwrap()
        .contains("unknown tool 'run_shell'; the tools are: terminal, file_editor, grep, glob, task_tracker, think, finish"));
    assert!(obs[2]["output"]
        .as_str()
        .unwrap()
        .contains("required parameter `path` is missing"));
    assert_eq!(obs[3]["output"], "alias-ok");
    // The malformed call is sent back as valid JSON, with the error beside it.
    let second = server.chat_requests()[1].json();
    let messages = second["messages"].as_array().unwrap();
    let call = &messages[messages.len() - 2]["tool_calls"][0]["function"]["arguments"];
    let parsed: serde_json::Value = serde_json::from_str(call.as_str().unwrap()).unwrap();
    assert_eq!(parsed["invalid_arguments"], "{\"command\": \"echo hi\"");
    assert!(messages.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .starts_with("ERROR: the arguments are not valid JSON"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_mid_call_is_retried_and_never_run() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        Reply::CutMidCall {
            name: "terminal".into(),
            arguments: json!({"command": "touch half-done"}).to_string(),
        },
        Reply::Status(503, json!({"error": {"message": "Loading model"}})),
        reply().call("terminal", json!({"command": "touch whole"})),
        reply().call("finish", json!({"message": "ok"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "x", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("[retry 1: the reply stream from"),
        "{}",
        stderr(&output)
    );
    assert!(!h.repo().join("half-done").exists());
    assert!(h.repo().join("whole").exists());
    let actions: Vec<String> = shape(&h.events())
        .into_iter()
        .filter(|s| s.starts_with("action"))
        .collect();
    assert_eq!(actions, vec!["action:terminal", "action:finish"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_error_fails_the_run_with_the_servers_words() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![Reply::Status(
        400,
        json!({"error": {"message": "the request exceeds the available context size (4096 tokens)"}}),
    )])
    .await
    .unwrap();
    let output = h.run(&server.url(), "x", &[]).await;
    assert_eq!(output.status.code(), Some(1));
    let events = h.events();
    assert_eq!(crate::common::last_state(&events), "state:failed");
    assert!(
        stderr(&output).contains("HTTP 400: the request exceeds the available context size"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_step_limit_stops_cleanly() {
    let h = Harness::new();
    let script = (0..3)
        .map(|i| reply().call("terminal", json!({"command": format!("echo {i}")})))
        .collect();
    let server = ScriptedServer::start(script).await.unwrap();
    let output = h.run(&server.url(), "loop", &["--max-steps", "2"]).await;
    assert_eq!(output.status.code(), Some(3));
    let events = h.events();
    assert_eq!(crate::common::last_state(&events), "state:stopped");
    assert!(crate::common::stdout(&output).contains("the step limit (2) was reached"));
}

/// `wright run --sandbox none URL wait` started, Ctrl-C pressed once `ready` holds; what
/// it printed.
async fn interrupt_when(h: &Harness, url: &str, ready: impl Fn() -> bool) -> std::process::Output {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args([
            "run",
            "--sandbox",
            "none",
            "--base-url",
            url,
            "--model",
            "test-model",
            "wait",
        ])
        .current_dir(h.repo())
        .env("XDG_DATA_HOME", h.data.path())
        .env("XDG_CACHE_HOME", h.data.path().join("cache"))
        .env("XDG_CONFIG_HOME", h.data.path().join("config"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !ready() {
        assert!(std::time::Instant::now() < deadline, "never ready");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("wright did not stop after Ctrl-C")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_cleanly_after_logging_the_step() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "sleep 60"}))
    ])
    .await
    .unwrap();
    // Once the action is in the log.
    let logged = || {
        std::fs::read_dir(h.data.path().join("wright/conversations"))
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .and_then(|e| std::fs::read_to_string(e.path().join("events.jsonl")).ok())
            .is_some_and(|log| log.contains("\"kind\":\"action\""))
    };
    let output = interrupt_when(&h, &server.url(), logged).await;
    assert_eq!(output.status.code(), Some(130));
    let events = h.events();
    assert_eq!(
        shape(&events)[3..],
        [
            "usage",
            "action:terminal",
            "observation:terminal",
            "state:stopped",
            "changes"
        ]
    );
    let obs = observations(&events);
    assert!(obs[0]["output"]
        .as_str()
        .unwrap()
        .contains("interrupted by the user"));
    // The report says how to go on.
    let id = h.conversation_id();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        report.contains(&format!(
            "interrupted by the user. Go on with `wright resume {id}`"
        )),
        "{report}"
    );
}

/// A model server that fails: the report says how to go on once it answers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_says_how_to_resume() {
    let h = Harness::new();
    // No reply scripted: every request gets an HTTP 500.
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let output = h.run(&server.url(), "x", &[]).await;
    assert_ne!(output.status.code(), Some(0));
    let id = h.conversation_id();
    let report = crate::common::stdout(&output);
    assert!(
        report.contains("HTTP 500") && report.contains(&format!("Go on with `wright resume {id}`")),
        "{report}\n{}",
        stderr(&output)
    );
}

/// What the command printed before Ctrl-C is kept in its observation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_keeps_what_the_command_printed() {
    let h = Harness::new();
    let flag = tempfile::tempdir().unwrap();
    let printed = flag.path().join("printed");
    let command = format!(
        "echo first-of-it-17; echo then-more-23; sleep 0.5; touch {}; sleep 60",
        printed.display()
    );
    let server =
        ScriptedServer::start(vec![reply().call("terminal", json!({ "command": command }))])
            .await
            .unwrap();
    let stopped = interrupt_when(&h, &server.url(), || printed.exists()).await;
    assert_eq!(stopped.status.code(), Some(130));
    let obs = observations(&h.events());
    let output = obs[0]["output"].as_str().unwrap();
    assert!(
        output.starts_with("This call did not finish: interrupted by the user")
            && output.contains("first-of-it-17\nthen-more-23"),
        "{output}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_calls_in_one_reply_run_in_order() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply()
            .text("Three at once.")
            .call("terminal", json!({"command": "echo one > order.txt"}))
            .call("terminal", json!({"command": "echo two >> order.txt"}))
            .call(
                "file_editor",
                json!({"command": "view", "path": "order.txt"}),
            ),
        reply().call("finish", json!({"message": "ok"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "x", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let events = h.events();
    assert_eq!(
        shape(&events)[3..10],
        [
            "usage",
            "message",
            "action:terminal",
            "observation:terminal",
            "action:terminal",
            "observation:terminal",
            "action:file_editor"
        ]
    );
    assert_eq!(
        observations(&events)[2]["output"],
        "     1\tone\n     2\ttwo\n"
    );
    // The next request carries the three calls in one assistant turn, then three results.
    let second = server.chat_requests()[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[2]["tool_calls"].as_array().unwrap().len(), 3);
    assert_eq!(
        messages[3..]
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["tool", "tool", "tool"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cut_by_the_token_limit_goes_back_to_the_model() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        Reply::HitTokenLimit {
            name: "terminal".into(),
            arguments: json!({"command": "touch cut-short"}).to_string(),
        },
        reply().call("terminal", json!({"command": "touch whole"})),
        reply().call("finish", json!({"message": "ok"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "x", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let obs = observations(&h.events());
    assert_eq!(obs[0]["is_error"], true);
    assert!(
        obs[0]["output"]
            .as_str()
            .unwrap()
            .contains("not valid JSON"),
        "{}",
        obs[0]
    );
    assert!(!h.repo().join("cut-short").exists());
    assert!(h.repo().join("whole").exists());
}
