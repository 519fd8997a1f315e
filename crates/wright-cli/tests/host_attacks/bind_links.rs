//! The sandbox binds the paths it keeps read-only (the user's repositories nested in the
//! workspace) at every start, and the agent may have changed the workspace since the last
//! one: a parent directory of such a `.git` swapped for a link to another repository must
//! never get that repository's `.git` bound in its place. The next start (a `resume`)
//! refuses, saying what it found and what to do; once the directory is back, it works.

use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use std::path::Path;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// The attack under the sandbox `sandbox` names (flags for `run` and `resume`).
pub async fn a_parent_swapped_for_a_link(test: &str, sandbox: &[&str]) {
    let h = Harness::new();
    let ws = h.repo().canonicalize().unwrap();
    let inner = ws.join("sub/inner");
    std::fs::create_dir_all(&inner).unwrap();
    git(&inner, &["init", "--quiet"]);
    std::fs::write(inner.join(".git/description"), "MINE\n").unwrap();
    let other = tempfile::tempdir().unwrap();
    let other_root = other.path().canonicalize().unwrap();
    let theirs = other_root.join("inner");
    std::fs::create_dir_all(&theirs).unwrap();
    git(&theirs, &["init", "--quiet"]);
    std::fs::write(theirs.join(".git/description"), "OTHER\n").unwrap();
    // Relative, so that it leads to the other repository wherever host paths are rebuilt.
    let link = Path::new("..").join(other_root.file_name().unwrap());
    let term = |command: &str| reply().call("terminal", json!({ "command": command }));
    let finish = || reply().call("finish", json!({"message": "done"}));
    let swap = format!(
        "cat sub/inner/.git/description && mv sub sub.old && ln -s {} sub && echo swapped; true",
        link.display()
    );
    let server = ScriptedServer::start(vec![term(&swap), finish()])
        .await
        .unwrap();
    let url = server.url();
    let mut args = vec!["run", "--base-url", &url, "--model", "test-model"];
    args.extend_from_slice(sandbox);
    args.push("swap a directory");
    let output = h.wright(&args, &[]).await;
    if crate::common::in_place_needs_namespaces(test, &output) {
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let swapped = observations(&h.events())[0]["output"]
        .as_str()
        .unwrap()
        .to_string();
    // Where the sandbox pins the directories above a protected path (a mount namespace,
    // or Docker), the agent cannot move them; the swap is then made here, as the agent
    // of a sandbox without pins (Landlock alone) or any other program could, for the
    // next start to meet it.
    if swapped.contains("Device or resource busy") {
        assert!(swapped.starts_with("MINE\n"), "{swapped}");
        std::fs::rename(ws.join("sub"), ws.join("sub.old")).unwrap();
        std::os::unix::fs::symlink(&link, ws.join("sub")).unwrap();
    } else {
        assert_eq!(swapped, "MINE\nswapped");
    }
    let id = h.conversation_id();

    let resume = |url: String| {
        let mut args: Vec<String> = ["resume", &id, "--base-url", &url, "--model", "test-model"]
            .map(String::from)
            .to_vec();
        args.extend(sandbox.iter().map(|s| s.to_string()));
        args.push("again".into());
        args
    };
    let read =
        "cat sub/inner/.git/description; echo x > sub/inner/.git/planted && echo WROTE; true";
    let server = ScriptedServer::start(vec![term(read), finish()])
        .await
        .unwrap();
    let args = resume(server.url());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let refused = h.wright(&args, &[]).await;
    let err = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{} is a symbolic link to {} where a directory was",
            ws.join("sub").display(),
            link.display()
        )) && err.contains(&inner.join(".git").display().to_string()),
        "{err}"
    );
    assert!(
        err.contains("put the directory back") && !err.contains("--sandbox none"),
        "{err}"
    );
    assert!(server.chat_requests().is_empty());
    let log = std::fs::read_to_string(h.log_path()).unwrap();
    assert!(!log.contains("OTHER"), "{log}");

    // The user puts the directory back (and their repository, if the run's end set it
    // aside as one it did not know); then the conversation goes on, `.git` read-only.
    std::fs::remove_file(ws.join("sub")).unwrap();
    std::fs::rename(ws.join("sub.old"), ws.join("sub")).unwrap();
    let aside = inner.join(".git.wright-quarantined");
    if aside.exists() && !inner.join(".git").exists() {
        std::fs::rename(&aside, inner.join(".git")).unwrap();
    }
    let server = ScriptedServer::start(vec![term(read), finish()])
        .await
        .unwrap();
    let args = resume(server.url());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let resumed = h.wright(&args, &[]).await;
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let obs = observations(&h.events());
    let terminal = obs.iter().rev().find(|o| o["tool"] == "terminal").unwrap();
    let last = terminal["output"].as_str().unwrap().to_string();
    assert!(
        last.starts_with("MINE\n") && last.contains("Read-only file system"),
        "{last}"
    );
    assert!(!last.contains("WROTE"), "{last}");
    assert!(!inner.join(".git/planted").exists());
    assert_eq!(
        std::fs::read_to_string(theirs.join(".git/description")).unwrap(),
        "OTHER\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_swapped_for_a_link_is_refused_in_the_default_sandbox() {
    a_parent_swapped_for_a_link("a_parent_swapped_for_a_link (default sandbox)", &[]).await;
}
