//! Scripted loops of each stuck pattern: one corrective message naming it, then a stop
//! with state `stuck` if it goes on.

use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

fn terminal(command: &str) -> Reply {
    reply().call("terminal", json!({"command": command}))
}

/// Runs the script; returns the run's stdout and the requests' last user-side messages.
async fn run_loop(script: Vec<Reply>, expected_nudge: &str) {
    let h = Harness::new();
    let server = ScriptedServer::start(script).await.unwrap();
    let output = h.run(&server.url(), "loop", &[]).await;
    assert_eq!(output.status.code(), Some(3), "{}", stdout(&output));
    let events = h.events();
    assert_eq!(crate::common::last_state(&events), "state:stuck");
    let out = stdout(&output);
    assert!(
        out.contains("── stuck: ") && out.contains("even after being told"),
        "{out}"
    );
    let nudged = server
        .chat_requests()
        .iter()
        .any(|r| r.json()["messages"].to_string().contains(expected_nudge));
    assert!(nudged, "the model was never told: {expected_nudge}");
    assert_eq!(
        server.remaining(),
        0,
        "it should stop right after the nudge is ignored"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_action_same_result() {
    run_loop(
        (0..4).map(|_| terminal("cat missing.txt")).collect(),
        "You are going in circles: the same action gave the same result 3 times in a row",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_action_failing() {
    run_loop(
        (0..4).map(|_| terminal("date +%N; false")).collect(),
        "the same action failed 3 times in a row",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alternating_between_two_actions() {
    run_loop(
        (0..7)
            .map(|n| terminal(if n % 2 == 0 { "echo a" } else { "echo b" }))
            .collect(),
        "the last steps alternate between two actions",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cycle_of_three_actions() {
    run_loop(
        (0..7)
            .map(|n| terminal(["echo a", "echo b", "echo c"][n % 3]))
            .collect(),
        "the last steps repeat the same 3 actions in the same order: terminal",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cycle_of_four_with_an_action_twice() {
    run_loop(
        (0..9)
            .map(|n| terminal(["echo a", "echo b", "echo b", "echo c"][n % 4]))
            .collect(),
        "the last steps repeat the same 4 actions in the same order: terminal",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_without_a_readable_call() {
    run_loop(
        (0..4)
            .map(|_| {
                reply().text("<tool_call>{\"name\": \"terminal\", \"arguments\": {\"command\": ")
            })
            .collect(),
        "3 replies in a row had no tool call that could be read",
    )
    .await;
}
