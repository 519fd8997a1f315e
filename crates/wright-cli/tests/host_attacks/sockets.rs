//! Unix sockets by path: Landlock does not cover `connect()`, so a host socket the agent
//! can name (a tmux server, an ssh-agent, Docker, D-Bus) would run or sign things for it
//! outside the sandbox. None may be reachable, at any level.

use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// Python that connects to PATH and prints CONNECTED or BLOCKED.
fn connect(path: &str) -> String {
    format!(
        "python3 -c \"import socket\ntry:\n    s = socket.socket(socket.AF_UNIX)\n    s.connect('{path}'); s.send(b'hi'); print('CONNECTED')\nexcept OSError:\n    print('BLOCKED')\""
    )
}

async fn sockets_are_unreachable(sandbox: &str) {
    let h = Harness::new();
    let home = tempfile::tempdir().unwrap();
    let in_tmp = tempfile::tempdir().unwrap();
    // Where host sockets live: /tmp (tmux, X11, ssh-agent), the home (gpg-agent), /run.
    let mut places: Vec<PathBuf> = vec![
        in_tmp.path().join("tmux.sock"),
        home.path().join(".gnupg-S.gpg-agent"),
    ];
    let run_dir = PathBuf::from(format!("/run/wright-test-{}", std::process::id()));
    if std::fs::create_dir_all(&run_dir).is_ok() {
        places.push(run_dir.join(format!("{sandbox}.sock")));
    }
    let listeners: Vec<UnixListener> = places
        .iter()
        .map(|path| {
            let listener = UnixListener::bind(path).unwrap();
            listener.set_nonblocking(true).unwrap();
            listener
        })
        .collect();
    let mut script: Vec<_> = places
        .iter()
        .map(|p| {
            reply().call(
                "terminal",
                json!({"command": connect(&p.display().to_string())}),
            )
        })
        .collect();
    // Pipes between the agent's own processes still work.
    script.push(reply().call(
        "terminal",
        json!({"command": "python3 -c \"import socket\na, b = socket.socketpair(); a.send(b'ok'); print(b.recv(2).decode())\""}),
    ));
    script.push(reply().call("finish", json!({"message": "done"})));
    let server = ScriptedServer::start(script).await.unwrap();
    let output = h
        .wright(
            &[
                "run",
                "--base-url",
                &server.url(),
                "--model",
                "test-model",
                "--sandbox",
                sandbox,
                "reach host sockets",
            ],
            &[
                ("HOME", &home.path().display().to_string()),
                (
                    "PYENV_ROOT",
                    &std::env::var("PYENV_ROOT").unwrap_or_default(),
                ),
            ],
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let obs = observations(&h.events());
    for (place, observation) in places.iter().zip(&obs) {
        assert_eq!(
            observation["output"],
            "BLOCKED",
            "{} ({sandbox})",
            place.display()
        );
    }
    assert_eq!(obs[places.len()]["output"], "ok");
    for (place, listener) in places.iter().zip(&listeners) {
        assert!(
            listener.accept().is_err(),
            "{} was reached",
            place.display()
        );
    }
    let _ = std::fs::remove_dir_all(&run_dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_sockets_are_unreachable_with_namespaces() {
    sockets_are_unreachable("auto").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_sockets_are_unreachable_with_landlock_only() {
    sockets_are_unreachable("landlock").await;
}
