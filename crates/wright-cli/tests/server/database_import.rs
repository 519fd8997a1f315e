//! `wright database import` against the replicas' leases: a conversation running on a
//! replica of the database, or on this machine without it, is refused with a clear
//! error and nothing copied; one that ended is copied, and a replica then goes on with it
//! (the import let its lease go).

use super::database::database;
use super::replicas::assert_contiguous;
use super::replicas::assert_database_holds_the_log;
use super::replicas::finished;
use super::Served;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::postgres::PASSWORD;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// A model whose first call waits for a file `go` in the clone, then finishes; and,
/// asked again, finishes again.
async fn waiting_model() -> ScriptedServer {
    ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "while [ ! -e go ]; do sleep 0.1; done; echo went"}),
        ),
        reply().call("finish", json!({"message": "went"})),
        reply().call("finish", json!({"message": "went on"})),
    ])
    .await
    .unwrap()
}

async fn import(h: &Harness, url: &str, id: &str) -> std::process::Output {
    h.wright(
        &["database", "import", id, "--database", url],
        &[("PGPASSWORD", PASSWORD)],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_is_refused_while_the_conversation_runs_anywhere() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    let h = Harness::new();
    failing_python_repo(h.repo());
    let workspaces = h.data.path().join("wright/workspaces");

    // Running on a replica of the database: refused, nothing copied.
    let leased = waiting_model().await;
    let replica = Served::start(&h, &["--database", url.as_str()], &env).await;
    let id = replica.create(h.repo(), "wait", &leased.url()).await;
    replica.wait_for_event(&id, "action").await;
    let before = replica.events(&id, 1000).await.len();
    let refused = import(&h, &url, &id).await;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("is being run by a replica"),
        "{}",
        stderr(&refused)
    );
    std::fs::write(workspaces.join(&id).join("go"), "").unwrap();
    finished(&replica, &id).await;
    assert!(replica.events(&id, 1000).await.len() > before);
    assert_database_holds_the_log(&h, &url, &id).await;

    // Running on this machine without the database: refused, nothing copied.
    let local = waiting_model().await;
    let file_based = Served::start(&h, &[], &[]).await;
    let id = file_based.create(h.repo(), "wait", &local.url()).await;
    file_based.wait_for_event(&id, "action").await;
    let refused = import(&h, &url, &id).await;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("is running on this machine"),
        "{}",
        stderr(&refused)
    );
    let listed = h.wright(&["show", &id, "--database", &url], &env).await;
    assert!(!listed.status.success(), "the refused import copied events");
    std::fs::write(workspaces.join(&id).join("go"), "").unwrap();
    finished(&file_based, &id).await;
    drop(file_based);

    // Ended: copied whole; its import lease let go, a replica goes on with it.
    let imported = import(&h, &url, &id).await;
    assert!(imported.status.success(), "{}", stderr(&imported));
    assert_database_holds_the_log(&h, &url, &id).await;
    let (status, body) = replica
        .post(
            &format!("/api/conversations/{id}/messages"),
            json!({"text": "go on"}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    replica.wait_for_event(&id, "message").await;
    finished(&replica, &id).await;
    let events = replica.events(&id, 1000).await;
    assert_contiguous(&events);
    assert_eq!(local.remaining(), 0);
    assert_database_holds_the_log(&h, &url, &id).await;
}
