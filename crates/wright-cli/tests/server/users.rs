//! Users of `wright serve --database` (a real PostgreSQL cluster of the test's own): a
//! user works on directories under the roots the admin allowed them, and a path anywhere
//! else — outside, missing, through a link or `..`, another user's root — is answered the
//! same; their secrets are theirs (set, listed, removed with their key, given to their
//! conversations only, never the server's own unless it shares one); an "always" answer to a confirmation
//! holds in its conversation only. Without a database, the server has one user, as before.

use super::database::database;
use super::Served;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use serde_json::Value;
use std::path::Path;
use wright_testkit::failing_python_repo;
use wright_testkit::postgres::PASSWORD;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

const ENV: [(&str, &str); 1] = [("PGPASSWORD", PASSWORD)];

/// A new user's key.
pub(super) async fn user(h: &Harness, url: &str, name: &str) -> String {
    let added = h
        .wright(&["user", "add", name, "--database", url], &ENV)
        .await;
    assert!(added.status.success(), "{}", stderr(&added));
    stdout(&added).trim().to_string()
}

/// `wright user ARGS --database URL`, which must succeed; what it printed.
pub(super) async fn admin(h: &Harness, url: &str, args: &[&str]) -> String {
    let mut all = vec!["user"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--database", url]);
    let output = h.wright(&all, &ENV).await;
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    stdout(&output)
}

/// `method path` with `key`, and a JSON body; the status and body.
pub(super) async fn as_user(
    served: &Served,
    key: &str,
    method: reqwest::Method,
    path: &str,
    body: Value,
) -> (u16, Value) {
    served
        .send(
            served
                .http
                .request(method, served.url(path))
                .bearer_auth(key)
                .json(&body),
        )
        .await
}

/// Lets users name their own model server (each conversation its scripted one).
pub(super) fn users_may_name_servers(h: &Harness) {
    let config = h.data.path().join("config/wright/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "[server]\nusers_may = [\"base_url\"]\n").unwrap();
}

fn text(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_works_under_their_roots_only_and_any_other_path_looks_the_same() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let h = Harness::new();
    let srv = std::fs::canonicalize(h.data.path()).unwrap().join("srv");
    let root = srv.join("alice");
    let project = root.join("project");
    let private = srv.join("private");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(private.join("keys")).unwrap();
    failing_python_repo(&project);
    std::os::unix::fs::symlink(&private, root.join("out")).unwrap();
    let alice = user(&h, &url, "alice").await;
    let bob = user(&h, &url, "bob").await;
    admin(&h, &url, &["allow", "alice", "--root", &text(&root)]).await;
    let shown = admin(&h, &url, &["show", "alice"]).await;
    assert!(shown.contains(&format!("root: {}", text(&root))), "{shown}");
    assert!(admin(&h, &url, &["show", "bob"])
        .await
        .contains("roots: none"));
    assert_eq!(admin(&h, &url, &["list"]).await.trim(), "alice\nbob");

    let model = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo IN-THE-ROOT"})),
        reply().call("finish", json!({"message": "looked"})),
    ])
    .await
    .unwrap();
    let served = Served::start(&h, &["--database", &url, "--base-url", &model.url()], &ENV).await;
    let create = |key: String, workspace: String| {
        let served = &served;
        let model = model.url();
        async move {
            let request = json!({"workspace": workspace, "task": "look around",
                "settings": {"base_url": model, "model": "test-model"}});
            let (status, body) = as_user(
                served,
                &key,
                reqwest::Method::POST,
                "/api/conversations",
                request,
            )
            .await;
            (status, body.to_string().replace(&workspace, "PATH"))
        }
    };

    // Under her root: hers, and it runs there.
    let (status, body) = create(alice.clone(), text(&project)).await;
    assert_eq!(status, 202, "{body}");
    let id: Value = serde_json::from_str(&body).unwrap();
    let id = id["id"].as_str().unwrap().to_string();
    served.wait_for(&id, &["finished"]).await;
    let events = serde_json::to_string(&served.events(&id, 1000).await).unwrap();
    assert!(events.contains("IN-THE-ROOT"), "{events}");
    // Her fork is hers: she reads it, bob does not, and it runs as hers.
    let (status, forked) = as_user(
        &served,
        &alice,
        reqwest::Method::POST,
        &format!("/api/conversations/{id}/fork"),
        json!({}),
    )
    .await;
    assert_eq!(status, 202, "{forked}");
    let fork = format!("/api/conversations/{}", forked["id"].as_str().unwrap());
    let (status, body) = as_user(&served, &alice, reqwest::Method::GET, &fork, json!({})).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = as_user(&served, &bob, reqwest::Method::GET, &fork, json!({})).await;
    assert_eq!(status, 404, "{body}");

    // Outside, missing, a file, through a link, by `..`, relative: one and the same
    // answer, so nothing is learnt of what exists on the server.
    let missing = srv.join("no-such-directory");
    let (status, refusal) = create(alice.clone(), text(&missing)).await;
    assert_eq!(status, 400, "{refusal}");
    assert!(refusal.contains("under one of your roots"), "{refusal}");
    let file = project.join("export.py");
    assert!(file.is_file());
    for path in [
        text(&private),
        text(&private.join("keys")),
        text(&root.join("out")),
        text(&root.join("out/keys")),
        format!("{}/../private", text(&root)),
        text(&file),
        "/etc".to_string(),
        "srv/alice/project".to_string(),
    ] {
        assert_eq!(
            create(alice.clone(), path.clone()).await,
            (400, refusal.clone()),
            "{path}"
        );
    }
    // Another user's root is not theirs: bob, who has none, gets the same answer.
    assert_eq!(
        create(bob.clone(), text(&project)).await,
        (400, refusal.clone())
    );
    // The admin names any directory, as before.
    let (status, _) = served
        .post(
            "/api/conversations",
            json!({"workspace": text(&private), "task": "x", "settings": {"base_url": "http://127.0.0.1:1", "model": "m"}}),
        )
        .await;
    assert_eq!(status, 202);

    // Taken away: her root is no more, and her path answers as any other.
    let removed = h
        .wright(
            &[
                "user",
                "disallow",
                "alice",
                "--root",
                &text(&root),
                "--database",
                &url,
            ],
            &ENV,
        )
        .await;
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert_eq!(
        create(alice.clone(), text(&project)).await,
        (400, refusal.clone())
    );
    let again = h
        .wright(
            &[
                "user",
                "disallow",
                "alice",
                "--root",
                &text(&root),
                "--database",
                &url,
            ],
            &ENV,
        )
        .await;
    assert!(!again.status.success());
    let nobody = h
        .wright(
            &[
                "user",
                "allow",
                "carol",
                "--root",
                &text(&root),
                "--database",
                &url,
            ],
            &ENV,
        )
        .await;
    assert!(
        stderr(&nobody).contains("no user named carol"),
        "{}",
        stderr(&nobody)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_secrets_are_theirs_alone_and_the_servers_are_not_given_them() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let h = Harness::new();
    let root = std::fs::canonicalize(h.data.path()).unwrap().join("work");
    std::fs::create_dir_all(&root).unwrap();
    failing_python_repo(&root);
    let alice = user(&h, &url, "alice").await;
    let bob = user(&h, &url, "bob").await;
    admin(&h, &url, &["allow", "alice", "--root", &text(&root)]).await;
    // The server's own secret, which its own conversations get.
    let stored = h
        .wright_with_input(&["secrets", "set", "SERVER_TOKEN"], b"server-value-9876")
        .await;
    assert!(stored.status.success(), "{}", stderr(&stored));
    // And one it shares with users' conversations.
    let stored = h
        .wright_with_input(&["secrets", "set", "SHARED_TOKEN"], b"shared-value-2468")
        .await;
    assert!(stored.status.success(), "{}", stderr(&stored));
    let look = "case \"$ALICE_TOKEN\" in alice-*) echo ALICE-GIVEN;; esac; \
                [ -z \"$BOB_TOKEN\" ] && echo BOB-ABSENT; \
                [ -z \"$SERVER_TOKEN\" ] && echo SERVER-ABSENT; \
                [ -n \"$SHARED_TOKEN\" ] && echo SHARED-GIVEN; \
                echo \"shown: $ALICE_TOKEN\"";
    let model = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": look})),
        reply().call("finish", json!({"message": "looked"})),
    ])
    .await
    .unwrap();
    let served = Served::start(
        &h,
        &[
            "--database",
            &url,
            "--base-url",
            &model.url(),
            "--secret",
            "SERVER_TOKEN",
            "--share-secret",
            "SHARED_TOKEN",
        ],
        &ENV,
    )
    .await;
    let put = |key: String, name: &str, value: &str| {
        let served = &served;
        let path = format!("/api/secrets/{name}");
        let body = json!({ "value": value });
        async move { as_user(served, &key, reqwest::Method::PUT, &path, body).await }
    };
    let names = |key: String| {
        let served = &served;
        async move {
            let (status, body) = as_user(
                served,
                &key,
                reqwest::Method::GET,
                "/api/secrets",
                json!({}),
            )
            .await;
            assert_eq!(status, 200, "{body}");
            body["names"].clone()
        }
    };
    assert_eq!(
        put(alice.clone(), "ALICE_TOKEN", "alice-secret-4321")
            .await
            .0,
        204
    );
    assert_eq!(put(alice.clone(), "OLD_ONE", "to-be-removed").await.0, 204);
    assert_eq!(
        put(bob.clone(), "BOB_TOKEN", "bob-secret-5678").await.0,
        204
    );
    // A bad name, an empty value, a name the shell's own: refused.
    assert_eq!(put(alice.clone(), "1BAD", "x").await.0, 400);
    assert_eq!(put(alice.clone(), "EMPTY", "").await.0, 400);
    assert_eq!(put(alice.clone(), "PATH", "x").await.0, 400);
    assert_eq!(
        names(alice.clone()).await,
        json!(["ALICE_TOKEN", "OLD_ONE"])
    );
    assert_eq!(names(bob.clone()).await, json!(["BOB_TOKEN"]));
    // Bob cannot remove hers, nor tell it from a name nobody has.
    let (status, theirs) = as_user(
        &served,
        &bob,
        reqwest::Method::DELETE,
        "/api/secrets/OLD_ONE",
        json!({}),
    )
    .await;
    let (_, nobodys) = as_user(
        &served,
        &bob,
        reqwest::Method::DELETE,
        "/api/secrets/NO_ONES",
        json!({}),
    )
    .await;
    assert_eq!(status, 404, "{theirs}");
    assert_eq!(
        theirs.to_string().replace("OLD_ONE", "NAME"),
        nobodys.to_string().replace("NO_ONES", "NAME")
    );
    let (status, _) = as_user(
        &served,
        &alice,
        reqwest::Method::DELETE,
        "/api/secrets/OLD_ONE",
        json!({}),
    )
    .await;
    assert_eq!(status, 204);
    assert_eq!(names(alice.clone()).await, json!(["ALICE_TOKEN"]));
    // The server key's secrets are the server's store, not these routes.
    let (status, body) = served.get("/api/secrets").await;
    assert_eq!(status, 403, "{body}");

    // Her conversation's shell has hers, not bob's, not the server's; masked when shown.
    let (status, created) = as_user(
        &served,
        &alice,
        reqwest::Method::POST,
        "/api/conversations",
        json!({"workspace": root, "task": "look", "settings": {"base_url": model.url(), "model": "test-model"}}),
    )
    .await;
    assert_eq!(status, 202, "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    served.wait_for(&id, &["finished"]).await;
    let events = serde_json::to_string(&served.events(&id, 1000).await).unwrap();
    for said in [
        "ALICE-GIVEN",
        "BOB-ABSENT",
        "SERVER-ABSENT",
        "SHARED-GIVEN",
        "shown: ",
    ] {
        assert!(events.contains(said), "{said}: {events}");
    }
    for value in [
        "alice-secret-4321",
        "bob-secret-5678",
        "server-value-9876",
        "shared-value-2468",
    ] {
        assert!(!events.contains(value), "{value} in the events");
    }
    let log = h
        .data
        .path()
        .join("wright/conversations")
        .join(&id)
        .join("events.jsonl");
    let logged = std::fs::read_to_string(log).unwrap();
    assert!(!logged.contains("alice-secret-4321"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_always_answer_holds_in_its_own_conversation_not_another_users() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let h = Harness::new();
    let srv = std::fs::canonicalize(h.data.path()).unwrap().join("srv");
    let (mine, theirs) = (srv.join("alice"), srv.join("bob"));
    for dir in [&mine, &theirs] {
        std::fs::create_dir_all(dir).unwrap();
        failing_python_repo(dir);
    }
    let alice = user(&h, &url, "alice").await;
    let bob = user(&h, &url, "bob").await;
    admin(&h, &url, &["allow", "alice", "--root", &text(&mine)]).await;
    admin(&h, &url, &["allow", "bob", "--root", &text(&theirs)]).await;
    let risky = |n: u32| format!("chmod +x export.py && echo RAN-{n}");
    let alices_model = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": risky(1)})),
        reply().call("terminal", json!({"command": risky(2)})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let bobs_model = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": risky(3)})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    users_may_name_servers(&h);
    let served = Served::start(&h, &["--database", &url], &ENV).await;
    let start = |key: String, dir: &Path, model: String| {
        let served = &served;
        let dir = text(dir);
        async move {
            let (status, created) = as_user(
                served,
                &key,
                reqwest::Method::POST,
                "/api/conversations",
                json!({"workspace": dir, "task": "chmod", "settings": {"base_url": model, "model": "test-model"}}),
            )
            .await;
            assert_eq!(status, 202, "{created}");
            created["id"].as_str().unwrap().to_string()
        }
    };
    let hers = start(alice.clone(), &mine, alices_model.url()).await;
    super::confirm::waiting_for(&served, &hers, &risky(1)).await;
    // Bob cannot answer hers: as if it did not exist.
    let confirm = |id: &str| format!("/api/conversations/{id}/confirm");
    let always = json!({"approve": true, "always": true});
    let (status, _) = as_user(
        &served,
        &bob,
        reqwest::Method::POST,
        &confirm(&hers),
        always.clone(),
    )
    .await;
    assert_eq!(status, 404);
    let (status, body) = as_user(
        &served,
        &alice,
        reqwest::Method::POST,
        &confirm(&hers),
        always,
    )
    .await;
    assert_eq!(status, 202, "{body}");
    // Her second call of the tool runs unasked.
    served.wait_for(&hers, &["finished"]).await;
    let events = serde_json::to_string(&served.events(&hers, 1000).await).unwrap();
    assert!(events.contains("RAN-2"), "{events}");

    // Bob's conversation, same tool, same command: asked again.
    let his = start(bob.clone(), &theirs, bobs_model.url()).await;
    let waiting = super::confirm::waiting_for(&served, &his, &risky(3)).await;
    assert_eq!(waiting["pending"]["tool"], "terminal", "{waiting}");
    let (status, body) = as_user(
        &served,
        &bob,
        reqwest::Method::POST,
        &confirm(&his),
        json!({"approve": true}),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    served.wait_for(&his, &["finished"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_database_the_server_has_one_user_as_before() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let served = Served::start(&h, &[], &[]).await;
    // The key's routes as ever; users' secrets are not the server key's.
    let (status, _) = served.get("/api/conversations").await;
    assert_eq!(status, 200);
    let (status, body) = served.get("/api/secrets").await;
    assert_eq!(status, 403, "{body}");
    // Any other key is a wrong one: there are no users.
    let (status, _) = as_user(
        &served,
        &"0".repeat(64),
        reqwest::Method::GET,
        "/api/secrets",
        json!({}),
    )
    .await;
    assert_eq!(status, 401);
    // The admin names a workspace anywhere.
    let (status, body) = served
        .post(
            "/api/conversations",
            json!({"workspace": h.repo(), "task": "x", "settings": {"base_url": "http://127.0.0.1:1", "model": "m"}}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    // Rights need the database.
    let refused = h
        .wright(&["user", "allow", "alice", "--root", "/tmp"], &[])
        .await;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("needs the database"),
        "{}",
        stderr(&refused)
    );
}
