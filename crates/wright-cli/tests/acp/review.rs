//! An editor's conversations get the reviewer with fresh eyes as `wright run`'s and the
//! server's do: the `review.profile` key of the configuration gives a session's
//! conversation a second agent on that profile's server, whose verdict is logged before
//! the prompt is answered.

use super::*;
use pretty_assertions::assert_eq;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_conversation_is_reviewed_on_the_review_profile() {
    let h = Harness::new();
    let (local, hosted) = crate::common::fixed_and_reviewed(&h).await;
    let mut editor = Editor::start_with(&h, &[]);
    editor.initialize().await;
    let session = editor.new_session(h.repo()).await;
    let answer = editor.prompt(&session, "fix row_to_csv").await;
    assert_eq!(
        answer.response["result"]["stopReason"],
        "end_turn",
        "{}\n{}",
        answer.response,
        editor.said()
    );
    // The session's own log (the reviewer has a conversation of its own beside it).
    let log = h
        .data
        .path()
        .join("wright/conversations")
        .join(&session)
        .join("events.jsonl");
    let events = wright_protocol::parse_log(&std::fs::read_to_string(log).unwrap())
        .unwrap()
        .events;
    let looks: Vec<wright_protocol::SecondLook> = events
        .into_iter()
        .filter_map(|e| match e.body {
            wright_protocol::EventBody::SecondLook(look) => Some(look),
            _ => None,
        })
        .collect();
    assert_eq!(looks.len(), 1, "{looks:?}");
    assert_eq!(
        (looks[0].verdict, looks[0].model.as_str()),
        (Some(wright_protocol::Verdict::Approve), "judge-model"),
        "{looks:?}"
    );
    assert_eq!(hosted.remaining(), 0);
    assert_eq!(local.remaining(), 0);
    editor.close().await;
}
