//! Risky actions through the server (which asks before them by default): the
//! conversation waits, `awaiting_confirmation` with the action in `pending`, until
//! `POST …/confirm` approves (it runs) or rejects it (the model reads the reason); a
//! server killed while one waits shows it waiting again and takes the answer after.

use super::*;

/// Waits until the conversation waits for an answer about `command`; returns it.
pub(super) async fn waiting_for(served: &Served, id: &str, command: &str) -> Value {
    for _ in 0..1200 {
        let body = served.wait_for(id, &["awaiting_confirmation"]).await;
        if body["pending"]["arguments"]["command"] == command {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("conversation {id} never waited for {command}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_risky_action_waits_for_the_answer_through_the_route() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let approved = "chmod +x export.py && echo APPROVED-RAN";
    let rejected = "git push origin main";
    let model = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": approved})),
        reply().call("terminal", json!({"command": rejected})),
        reply().call(
            "finish",
            json!({"message": "export.py is executable; nothing pushed"}),
        ),
    ])
    .await
    .unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let id = served
        .create(
            h.repo(),
            "make export.py executable, then push",
            &model.url(),
        )
        .await;
    let route = format!("/api/conversations/{id}/confirm");

    let body = waiting_for(&served, &id, approved).await;
    assert_eq!(body["pending"]["tool"], "terminal", "{body}");
    assert_eq!(body["pending"]["risk"], "high", "{body}");
    assert_eq!(
        body["pending"]["reason"], "chmod: changes permissions",
        "{body}"
    );
    let first = body["pending"].clone();
    let (status, body) = served.post(&route, json!({"approve": true})).await;
    assert_eq!(status, 202, "{body}");

    // The scripted server gives both calls the same id, as some model servers do: an
    // answer to the first, late (a second tab), names its event and is refused.
    let body = waiting_for(&served, &id, rejected).await;
    assert_eq!(body["pending"]["call_id"], first["call_id"], "{body}");
    assert_ne!(body["pending"]["action"], first["action"], "{body}");
    let stale = json!({"call_id": first["call_id"], "action": first["action"], "approve": true});
    let (status, refused) = served.post(&route, stale).await;
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("waits for another action")),
        "{refused}"
    );
    let (status, body) = served
        .post(
            &route,
            json!({"approve": false, "reason": "pushing is for humans"}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    served.wait_for(&id, &["finished"]).await;

    let events = served.events(&id, 1000).await;
    let answers: Vec<(&str, Option<&str>)> = events
        .iter()
        .filter(|e| e["kind"] == "confirmation")
        .map(|e| (e["decision"].as_str().unwrap(), e["reason"].as_str()))
        .collect();
    assert_eq!(
        answers,
        vec![
            ("approved", None),
            ("rejected", Some("pushing is for humans"))
        ]
    );
    let outputs: Vec<&str> = events
        .iter()
        .filter(|e| e["kind"] == "observation")
        .filter_map(|e| e["output"].as_str())
        .collect();
    assert!(outputs[0].contains("APPROVED-RAN"), "{outputs:?}");
    assert!(outputs[1].contains("pushing is for humans"), "{outputs:?}");
    let last = model.chat_requests().last().unwrap().json();
    assert!(last["messages"]
        .to_string()
        .contains("pushing is for humans"));

    // Nothing waits now; an unknown conversation is not found; a bad body is refused.
    let (status, body) = served.post(&route, json!({"approve": true})).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("conflict")),
        "{body}"
    );
    let (status, _) = served
        .post("/api/conversations/nope/confirm", json!({"approve": true}))
        .await;
    assert_eq!(status, 404);
    let (status, body) = served.post(&route, json!({"approve": "yes"})).await;
    assert_eq!(status, 400, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_while_one_waits_shows_it_waiting_and_takes_the_answer() {
    let (h, risky, model) = risky_chmod("RAN-AFTER-RESTART", "export.py is executable").await;
    let risky = risky.as_str();
    let mut served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let id = served
        .create(h.repo(), "make export.py executable", &model.url())
        .await;
    waiting_for(&served, &id, risky).await;
    served.child.start_kill().unwrap();
    served.child.wait().await.unwrap();

    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let body = waiting_for(&served, &id, risky).await;
    assert_eq!(body["pending"]["risk"], "high", "{body}");
    // It never ran by itself.
    let events = served.events(&id, 1000).await;
    assert!(
        !events.iter().any(|e| e["kind"] == "observation"),
        "{events:?}"
    );
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/confirm"),
            json!({"approve": true}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    served.wait_for(&id, &["finished"]).await;
    let events = served.events(&id, 1000).await;
    assert!(
        events.iter().any(|e| e["kind"] == "observation"
            && e["output"].as_str().unwrap().contains("RAN-AFTER-RESTART")),
        "{events:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_stopped_while_one_waits_shows_it_waiting_after_its_restart_and_runs_it_once() {
    let (h, risky, model) = risky_chmod("RAN-ONCE", "export.py is executable").await;
    let risky = risky.as_str();
    let mut served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let id = served
        .create(h.repo(), "make export.py executable", &model.url())
        .await;
    waiting_for(&served, &id, risky).await;
    // Stopped as a service manager stops it: the run logs its stop and ends.
    let pid = served.child.id().unwrap().to_string();
    let signalled = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(signalled.success());
    served.child.wait().await.unwrap();

    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    // It waits, as its state says: not `stopped` beside an action pending.
    let (status, body) = served.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"], "awaiting_confirmation", "{body}");
    assert_eq!(body["pending"]["arguments"]["command"], risky, "{body}");
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/confirm"),
            json!({"approve": true}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    served.wait_for(&id, &["finished"]).await;
    let events = served.events(&id, 1000).await;
    let ran = events
        .iter()
        .filter(|e| {
            e["kind"] == "observation" && e["output"].as_str().unwrap().contains("RAN-ONCE")
        })
        .count();
    assert_eq!(ran, 1, "{events:#?}");
    let approved = events
        .iter()
        .filter(|e| e["kind"] == "confirmation" && e["decision"] == "approved")
        .count();
    assert_eq!(approved, 1, "{events:#?}");
    assert_eq!(model.chat_requests().len(), 2);
}

/// A workspace whose failing test needs `export.py` made executable, and a model that asks
/// for that risky command (which prints `marker`), then finishes with `message`.
pub(super) async fn risky_chmod(marker: &str, message: &str) -> (Harness, String, ScriptedServer) {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let risky = format!("chmod +x export.py && echo {marker}");
    let model = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": risky})),
        reply().call("finish", json!({"message": message})),
    ])
    .await
    .unwrap();
    (h, risky, model)
}
