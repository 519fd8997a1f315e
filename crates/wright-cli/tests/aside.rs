//! `/ask` in a chat: a side question is answered from the conversation's context in a
//! request of its own, logged as a `side_question` event, and the main requests are byte
//! for byte those of the same chat without the question.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_protocol::EventBody;
use wright_testkit::reply;
use wright_testkit::Recorded;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

fn main_script() -> Vec<Reply> {
    vec![
        reply().call("terminal", json!({"command": "echo one > a.txt"})),
        reply().text("Wrote a.txt."),
        reply().call("terminal", json!({"command": "echo two > b.txt"})),
        reply().text("Wrote b.txt."),
    ]
}

/// A chat of two turns, with `between` typed between them; the main requests' bodies
/// (the workspace's path made neutral) and the server.
async fn chat(between: &str, script: Vec<Reply>) -> (Harness, Vec<Recorded>, ScriptedServer) {
    let h = Harness::new();
    std::fs::write(h.repo().join("notes.md"), "notes\n").unwrap();
    let server = ScriptedServer::start(script).await.unwrap();
    let input = format!("write one in a.txt\n{between}write two in b.txt\n/exit\n");
    let output = h.chat_with_input(&server.url(), input.as_bytes()).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(h.repo().join("b.txt").exists(), "{}", stdout(&output));
    let requests = server.chat_requests();
    (h, requests, server)
}

fn neutral(h: &Harness, body: &[u8]) -> String {
    let repo = h.repo().canonicalize().unwrap();
    String::from_utf8(body.to_vec())
        .unwrap()
        .replace(&repo.display().to_string(), "<repo>")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_side_question_leaves_the_main_requests_as_they_were() {
    let (plain, without, _) = chat("", main_script()).await;
    let mut script = main_script();
    script.insert(2, reply().text("Because you asked for one in a.txt."));
    let (h, with, server) = chat("/ask why a.txt?\n", script).await;
    assert_eq!(server.remaining(), 0);
    assert_eq!(without.len(), 4);
    assert_eq!(with.len(), 5);
    // The side request: the history as it was, then the question.
    let aside = with[2].json();
    let messages = aside["messages"].as_array().unwrap();
    let question = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(question.ends_with("Question: why a.txt?"), "{question}");
    let before = with[1].json();
    let before = before["messages"].as_array().unwrap();
    assert_eq!(&messages[..before.len()], &before[..]);
    // The main requests, byte for byte those of the chat without the question.
    let main: Vec<&Recorded> = with
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 2)
        .map(|(_, r)| r)
        .collect();
    for (index, (asked, plain_request)) in main.iter().zip(&without).enumerate() {
        assert_eq!(
            neutral(&h, &asked.body),
            neutral(&plain, &plain_request.body),
            "main request {index} changed"
        );
    }
    // Logged beside the history, with its answer.
    let side: Vec<_> = h
        .events()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::SideQuestion(side) => Some(side),
            _ => None,
        })
        .collect();
    assert_eq!(side.len(), 1);
    assert_eq!(side[0].question, "why a.txt?");
    assert_eq!(side[0].answer, "Because you asked for one in a.txt.");
    assert!(side[0].prompt_tokens > 0);
    // `wright show` prints it as an aside.
    let shown = h.wright(&["show", &h.conversation_id()], &[]).await;
    let shown = stdout(&shown);
    assert!(
        shown.contains("user (aside): why a.txt?")
            && shown.contains("agent (aside): Because you asked for one in a.txt."),
        "{shown}"
    );
}
