//! The server's conversations get the reviewer with fresh eyes as `wright run`'s do: the
//! `review.profile` key of the configuration gives a new conversation a second agent on
//! that profile's server, whose verdict is logged before the conversation ends.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_conversation_is_reviewed_on_the_review_profile() {
    let h = Harness::new();
    let (local, hosted) = crate::common::fixed_and_reviewed(&h).await;
    let served = Served::start(&h, &[], &[]).await;
    let id = served
        .accepted(json!({"workspace": h.repo(), "task": "fix row_to_csv"}))
        .await;
    served.wait_for(&id, &["finished"]).await;
    let events = served.events(&id, 1000).await;
    let looks: Vec<&Value> = of_kind(&events, "second_look");
    assert_eq!(looks.len(), 1, "{events:#?}");
    assert_eq!(
        (&looks[0]["verdict"], &looks[0]["model"]),
        (&json!("approve"), &json!("judge-model")),
        "{}",
        looks[0]
    );
    assert_eq!(hosted.remaining(), 0);
    assert_eq!(local.remaining(), 0);
}
