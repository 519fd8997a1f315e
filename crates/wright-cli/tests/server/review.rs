//! The server's conversations get the reviewer with fresh eyes as `wright run`'s do: the
//! `review.profile` key of the configuration gives a new conversation a second agent on
//! that profile's server, whose verdict is logged before the conversation ends.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_conversation_is_reviewed_on_the_review_profile() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let local =
        ScriptedServer::start(vec![
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
        ),
        reply().call("finish", json!({"message": "row_to_csv joins the whole row"})),
    ])
        .await
        .unwrap();
    let hosted = ScriptedServer::start_with_models(
        vec![reply().call("verdict", json!({"verdict": "approve"}))],
        vec!["judge-model".to_string()],
    )
    .await
    .unwrap();
    h.user_config(&format!(
        "profile = \"local\"\n[review]\nprofile = \"hosted\"\n[profiles.local]\nbase_url = \"{}\"\nmodel = \"test-model\"\n[profiles.hosted]\nbase_url = \"{}\"\nmodel = \"judge-model\"\n",
        local.url(),
        hosted.url()
    ));
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
