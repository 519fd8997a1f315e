//! `wright serve --database`: a real PostgreSQL cluster of the test's own
//! (`wright_testkit::postgres`), the real binary and the scripted model. Every event of a
//! conversation is in the database, as its log file has it byte for byte; `wright show`
//! reads either; a conversation goes out of the database into a file again; users get
//! their key once; a password in the URL is refused before anything connects.

use super::fixing_script;
use super::Served;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use wright_testkit::failing_python_repo;
use wright_testkit::postgres::Postgres;
use wright_testkit::postgres::PASSWORD;
use wright_testkit::ScriptedServer;

/// A cluster of the test's own with an empty database `wright`, and its URL (no
/// password: that comes from `PGPASSWORD`); `None` (said loudly) without PostgreSQL.
pub(super) fn database() -> Option<(Postgres, String)> {
    let cluster = Postgres::start()?;
    cluster.create_database("wright");
    let url = cluster.url("wright");
    Some((cluster, url))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_of_a_run_is_in_the_database_as_in_its_log() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(fixing_script()).await.unwrap();
    let served = Served::start(&h, &["--database", &url], &env).await;
    let id = served
        .create(h.repo(), "the tests fail, fix it", &model.url())
        .await;
    served.wait_for(&id, &["finished"]).await;

    // `wright show` prints the same from the file and from the database.
    let from_file = h.wright(&["show", &id], &[]).await;
    let from_database = h.wright(&["show", &id, "--database", &url], &env).await;
    assert!(from_file.status.success(), "{}", stderr(&from_file));
    assert!(from_database.status.success(), "{}", stderr(&from_database));
    assert!(
        stdout(&from_file).contains("finish"),
        "{}",
        stdout(&from_file)
    );
    assert_eq!(stdout(&from_database), stdout(&from_file));

    // Out of the database into a new log file: the same bytes as the log.
    let log = h
        .data
        .path()
        .join("wright/conversations")
        .join(&id)
        .join("events.jsonl");
    let logged = std::fs::read_to_string(&log).unwrap();
    let refused = h
        .wright(&["database", "export", &id, "--database", &url], &env)
        .await;
    assert!(!refused.status.success(), "a log was overwritten");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), logged);
    std::fs::rename(&log, log.with_extension("kept")).unwrap();
    let exported = h
        .wright(&["database", "export", &id, "--database", &url], &env)
        .await;
    assert!(exported.status.success(), "{}", stderr(&exported));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), logged);
    // And in again: nothing to add, nothing refused.
    let imported = h
        .wright(&["database", "import", &id, "--database", &url], &env)
        .await;
    assert!(imported.status.success(), "{}", stderr(&imported));
    let lines = logged.lines().count();
    assert!(
        stdout(&imported).contains(&format!("{lines} events")),
        "{}",
        stdout(&imported)
    );
}

#[tokio::test]
async fn a_file_conversation_moves_into_the_database_and_a_changed_log_is_refused() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(fixing_script()).await.unwrap();
    let ran = h
        .wright(
            &[
                "run",
                "--base-url",
                &model.url(),
                "--model",
                "test-model",
                "the tests fail, fix it",
            ],
            &[],
        )
        .await;
    assert!(ran.status.success(), "{}", stderr(&ran));
    let id = h.conversation_id();
    let imported = h
        .wright(&["database", "import", &id, "--database", &url], &env)
        .await;
    assert!(imported.status.success(), "{}", stderr(&imported));
    let shown = h.wright(&["show", &id, "--database", &url], &env).await;
    assert_eq!(stdout(&shown), stdout(&h.wright(&["show", &id], &[]).await));
    // A log whose history differs from the database's is not merged into it.
    let log = h.log_path();
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(
        &log,
        text.replacen("the tests fail, fix it", "something else", 1),
    )
    .unwrap();
    let refused = h
        .wright(&["database", "import", &id, "--database", &url], &env)
        .await;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("differs from its log"),
        "{}",
        stderr(&refused)
    );
}

