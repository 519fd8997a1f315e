//! The stop reason a prompt answers when its run ended short of the task: `end_turn` is
//! only for a run that finished, so an editor (or wright driving `wright acp` as an
//! external agent) can tell a run that went round in circles, or hit its time or step
//! budget, from one that did the work.

use super::Editor;
use crate::common::Harness;
use pretty_assertions::assert_eq;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

async fn stop_reason(script: Vec<wright_testkit::Reply>, flags: &[&str]) -> String {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(script).await.unwrap();
    let url = server.url();
    let mut args = vec!["--base-url", url.as_str(), "--model", "test-model"];
    args.extend(flags);
    let mut editor = Editor::start_with(&h, &args);
    editor.initialize().await;
    let session = editor.new_session(h.repo()).await;
    let answer = editor.prompt(&session, "fix the failing test").await;
    let stop = answer.response["result"]["stopReason"]
        .as_str()
        .unwrap_or_else(|| panic!("{}\n{}", answer.response, editor.said()))
        .to_string();
    editor.close().await;
    stop
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stuck_detector_answers_max_turn_requests_not_end_turn() {
    let same = || reply().call("terminal", json!({"command": "cat missing.txt"}));
    let stop = stop_reason((0..4).map(|_| same()).collect(), &[]).await;
    assert_eq!(stop, "max_turn_requests");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_without_a_call_in_a_run_answers_refusal() {
    // The model stops calling tools without `finish`: wright stops short of the task.
    let words = || reply().text("I would rather not.");
    let stop = stop_reason((0..2).map(|_| words()).collect(), &[]).await;
    assert_eq!(stop, "refusal");
}
