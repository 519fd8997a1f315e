//! What wright says when the model server fails is true, and its fix is worded for where
//! the user is: a flag on the command line, a slash command in a chat. `--json` shows
//! each retry and, at the end, where the changes went.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use std::time::Duration;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

/// A server that takes the connection and closes it is running (or was): not "start it".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_connection_is_not_a_missing_server() {
    let h = Harness::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let closer = tokio::spawn(async move {
        loop {
            if let Ok((stream, _)) = listener.accept().await {
                drop(stream);
            }
        }
    });
    let url = format!("http://127.0.0.1:{port}/v1");
    let output = h.run(&url, "anything", &["--sandbox", "none"]).await;
    closer.abort();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "the model server at {url} closed the connection without answering"
        )),
        "{err}"
    );
    assert!(
        !err.contains("Start it") && !err.contains("cannot reach"),
        "{err}"
    );
}

/// After retries the error says how many tries and how long in all, each retry is an
/// event (`--json` prints it), and the fix names the flag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_is_reported_with_its_tries() {
    let h = Harness::new();
    let silent = || Reply::Delayed(Duration::from_secs(4), Box::new(reply().text("late")));
    // Four tries for each of the two runs.
    let server = ScriptedServer::start((0..8).map(|_| silent()).collect())
        .await
        .unwrap();
    let url = server.url();
    let output = h
        .run(
            &url,
            "anything",
            &["--sandbox", "none", "--idle-timeout", "1", "--json"],
        )
        .await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let lines: Vec<serde_json::Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let retries: Vec<(u64, u64)> = lines
        .iter()
        .filter(|e| e["kind"] == "retry")
        .map(|e| (e["step"].as_u64().unwrap(), e["attempt"].as_u64().unwrap()))
        .collect();
    assert_eq!(retries, vec![(1, 1), (1, 2), (1, 3)]);
    let state = lines.iter().rev().find(|e| e["kind"] == "state").unwrap();
    let reason = state["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("gave up after 4 tries in ")
            && reason.contains(&format!("the server at {url} sent nothing for 1 s")),
        "{reason}"
    );
    // The log holds no flag: the front end words the fix.
    assert!(!reason.contains("--"), "{reason}");
    // The same lines are the log's.
    let logged: Vec<serde_json::Value> = h
        .events()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(logged, lines);

    let human = h
        .run(
            &url,
            "anything",
            &["--sandbox", "none", "--idle-timeout", "1"],
        )
        .await;
    let out = stdout(&human);
    assert!(
        out.contains("sent nothing for 1 s; it may be overloaded or stuck. Allow a longer silence with --idle-timeout SECS"),
        "{out}"
    );
}

/// `--json` ends with where the changes went: the branch and the diff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_ends_with_the_changes() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call(
            "file_editor",
            json!({"command": "create", "path": "notes.txt", "file_text": "hello\n"}),
        ),
        reply().call("finish", json!({"message": "wrote notes.txt"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "write notes.txt", &["--json"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let id = h.conversation_id();
    assert_eq!(last["kind"], "changes", "{text}");
    assert_eq!(last["outcome"], "branch");
    assert_eq!(last["branch"], format!("wright/{id}"));
    assert!(
        last["diff"].as_str().unwrap().contains("+++ b/notes.txt"),
        "{last:#}"
    );
    assert_eq!(
        serde_json::to_value(h.events().last().unwrap()).unwrap(),
        last
    );
}

/// In a chat, `/model NAME` with a name the server lacks suggests `/model`, not a flag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_words_the_fix_as_a_chat_command() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let output = h
        .chat_with_input(&server.url(), b"/model test-modle\n/exit\n")
        .await;
    let out = stdout(&output);
    assert!(
        out.contains("model 'test-modle' not found")
            && out.contains("Did you mean 'test-model'? Choose one with /model NAME"),
        "{out}"
    );
    assert!(!out.contains("--model"), "{out}");
}
