//! A sandbox whose check says no, through the session API: the check runs while the
//! model server is asked what it is, and nothing starts in the sandbox before its yes. A
//! front end that says what the sandbox enforces awaits the verdict (`Session::checked`):
//! refused, the session is not made, nothing is left of the conversation, and the model
//! was never asked to act. (A test binary of its own: it sets the process's environment.)

mod common;

use std::os::unix::fs::PermissionsExt;
use wright_sandbox::SandboxMode;
use wright_session::Launcher;
use wright_session::Session;
use wright_session::Unattended;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

#[tokio::test]
async fn a_sandbox_refused_by_its_check_leaves_nothing_and_asks_nothing() {
    let data = tempfile::tempdir().unwrap();
    std::env::set_var("XDG_DATA_HOME", data.path());
    std::env::set_var("XDG_CACHE_HOME", data.path().join("cache"));
    std::env::set_var("XDG_CONFIG_HOME", data.path().join("config"));
    // A launcher that refuses, as one does on a kernel without what the policy needs.
    let bin = tempfile::tempdir().unwrap();
    let launcher = bin.path().join("refusing-launcher");
    std::fs::write(
        &launcher,
        "#!/bin/sh\necho 'wright sandbox: Landlock is not available on this kernel' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A plain directory: nothing runs in the sandbox before the first request, so the
    // check is the last thing awaited.
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "keep me\n").unwrap();
    let server = ScriptedServer::start(vec![
        reply().call("finish", serde_json::json!({"message": "done"}))
    ])
    .await
    .unwrap();

    let front = Unattended;
    let start = Session::locate(workspace.path(), &front).unwrap();
    let request = common::request(
        server.url(),
        SandboxMode::Landlock,
        Launcher::program(&launcher),
    )
    .await;
    let prepared = Session::prepare(start, request, &front)
        .await
        .and_then(Session::checked);
    let refused = match prepared {
        Ok(_) => panic!("a refused sandbox made a session"),
        Err(err) => format!("{err:#}"),
    };
    assert!(
        refused.contains("Landlock is not available on this kernel"),
        "{refused}"
    );
    assert!(
        server.chat_requests().is_empty(),
        "the model was asked to act"
    );
    let conversations = data.path().join("wright/conversations");
    let left: Vec<_> = std::fs::read_dir(&conversations)
        .map(|dir| dir.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("notes.txt")).unwrap(),
        "keep me\n"
    );
}
