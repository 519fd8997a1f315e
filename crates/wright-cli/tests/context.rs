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

/// One output of 1,200 lines on a 4k window: what the terminal shows shrinks with the
/// window, so the run goes on (it used to stop at the next step).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_output_on_a_small_window_is_cut_to_fit() {
    let h = Harness::new();
    let long = "for i in $(seq 1 1200); do echo \"line $i of a long build log\"; done";
    let server = ScriptedServer::start_with(
        vec![
            reply().call("terminal", json!({"command": long})),
            reply().call("terminal", json!({"command": long})),
            reply().call("terminal", json!({"command": "echo done"})),
            reply().call("finish", json!({"message": "Read the log."})),
        ],
        llama_cpp(4096),
    )
    .await
    .unwrap();
    let output = h.run(&server.url(), "read the log", &[]).await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stderr(&output),
        stdout(&output)
    );
    assert_eq!(server.remaining(), 0);
    let observation = h
        .events()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .find(|v| v["kind"] == "observation")
        .unwrap();
    let text = observation["output"].as_str().unwrap();
    assert!(text.starts_with("line 1 of a long build log\n"), "{text}");
    assert!(text.contains("line 1200 of a long build log"), "{text}");
    assert!(text.contains(" lines) omitted; full output in "), "{text}");
    assert!(text.chars().count() < 1200, "{} characters", text.len());
    // Every request fit (the test server counts 4 bytes a token), with room for the reply.
    for request in server.chat_requests() {
        assert!(
            request.body.len() / 4 < 4096 - 512,
            "{}",
            request.body.len()
        );
    }
}

/// What truly does not fit (a file of 20,000 characters written in one call, on a 4k
/// window) is never sent, and the run says what it was, how large, how much room there
/// is, and what to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_does_not_fit_is_named_with_its_size_and_the_fix() {
    let h = Harness::new();
    let text = "x = 1\n".repeat(3500);
    let server = ScriptedServer::start_with(
        vec![
            reply().call(
                "file_editor",
                json!({"command": "create", "path": "big.py", "file_text": text}),
            ),
            reply().call("finish", json!({"message": "never reached"})),
        ],
        llama_cpp(4096),
    )
    .await
    .unwrap();
    let output = h.run(&server.url(), "write it", &[]).await;
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert_eq!(server.chat_requests().len(), 1);
    assert_eq!(server.summaries(), 0);
    // The step that was never sent is not counted.
    assert!(
        stdout(&output).contains("· 1 step ·"),
        "{}",
        stdout(&output)
    );
    assert_eq!(crate::common::last_state(&h.events()), "state:stopped");
    let out = stdout(&output);
    let needs = out
        .split("the last step (the model's reply, its tool calls and their results) needs about ")
        .nth(1)
        .unwrap_or_else(|| panic!("{out}"));
    let needed: u64 = needs.split(' ').next().unwrap().parse().unwrap();
    let left: u64 = needs
        .split("tokens, and only ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("{out}"))
        .parse()
        .unwrap();
    // 21,000 characters of arguments, escaped twice in JSON, at 4 bytes a token.
    assert!((5000..9000).contains(&needed), "{out}");
    assert!(left < 4096 - 512, "{out}");
    assert!(
        out.contains("in the 4096-token context window")
            && out.contains("start the model server with a larger context")
            && out.contains("a model made for a larger window"),
        "{out}"
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
