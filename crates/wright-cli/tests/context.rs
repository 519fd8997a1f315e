//! The real context window: read from the server, warned about when small, never exceeded.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::ServerOptions;

fn llama_cpp(n_ctx: u64) -> ServerOptions {
    ServerOptions {
        llama_cpp_context: Some(n_ctx),
        ..ServerOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_window_is_reported_with_the_fix() {
    let h = Harness::new();
    let server = ScriptedServer::start_with(
        vec![
            reply().call("terminal", json!({"command": "true"})),
            reply().call("finish", json!({"message": "Nothing to do."})),
        ],
        llama_cpp(8192),
    )
    .await
    .unwrap();
    let output = h.run(&server.url(), "x", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("context 8192 tokens (llama.cpp /props n_ctx"),
        "{err}"
    );
    assert!(
        err.contains("warning: the context window is only 8192 tokens") && err.contains("-c 32768"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_would_not_fit_is_never_sent() {
    let h = Harness::new();
    let server = ScriptedServer::start_with(
        vec![
            reply().call("terminal", json!({"command": "seq 1 3000"})),
            reply().call("finish", json!({"message": "never reached"})),
        ],
        llama_cpp(2048),
    )
    .await
    .unwrap();
    let output = h.run(&server.url(), "count", &[]).await;
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert_eq!(server.chat_requests().len(), 1);
    assert_eq!(crate::common::last_state(&h.events()), "state:stopped");
    assert!(
        stdout(&output).contains("and the context window is 2048"),
        "{}",
        stdout(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_limit_wins_when_smaller() {
    let h = Harness::new();
    let server = ScriptedServer::start_with(
        vec![
            reply().call("terminal", json!({"command": "true"})),
            reply().call("finish", json!({"message": "ok"})),
        ],
        llama_cpp(65536),
    )
    .await
    .unwrap();
    let output = h
        .run(&server.url(), "x", &["--context-window", "20000"])
        .await;
    assert!(output.status.success());
    assert!(
        stderr(&output).contains("context 20000 tokens (--context-window; the server has 65536)"),
        "{}",
        stderr(&output)
    );
}
