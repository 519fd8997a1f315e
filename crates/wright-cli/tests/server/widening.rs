//! Settings that widen what a conversation's run reaches (`sandbox`, `allow_hosts`,
//! `base_url`, `agent`) are the admin's: a user's key (`wright user add`, with a
//! database) asking for one gets a 403 naming it, on every route that takes settings,
//! and nothing is created; the server's configuration may let users
//! (`[server] users_may`); the server key may, with a database and without.

use super::database::database;
use super::Served;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use serde_json::Value;
use wright_testkit::failing_python_repo;
use wright_testkit::postgres::PASSWORD;

/// A new user's key.
async fn user(h: &Harness, name: &str, url: &str) -> String {
    let added = h
        .wright(
            &["user", "add", name, "--database", url],
            &[("PGPASSWORD", PASSWORD)],
        )
        .await;
    assert!(added.status.success(), "{}", stderr(&added));
    stdout(&added).trim().to_string()
}

/// `POST path` with `body`, as the holder of `key`.
async fn post_as(served: &Served, key: &str, path: &str, body: Value) -> (u16, Value) {
    served
        .send(
            served
                .http
                .post(served.url(path))
                .bearer_auth(key)
                .json(&body),
        )
        .await
}

/// The ids of the conversations the holder of `key` sees.
async fn listed(served: &Served, key: &str) -> Vec<String> {
    let (status, list) = served
        .send(
            served
                .http
                .get(served.url("/api/conversations"))
                .bearer_auth(key),
        )
        .await;
    assert_eq!(status, 200, "{list}");
    list["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

/// A conversation of a user's: a repository URL nothing answers at (its clone fails, so
/// nothing of it runs), with `settings`.
fn users_request(settings: Value) -> Value {
    json!({"repository_url": "http://127.0.0.1:1/none.git", "task": "fix the tests",
        "settings": settings})
}

/// Each widening setting, as a user would ask for it.
fn widenings() -> Vec<(&'static str, Value)> {
    vec![
        ("sandbox", json!("none")),
        ("allow_hosts", json!(["evil.test:443"])),
        ("base_url", json!("http://127.0.0.1:9/v1")),
        ("agent", json!("other")),
    ]
}

fn assert_refused(status: u16, body: &Value, setting: &str) {
    assert_eq!(status, 403, "{setting}: {body}");
    assert_eq!(body["error"], "admin_only", "{setting}: {body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("settings.{setting}")),
        "{setting}: {message}"
    );
    assert!(message.contains("users_may"), "{setting}: {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_key_may_not_widen_what_a_run_reaches_and_nothing_is_created() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let h = Harness::new();
    failing_python_repo(h.repo());
    let alice = user(&h, "alice", &url).await;
    let own_server = "http://127.0.0.1:8/v1";
    let served = Served::start(
        &h,
        &["--database", &url, "--base-url", own_server],
        &[("PGPASSWORD", PASSWORD)],
    )
    .await;

    // Every widening setting, on the route that creates: refused, and nothing created.
    for (setting, value) in widenings() {
        let (status, body) = post_as(
            &served,
            &alice,
            "/api/conversations",
            users_request(json!({ setting: value })),
        )
        .await;
        assert_refused(status, &body, setting);
    }
    assert_eq!(listed(&served, &alice).await, Vec::<String>::new());
    assert_eq!(listed(&served, &served.key).await, Vec::<String>::new());

    // The server's own setup, or less, is hers to name.
    let (status, created) = post_as(
        &served,
        &alice,
        "/api/conversations",
        users_request(
            json!({"sandbox": "auto", "allow_hosts": [], "base_url": own_server,
            "max_steps": 3}),
        ),
    )
    .await;
    assert_eq!(status, 202, "{created}");
    let hers = created["id"].as_str().unwrap().to_string();

    // Going on with her own conversation: the same refusal on every route with settings.
    for (setting, value) in widenings() {
        let settings = json!({ setting: value });
        for (route, body) in [
            ("run", json!({ "settings": settings })),
            ("messages", json!({"text": "go on", "settings": settings})),
            ("condense", json!({ "settings": settings })),
            ("fork", json!({"message": "go on", "settings": settings})),
        ] {
            let (status, answer) = post_as(
                &served,
                &alice,
                &format!("/api/conversations/{hers}/{route}"),
                body,
            )
            .await;
            assert_refused(status, &answer, setting);
        }
    }
    assert_eq!(listed(&served, &alice).await, vec![hers.clone()]);

    // The server key is the admin's: it may.
    let (status, admins) = post_as(
        &served,
        &served.key,
        "/api/conversations",
        json!({"workspace": h.repo(), "task": "fix the tests",
            "settings": {"sandbox": "landlock", "allow_hosts": ["pypi.org"],
                "base_url": "http://127.0.0.1:9/v1"}}),
    )
    .await;
    assert_eq!(status, 202, "{admins}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_configuration_may_let_users_widen_what_it_names() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let h = Harness::new();
    let config = h.data.path().join("config/wright/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "[server]\nusers_may = [\"sandbox\"]\n").unwrap();
    let bob = user(&h, "bob", &url).await;
    let served = Served::start(&h, &["--database", &url], &[("PGPASSWORD", PASSWORD)]).await;
    let (status, created) = post_as(
        &served,
        &bob,
        "/api/conversations",
        users_request(json!({"sandbox": "landlock"})),
    )
    .await;
    assert_eq!(status, 202, "{created}");
    // What it does not name stays the admin's.
    let (status, body) = post_as(
        &served,
        &bob,
        "/api/conversations",
        users_request(json!({"sandbox": "landlock", "allow_hosts": ["evil.test"]})),
    )
    .await;
    assert_refused(status, &body, "allow_hosts");
    assert_eq!(listed(&served, &bob).await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_database_the_one_key_is_the_admins_and_may_widen() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let served = Served::start(&h, &[], &[]).await;
    let (status, created) = served
        .post(
            "/api/conversations",
            json!({"workspace": h.repo(), "task": "fix the tests",
                "settings": {"sandbox": "landlock", "allow_hosts": ["pypi.org"],
                    "base_url": "http://127.0.0.1:9/v1"}}),
        )
        .await;
    assert_eq!(status, 202, "{created}");
    let id = created["id"].as_str().unwrap();
    assert_eq!(listed(&served, &served.key).await, vec![id.to_string()]);
}
