//! A server's conversation goes on with the model and server it was created with — after
//! the server restarts too, from the server's own record (never from its log) — and with
//! another only when a request names it, logged as a switch the listing shows.

use super::confirm::risky_chmod;
use super::*;

/// A scripted server with `model` whose only reply is a call of `finish`.
async fn finishing(model: &str, message: &str) -> ScriptedServer {
    ScriptedServer::start_with_models(
        vec![reply().call("finish", json!({"message": message}))],
        vec![model.to_string()],
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_a_confirmation_goes_on_with_the_server_it_was_created_with() {
    let (h, risky, model) = risky_chmod("RAN-ON-ITS-SERVER", "export.py is executable").await;
    let risky = risky.as_str();
    // The server's own default: another server, with a model of the same name.
    let default = finishing("test-model", "wrong server").await;
    let default_url = default.url();
    let mut served = Served::start(&h, &["--base-url", &default_url], &[]).await;
    let id = served
        .create(h.repo(), "make export.py executable", &model.url())
        .await;
    served.wait_for(&id, &["awaiting_confirmation"]).await;
    served.child.start_kill().unwrap();
    served.child.wait().await.unwrap();

    let served = Served::start(&h, &["--base-url", &default_url], &[]).await;
    let body = served.wait_for(&id, &["awaiting_confirmation"]).await;
    assert_eq!(body["pending"]["arguments"]["command"], risky, "{body}");
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/confirm"),
            json!({"approve": true}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    served.wait_for(&id, &["finished"]).await;
    // The conversation's own server answered; the default was never asked.
    assert_eq!(model.chat_requests().len(), 2);
    assert!(default.chat_requests().is_empty());
    let events = served.events(&id, 1000).await;
    assert!(
        !events.iter().any(|e| e["kind"] == "model_switch"),
        "{events:#?}"
    );
    assert!(
        events.iter().any(|e| e["kind"] == "observation"
            && e["output"].as_str().unwrap().contains("RAN-ON-ITS-SERVER")),
        "{events:#?}"
    );

    // A message that names another model: it goes on there, the switch logged and the
    // listing naming the model it is on now.
    let other = finishing("other-model", "on the other model").await;
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/messages"),
            json!({"text": "and once more", "settings": {"base_url": other.url(), "model": "other-model"}}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    // Queued as the answer came: its end is this run's.
    let body = served.wait_for(&id, &["finished"]).await;
    assert_eq!(other.chat_requests().len(), 1);
    assert_eq!(body["model"], "other-model", "{body}");
    let (status, listed) = served.get("/api/conversations").await;
    assert_eq!(status, 200, "{listed}");
    let row = listed["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id.as_str())
        .cloned()
        .unwrap();
    assert_eq!(row["model"], "other-model", "{row}");
    let events = served.events(&id, 1000).await;
    let switches: Vec<&Value> = of_kind(&events, "model_switch");
    assert_eq!(switches.len(), 1, "{events:#?}");
    assert_eq!(
        (
            &switches[0]["reason"],
            &switches[0]["from"]["model"],
            &switches[0]["to"]["model"]
        ),
        (
            &json!("chosen"),
            &json!("test-model"),
            &json!("other-model")
        )
    );
    assert!(default.chat_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_created_on_the_default_is_refused_when_the_default_changed() {
    let (h, _, first) = risky_chmod("RAN", "done").await;
    let first_url = first.url();
    let mut served = Served::start(&h, &["--base-url", &first_url], &[]).await;
    // No server named: the server's default.
    let id = served
        .accepted(json!({"workspace": h.repo(), "task": "make export.py executable"}))
        .await;
    served.wait_for(&id, &["awaiting_confirmation"]).await;
    served.child.start_kill().unwrap();
    served.child.wait().await.unwrap();

    // Restarted on another default: the answer is refused with what to give, never run
    // on the new default.
    let second = finishing("test-model", "wrong server").await;
    let served = Served::start(&h, &["--base-url", &second.url()], &[]).await;
    let log = h.log_path();
    let before = std::fs::read(&log).unwrap();
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/confirm"),
            json!({"approve": true}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let mut error = String::new();
    for _ in 0..600 {
        let (_, body) = served.get(&format!("/api/conversations/{id}")).await;
        if let Some(said) = body["error"].as_str() {
            error = said.to_string();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        error.contains(&format!("\"base_url\": \"{first_url}\"")),
        "{error}"
    );
    assert!(second.requests().is_empty());
    assert_eq!(first.chat_requests().len(), 1);
    assert_eq!(std::fs::read(&log).unwrap(), before);
}
