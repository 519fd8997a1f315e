//! The server's conversations fall back between profiles as `wright run`'s do: the
//! session the server gets from its starter carries the chain, so a conversation whose
//! profile's server stays overloaded goes on with the next profile and finishes.

use super::*;
use crate::config::init_repo;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_conversation_goes_on_with_the_next_profile_after_a_503_storm() {
    let h = Harness::new();
    init_repo(h.repo());
    let (local, hosted) = crate::fallback::busy_local_and_hosted().await;
    h.user_config(&format!(
        "profile = \"local\"\nfallback = [\"hosted\"]\n[profiles.local]\nbase_url = \"{}\"\nmodel = \"test-model\"\n[profiles.hosted]\nbase_url = \"{}\"\nmodel = \"big-model\"\n",
        local.url(),
        hosted.url()
    ));
    let served = Served::start(&h, &[], &[]).await;
    // No server or model in the request: the configuration's profile, and its fallbacks.
    let id = served
        .accepted(json!({"workspace": h.repo(), "task": "say one then two"}))
        .await;
    served.wait_for(&id, &["finished"]).await;
    let events = served.events(&id, 1000).await;
    let switches: Vec<&Value> = of_kind(&events, "model_switch");
    assert_eq!(switches.len(), 1, "{events:#?}");
    let switch = switches[0];
    assert_eq!(
        (
            &switch["step"],
            &switch["reason"],
            &switch["from"]["profile"],
            &switch["to"]["profile"],
            &switch["to"]["model"]
        ),
        (
            &json!(2),
            &json!("overloaded"),
            &json!("local"),
            &json!("hosted"),
            &json!("big-model")
        ),
        "{switch}"
    );
    assert_eq!(local.chat_requests().len(), 5);
    assert_eq!(hosted.chat_requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_conversation_whose_profile_is_down_starts_on_the_next() {
    let h = Harness::new();
    init_repo(h.repo());
    // A port taken, then let go: nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!(
        "http://127.0.0.1:{}/v1",
        listener.local_addr().unwrap().port()
    );
    drop(listener);
    let hosted = ScriptedServer::start_with_models(
        vec![
            reply().call("terminal", json!({"command": "echo here"})),
            reply().call("finish", json!({"message": "done"})),
        ],
        vec!["big-model".to_string()],
    )
    .await
    .unwrap();
    h.user_config(&format!(
        "profile = \"local\"\nfallback = [\"hosted\"]\n[profiles.local]\nbase_url = \"{down}\"\nmodel = \"test-model\"\n[profiles.hosted]\nbase_url = \"{}\"\nmodel = \"big-model\"\n",
        hosted.url()
    ));
    let served = Served::start(&h, &[], &[]).await;
    let id = served
        .accepted(json!({"workspace": h.repo(), "task": "say here"}))
        .await;
    served.wait_for(&id, &["finished"]).await;
    let events = served.events(&id, 1000).await;
    let switch = events
        .iter()
        .find(|e| e["kind"] == "model_switch")
        .unwrap_or_else(|| panic!("{events:#?}"));
    assert_eq!(
        (
            &switch["step"],
            &switch["reason"],
            &switch["from"]["base_url"]
        ),
        (&json!(1), &json!("unreachable"), &json!(down)),
        "{switch}"
    );
    assert_eq!(hosted.chat_requests().len(), 2);
}
