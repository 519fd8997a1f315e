//! The sandbox's own set-up follows paths too: a toolchain the user's environment names
//! inside the workspace (an activated `.venv`, a `node_modules/.bin` on PATH) is a path the
//! agent can replace with a link, and the launcher must not grant (or bind) whatever the
//! link points at.

use super::attempt;
use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

async fn a_venv_swapped_for_a_link_grants_nothing(sandbox: &str) {
    let h = Harness::new();
    let secrets = tempfile::tempdir().unwrap();
    std::fs::write(secrets.path().join("id_rsa"), "private key").unwrap();
    std::fs::create_dir_all(h.repo().join(".venv/bin")).unwrap();
    let venv = h.repo().join(".venv").display().to_string();
    let s = secrets.path().display().to_string();
    let server = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": format!("rm -rf .venv && ln -s {s} .venv && echo swapped")}),
        ),
        // The next command's launcher sets the sandbox up again, with the link in place.
        reply().call("terminal", json!({"command": "echo reset", "reset": true})),
        reply().call("terminal", json!({"command": attempt("cat .venv/id_rsa")})),
        reply().call(
            "terminal",
            json!({"command": attempt(&format!("cat {s}/id_rsa"))}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let url = server.url();
    let output = h
        .wright(
            &[
                "run",
                "--base-url",
                &url,
                "--model",
                "test-model",
                "--sandbox",
                sandbox,
                "x",
            ],
            &[("VIRTUAL_ENV", venv.as_str())],
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let obs = observations(&h.events());
    assert_eq!(obs[0]["output"], "swapped");
    assert_eq!(
        obs[2]["output"], "BLOCKED",
        "{sandbox}: read through the link"
    );
    assert_eq!(
        obs[3]["output"], "BLOCKED",
        "{sandbox}: read the link's target"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_venv_swapped_for_a_link_grants_nothing_with_namespaces() {
    a_venv_swapped_for_a_link_grants_nothing("auto").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_venv_swapped_for_a_link_grants_nothing_with_landlock_only() {
    a_venv_swapped_for_a_link_grants_nothing("landlock").await;
}