#[tokio::test]
async fn a_user_gets_a_key_once_and_a_url_with_a_password_is_refused() {
    let h = Harness::new();
    // Refused before any connection: nothing listens at this address.
    let refused = h
        .wright(
            &[
                "user",
                "ls",
                "--database",
                "postgres://wright:secret@127.0.0.1:1/wright",
            ],
            &[],
        )
        .await;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("PGPASSWORD"),
        "{}",
        stderr(&refused)
    );
    assert!(!stderr(&refused).contains("secret"), "{}", stderr(&refused));

    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    let added = h
        .wright(&["user", "add", "alice", "--database", &url], &env)
        .await;
    assert!(added.status.success(), "{}", stderr(&added));
    let key = stdout(&added).trim().to_string();
    assert_eq!(key.len(), 64, "{key}");
    assert!(key.bytes().all(|b| b.is_ascii_hexdigit()), "{key}");
    let again = h
        .wright(&["user", "add", "alice", "--database", &url], &env)
        .await;
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("exists already"),
        "{}",
        stderr(&again)
    );
    let listed = h.wright(&["user", "ls", "--database", &url], &env).await;
    assert_eq!(stdout(&listed).trim(), "alice");
    // Without the password, a clear refusal.
    let locked = h.wright(&["user", "ls", "--database", &url], &[]).await;
    assert!(!locked.status.success());
    assert!(stderr(&locked).contains("password"), "{}", stderr(&locked));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_key_answers_another_users_conversation_as_an_unknown_one_on_every_route() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    let h = Harness::new();
    failing_python_repo(h.repo());
    let key_of = |output: std::process::Output| {
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output).trim().to_string()
    };
    let alice = key_of(
        h.wright(&["user", "add", "alice", "--database", &url], &env)
            .await,
    );
    let bob = key_of(
        h.wright(&["user", "add", "bob", "--database", &url], &env)
            .await,
    );
    let model = ScriptedServer::start(fixing_script()).await.unwrap();
    // The model server is the server's own: a user may name only that one.
    let served = Served::start(&h, &["--database", &url, "--base-url", &model.url()], &env).await;
    let as_user = |key: &str, method: reqwest::Method, path: &str| {
        served
            .http
            .request(method, served.url(path))
            .bearer_auth(key)
            .json(&serde_json::json!({}))
    };

    // The admin's conversation (run to its end, in the database) and one of alice's
    // (its clone fails: it never logs, the server alone knows it).
    let admins = served
        .create(h.repo(), "the tests fail, fix it", &model.url())
        .await;
    served.wait_for(&admins, &["finished"]).await;
    let request = serde_json::json!({"repository_url": "http://127.0.0.1:1/none.git",
        "task": "anything", "settings": {"base_url": model.url(), "model": "test-model"}});
    let (status, created) = served
        .send(as_user(&alice, reqwest::Method::POST, "/api/conversations").json(&request))
        .await;
    assert_eq!(status, 202, "{created}");
    let alices = created["id"].as_str().unwrap().to_string();
    // A directory on the server is the admin's to name, unless under a root of hers
    // (`users.rs`): she has none.
    let (status, refused) = served
        .send(
            as_user(&alice, reqwest::Method::POST, "/api/conversations")
                .json(&serde_json::json!({"workspace": h.repo(), "task": "x"})),
        )
        .await;
    assert_eq!(status, 400, "{refused}");

    // Each sees their own in the list; the admin sees both.
    let listed = |key: String| {
        let served = &served;
        async move {
            let (status, list) = served
                .send(
                    served
                        .http
                        .get(served.url("/api/conversations"))
                        .bearer_auth(key),
                )
                .await;
            assert_eq!(status, 200, "{list}");
            let mut ids: Vec<String> = list["conversations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap().to_string())
                .collect();
            ids.sort();
            ids
        }
    };
    assert_eq!(listed(alice.clone()).await, vec![alices.clone()]);
    assert_eq!(listed(bob.clone()).await, Vec::<String>::new());
    let mut both = vec![admins.clone(), alices.clone()];
    both.sort();
    assert_eq!(listed(served.key.clone()).await, both);
    let (status, own) = served
        .send(as_user(
            &alice,
            reqwest::Method::GET,
            &format!("/api/conversations/{alices}"),
        ))
        .await;
    assert_eq!(status, 200, "{own}");

    // Every conversation route of the API, and the socket: another's id is answered as an
    // id nobody has, to bob, and the admin's as well.
    let (status, document) = served.get("/openapi.json").await;
    assert_eq!(status, 200);
    let unknown = format!("{}0", &alices[..alices.len() - 1]);
    let unknown = if unknown == alices {
        format!("{}1", &alices[..alices.len() - 1])
    } else {
        unknown
    };
    let mut tried = 0;
    let mut routes: Vec<(reqwest::Method, String)> =
        vec![(reqwest::Method::GET, "/sockets/events/{id}".into())];
    for (path, methods) in document["paths"].as_object().unwrap() {
        if !path.contains("{id}") {
            continue;
        }
        for method in methods.as_object().unwrap().keys() {
            routes.push((method.to_uppercase().parse().unwrap(), path.clone()));
        }
    }
    for (method, path) in &routes {
        let answer = |id: &str| {
            let path = path.replace("{id}", id);
            let method = method.clone();
            let id = id.to_string();
            let served = &served;
            let bob = bob.clone();
            async move {
                let (status, body) = served
                    .send(
                        served
                            .http
                            .request(method, served.url(&path))
                            .bearer_auth(&bob)
                            .json(&serde_json::json!({})),
                    )
                    .await;
                (status, body.to_string().replace(&id, "ID"))
            }
        };
        let nobodys = answer(&unknown).await;
        assert_eq!(nobodys.0, 404, "{method} {path}: {}", nobodys.1);
        assert_eq!(answer(&alices).await, nobodys, "{method} {path} on alice's");
        assert_eq!(
            answer(&admins).await,
            nobodys,
            "{method} {path} on the admin's"
        );
        tried += 1;
    }
    assert!(tried >= 10, "only {tried} routes tried: {routes:?}");
    // Nothing of alice's changed: still hers, still listed, not removed.
    assert_eq!(listed(alice.clone()).await, vec![alices.clone()]);
    // The admin's routes are not a user's.
    for path in [
        "/api/doctor",
        "/v1/models",
        "/api/settings",
        "/api/automations",
        "/api/agents",
    ] {
        let (status, body) = served.send(as_user(&bob, reqwest::Method::GET, path)).await;
        assert_eq!(status, 403, "{path}: {body}");
    }
    // A wrong key is still a wrong key.
    let (status, _) = served
        .send(as_user(
            &"0".repeat(64),
            reqwest::Method::GET,
            "/api/conversations",
        ))
        .await;
    assert_eq!(status, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_comes_from_the_configuration_and_never_its_password() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let h = Harness::new();
    let config = h.data.path().join("config/wright/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, format!("[server]\ndatabase = \"{url}\"\n")).unwrap();
    let env = [("PGPASSWORD", PASSWORD)];
    // No --database: the configuration's, with the password from PGPASSWORD.
    let added = h.wright(&["user", "add", "carol"], &env).await;
    assert!(added.status.success(), "{}", stderr(&added));
    let listed = h.wright(&["user", "ls", "--database", &url], &env).await;
    assert_eq!(stdout(&listed).trim(), "carol");
    let served = Served::start(&h, &[], &env).await;
    let (status, _) = served.get("/api/conversations").await;
    assert_eq!(status, 200);
    drop(served);
    // Or from a password file.
    let file = h.data.path().join("pgpass");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    let listed = h
        .wright(
            &[
                "user",
                "ls",
                "--database-password-file",
                file.to_str().unwrap(),
            ],
            &[],
        )
        .await;
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert_eq!(stdout(&listed).trim(), "carol");
    // A password written into the configuration's URL is refused, and not repeated.
    let with_password = url.replacen("://wright@", "://wright:hunter2-in-clear@", 1);
    assert_ne!(with_password, url, "{url}");
    std::fs::write(
        &config,
        format!("[server]\ndatabase = \"{with_password}\"\n"),
    )
    .unwrap();
    let refused = h.wright(&["user", "ls"], &env).await;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("PGPASSWORD"),
        "{}",
        stderr(&refused)
    );
    assert!(
        !stderr(&refused).contains("hunter2"),
        "{}",
        stderr(&refused)
    );
}
