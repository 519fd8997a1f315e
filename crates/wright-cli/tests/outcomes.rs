//! Outcomes that tell the truth: in `run`, only `finish` ends a task with exit 0; a reply
//! without a tool call is sent back once, a second one stops the run; an empty reply is a
//! model failure (retried, then exit 1).

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talking_instead_of_acting_is_sent_back_once_then_stops_the_run() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().text("I would change rows[1:] to rows[2:]. Let me know if you want that."),
        reply().text("As I said, change rows[1:]."),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "fix the export", &[]).await;
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("the model replied twice without a tool call"),
        "{}",
        stdout(&output)
    );
    let second = server.chat_requests()[1].json()["messages"].to_string();
    assert!(
        second.contains(wright_strategies::NUDGE.split(':').next().unwrap()),
        "{second}"
    );

    // Told once, a model that then acts finishes as usual.
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().text("I would change the file."),
        reply().call("terminal", json!({"command": "echo changed"})),
        reply().call("finish", json!({"message": "changed it"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "fix the export", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_reply_is_a_model_failure() {
    let h = Harness::new();
    let empty = || {
        Reply::Status(
            200,
            json!({"id": "x", "object": "chat.completion", "choices": []}),
        )
    };
    let server = ScriptedServer::start(vec![empty(), empty(), empty(), empty()])
        .await
        .unwrap();
    let output = h.run(&server.url(), "fix the export", &[]).await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let said = format!("{}{}", stdout(&output), stderr(&output));
    assert!(said.contains("sent an empty reply"), "{said}");
    // Retried before giving up.
    assert_eq!(server.chat_requests().len(), 4);
}

/// A `finish` right after a failing command is sent back once, quoting the command; a
/// second one is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finishing_right_after_a_failing_command_is_asked_about_once() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "false"})),
        reply().call("finish", json!({"message": "fixed it"})),
        reply().call("finish", json!({"message": "it only had to run"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "run false", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let third = server.chat_requests()[2].json()["messages"].to_string();
    assert!(
        third.contains("The last command failed (exit 1): false."),
        "{third}"
    );
    assert!(
        stdout(&output).contains("it only had to run"),
        "{}",
        stdout(&output)
    );
}
