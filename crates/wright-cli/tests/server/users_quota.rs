//! A user's limit of runs at once (`wright user limit NAME --max-running N`), across two
//! replicas on one database (a real PostgreSQL cluster of the test's own): a request over
//! it is answered 429 `quota_exceeded` naming the limit; two runs started at the same
//! moment on two replicas are never both admitted to the last place; the place is free
//! again once a run ends; the admin and other users are not held by it.

use super::database::database;
use super::users::admin;
use super::users::as_user;
use super::users::user;
use super::users::users_may_name_servers;
use super::Served;
use crate::common::Harness;
use serde_json::json;
use serde_json::Value;
use std::time::Duration;
use wright_testkit::failing_python_repo;
use wright_testkit::postgres::PASSWORD;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// A model that keeps its run busy for `seconds`, then finishes.
async fn busy(seconds: u32) -> ScriptedServer {
    ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": format!("sleep {seconds}; echo SLEPT")}),
        ),
        reply().call("finish", json!({"message": "slept"})),
    ])
    .await
    .unwrap()
}

/// The conversation once it ran or was refused: `Ok(())` when it ran to its end, the
/// error code when its run was refused.
async fn outcome(served: &Served, id: &str) -> Result<(), String> {
    let mut last = Value::Null;
    for _ in 0..1200 {
        let (status, body) = served.get(&format!("/api/conversations/{id}")).await;
        assert_eq!(status, 200, "{body}");
        if body["state"] == "finished" {
            return Ok(());
        }
        if let Some(code) = body["error_code"].as_str() {
            return Err(code.to_string());
        }
        last = body;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("conversation {id} never ended: {last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_never_both_admit_a_users_last_run() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    let h = Harness::new();
    let root = std::fs::canonicalize(h.data.path()).unwrap().join("work");
    let (first, second) = (root.join("one"), root.join("two"));
    for dir in [&first, &second] {
        std::fs::create_dir_all(dir).unwrap();
        failing_python_repo(dir);
    }
    let carol = user(&h, &url, "carol").await;
    let dave = user(&h, &url, "dave").await;
    for name in ["carol", "dave"] {
        admin(&h, &url, &["allow", name, "--root", root.to_str().unwrap()]).await;
    }
    admin(&h, &url, &["limit", "carol", "--max-running", "1"]).await;
    assert!(admin(&h, &url, &["show", "carol"])
        .await
        .contains("at most 1"));
    users_may_name_servers(&h);
    let args = ["--database", url.as_str()];
    let a = Served::start(&h, &args, &env).await;
    let b = Served::start(&h, &args, &env).await;
    let request = |dir: &std::path::Path, model: &ScriptedServer| {
        json!({"workspace": dir, "task": "sleep",
               "settings": {"base_url": model.url(), "model": "test-model"}})
    };

    // Both at once, one on each replica: one runs, the other is refused — at the door
    // (429) or, the two having passed it together, by the database as its run starts.
    let (one, two) = (busy(8).await, busy(8).await);
    let path = "/api/conversations";
    let (on_a, on_b) = tokio::join!(
        as_user(
            &a,
            &carol,
            reqwest::Method::POST,
            path,
            request(&first, &one)
        ),
        as_user(
            &b,
            &carol,
            reqwest::Method::POST,
            path,
            request(&second, &two)
        ),
    );
    let mut ran = 0;
    let mut refused = 0;
    for (served, (status, body)) in [(&a, on_a), (&b, on_b)] {
        match status {
            202 => match outcome(served, body["id"].as_str().unwrap()).await {
                Ok(()) => ran += 1,
                Err(code) => {
                    assert_eq!(code, "quota_exceeded");
                    refused += 1;
                }
            },
            429 => {
                assert_eq!(body["error"], "quota_exceeded", "{body}");
                refused += 1;
            }
            other => panic!("{other}: {body}"),
        }
    }
    assert_eq!((ran, refused), (1, 1), "one runs, one is refused");

    // While one runs, the next is answered 429 on either replica, naming the limit;
    // another user, and the admin, are not held.
    let long = busy(6).await;
    let (status, body) = as_user(
        &a,
        &carol,
        reqwest::Method::POST,
        path,
        request(&first, &long),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    let running = body["id"].as_str().unwrap().to_string();
    a.wait_for_event(&running, "action").await;
    let spare = busy(1).await;
    for served in [&a, &b] {
        let (status, body) = as_user(
            served,
            &carol,
            reqwest::Method::POST,
            path,
            request(&second, &spare),
        )
        .await;
        assert_eq!(status, 429, "{body}");
        assert_eq!(body["error"], "quota_exceeded", "{body}");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains("limit of 1 conversation"), "{message}");
    }
    let (status, body) = as_user(
        &b,
        &dave,
        reqwest::Method::POST,
        path,
        request(&second, &spare),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(outcome(&b, body["id"].as_str().unwrap()).await, Ok(()));

    // Once it ends, the place is free again.
    assert_eq!(outcome(&a, &running).await, Ok(()));
    let last = busy(1).await;
    let (status, body) = as_user(
        &b,
        &carol,
        reqwest::Method::POST,
        path,
        request(&second, &last),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(outcome(&b, body["id"].as_str().unwrap()).await, Ok(()));
    // Lifted: no limit.
    admin(&h, &url, &["limit", "carol", "--max-running", "none"]).await;
    assert!(admin(&h, &url, &["show", "carol"])
        .await
        .contains("no limit"));
}
