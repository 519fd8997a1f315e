//! The log: out of the agent's reach, and on resume not trusted for where to work or
//! which server to call. A forged `start` event (another workspace, another server) must
//! neither move the agent outside its workspace nor send the user's key anywhere.

use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use serde_json::Value;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// Runs one short conversation (stopped by its step limit, so it can be resumed), then
/// rewrites its start event with `forge`.
async fn forged_conversation(h: &Harness, forge: impl Fn(&mut Value)) -> String {
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo one"})),
        reply().call("terminal", json!({"command": "echo two"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "short", &["--max-steps", "1"]).await;
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let path = h.log_path();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut start: Value = serde_json::from_str(&lines[0]).unwrap();
    forge(&mut start);
    lines[0] = start.to_string();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    h.conversation_id()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_workspace_is_refused() {
    let h = Harness::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let moved = elsewhere.path().display().to_string();
    let id = forged_conversation(&h, |start| start["workspace"] = json!(moved)).await;
    let server = ScriptedServer::start(vec![reply().call("finish", json!({"message": "x"}))])
        .await
        .unwrap();
    let output = h.resume(&server.url(), &id, "go on").await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("workspace"), "{}", stderr(&output));
    assert_eq!(server.chat_requests().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_server_never_receives_a_request_or_the_key() {
    let h = Harness::new();
    let forged = ScriptedServer::start(vec![reply().call("finish", json!({"message": "x"}))])
        .await
        .unwrap();
    let forged_url = forged.url();
    let id = forged_conversation(&h, |start| start["base_url"] = json!(forged_url)).await;
    // The server the user names now is the one used.
    let chosen = ScriptedServer::start(vec![reply().call("finish", json!({"message": "ok"}))])
        .await
        .unwrap();
    let output = h
        .wright(
            &["resume", &id, "go on"],
            &[
                ("OPENAI_BASE_URL", chosen.url().as_str()),
                ("OPENAI_API_KEY", "sk-user-key"),
            ],
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(chosen.remaining(), 0);
    // The log says it went on with the server named, not the forged one.
    let switched = h.events().into_iter().find_map(|e| match e.body {
        wright_protocol::EventBody::ModelSwitch(switch) => Some(switch),
        _ => None,
    });
    assert_eq!(
        switched.map(|s| (s.from.base_url, s.to.base_url)),
        Some((forged_url.clone(), chosen.url()))
    );
    // With nothing named, the logged server is not taken on the log's word.
    let output = h
        .wright(
            &["resume", &id, "again"],
            &[("OPENAI_API_KEY", "sk-user-key")],
        )
        .await;
    assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!("pass --base-url {}", chosen.url())),
        "the user is told how to go back to the server it is on: {}",
        stderr(&output)
    );
    assert!(
        forged.requests().is_empty(),
        "the forged server was contacted"
    );
    assert_eq!(forged.remaining(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_holding_the_logs_is_refused() {
    // A workspace that contains wright's data (say `-C ~`) would let the agent write its
    // own log.
    let h = Harness::new();
    let data = h.repo().join(".local/share");
    let server = ScriptedServer::start(vec![reply().call("finish", json!({"message": "x"}))])
        .await
        .unwrap();
    let url = server.url();
    let output = h
        .wright(
            &["run", "--base-url", &url, "--model", "test-model", "x"],
            &[("XDG_DATA_HOME", &data.display().to_string())],
        )
        .await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("contains wright's data (logs, clones, what you allowed)"),
        "{}",
        stderr(&output)
    );
    assert!(server.chat_requests().is_empty());

    // Nor may it lie inside wright's data (a conversation's directory holds its record),
    // nor hold the user's configuration, which wright reads as the user's own word.
    let h = Harness::new();
    let inside = h.data.path().join("wright/conversations");
    std::fs::create_dir_all(&inside).unwrap();
    let output = h
        .wright(
            &[
                "run",
                "-C",
                &inside.display().to_string(),
                "--base-url",
                &url,
                "--model",
                "test-model",
                "x",
            ],
            &[],
        )
        .await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("is inside wright's data"),
        "{}",
        stderr(&output)
    );
    let config = h.repo().join("dotconfig");
    let output = h
        .wright(
            &["run", "--base-url", &url, "--model", "test-model", "x"],
            &[("XDG_CONFIG_HOME", &config.display().to_string())],
        )
        .await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("contains your wright configuration"),
        "{}",
        stderr(&output)
    );
    assert!(server.chat_requests().is_empty());
}
