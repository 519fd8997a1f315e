//! Side questions through the server: `POST /api/conversations/{id}/ask` is answered
//! while the conversation runs (between two of its steps) and after it ended, logged as
//! `side_question` events, and the main requests never see the question.

use super::*;
use std::sync::Arc;
use wright_testkit::Reaction;

/// The request's `messages` and what follows (its last field).
fn history(body: &[u8]) -> &[u8] {
    let key = b"\"messages\":";
    let at = body
        .windows(key.len())
        .position(|w| w == key)
        .expect("a request without messages");
    &body[at..]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_side_question_is_answered_while_running_and_after() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    // Each request answered from what it asks, not from its place in line: on a loaded
    // machine the question may reach the model before the run's second request does.
    let answer = |last: &str| {
        if last.contains("what are you doing?") {
            reply().text("It is printing numbers.")
        } else if last.contains("what did you do?") {
            reply().text("It printed one and two.")
        } else if last.contains("STEP-TWO-DONE") {
            reply().call("finish", json!({"message": "done"}))
        } else if last.contains("STEP-ONE-DONE") {
            // Room for the question to arrive while the run is still going.
            Reply::Delayed(
                Duration::from_secs(6),
                Box::new(reply().call("terminal", json!({"command": "echo STEP-TWO-DONE"}))),
            )
        } else {
            reply().call("terminal", json!({"command": "echo STEP-ONE-DONE"}))
        }
    };
    let reacting = Reply::Reacting(Reaction(Arc::new(answer)));
    let model = ScriptedServer::start(vec![reacting; 5]).await.unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let id = served
        .create(h.repo(), "print one and two", &model.url())
        .await;
    served.wait_for_event(&id, "observation").await;
    // While it runs: answered between two steps.
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/ask"),
            json!({"question": "what are you doing?"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["answer"], "It is printing numbers.");
    served.wait_for(&id, &["finished"]).await;
    // After its end: opened, asked, closed.
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/ask"),
            json!({"question": "what did you do?"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["answer"], "It printed one and two.");
    let (status, _) = served
        .post(
            &format!("/api/conversations/{id}/ask"),
            json!({"question": "  "}),
        )
        .await;
    assert_eq!(status, 400);
    // Each main request extends the one before it, byte for byte, and holds no trace of
    // the question; the side requests do.
    let requests = model.chat_requests();
    assert_eq!(requests.len(), 5);
    let (side, main): (Vec<_>, Vec<_>) = requests
        .iter()
        .partition(|r| String::from_utf8_lossy(&r.body).contains("Question: what"));
    assert_eq!((side.len(), main.len()), (2, 3));
    for pair in main.windows(2) {
        let (before, after) = (history(&pair[0].body), history(&pair[1].body));
        assert!(after.starts_with(&before[..before.len() - 2]));
        assert!(!String::from_utf8_lossy(after).contains("what are you doing?"));
    }
    assert!(String::from_utf8_lossy(&side[0].body).contains("Question: what are you doing?"));
    let events = served.events(&id, 1000).await;
    let asked: Vec<&Value> = of_kind(&events, "side_question");
    assert_eq!(asked.len(), 2, "{events:#?}");
    assert_eq!(asked[0]["question"], "what are you doing?");
}
