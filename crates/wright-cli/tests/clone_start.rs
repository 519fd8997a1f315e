//! The agent's clone is checked out while the first request is made (the prompt is read
//! from the user's repository, not the clone): the agent still acts only in a clone fully
//! checked out on its branch — its HEAD detached or not, worked in at the top or in a
//! subdirectory — and a checkout that fails ends the run with the checkout's words, no
//! command run, no clone left behind.

use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use std::io::Write;
use std::path::Path;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

fn committed(dir: &Path) {
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::fs::write(dir.join("README.md"), "notes\n").unwrap();
    std::fs::write(dir.join("sub/inner.txt"), "inner\n").unwrap();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "notes"]);
}

fn look_around() -> Vec<wright_testkit::Reply> {
    vec![
        reply().call(
            "terminal",
            json!({"command": "git branch --show-current; cat README.md 2>&1; ls"}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "view", "path": "inner.txt"}),
        ),
        reply().call("finish", json!({"message": "looked"})),
    ]
}

/// Detached or on a branch, at the top or in a subdirectory: the first command sees the
/// whole checkout on the agent's branch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_acts_only_in_a_clone_checked_out_on_its_branch() {
    for (detached, sub) in [(false, false), (true, false), (true, true)] {
        let h = Harness::new();
        committed(h.repo());
        if detached {
            git(h.repo(), &["checkout", "-q", "--detach"]);
        }
        let server = ScriptedServer::start(look_around()).await.unwrap();
        let mut extra = vec!["--max-steps", "5"];
        let inner = h.repo().join("sub");
        let inner = inner.to_str().unwrap();
        if sub {
            extra.extend(["-C", inner]);
        }
        let output = h.run(&server.url(), "look", &extra).await;
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let id = h.conversation_id();
        let seen = observations(&h.events());
        let first = seen[0]["output"].to_string();
        assert!(first.contains(&format!("wright/{id}")), "{first}");
        if sub {
            assert!(first.contains("inner.txt"), "{first}");
            let viewed = seen[1]["output"].to_string();
            assert!(viewed.contains("inner"), "{viewed}");
        } else {
            assert!(first.contains("notes") && first.contains("sub"), "{first}");
        }
    }
}

/// A commit git refuses to check out (a tree entry named `.git`): the first request goes
/// out while the checkout runs; its failure ends the run with git's words, the agent's
/// call never runs, and the clone is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkout_that_fails_after_the_first_request_fails_the_run_and_leaves_no_clone() {
    let h = Harness::new();
    committed(h.repo());
    let blob = git(h.repo(), &["rev-parse", "HEAD:README.md"]);
    let mut mktree = std::process::Command::new("git")
        .arg("mktree")
        .current_dir(h.repo())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let entries = format!(
        "100644 blob {blob}\t.git\n100644 blob {blob}\tREADME.md\n",
        blob = blob.trim()
    );
    mktree
        .stdin
        .take()
        .unwrap()
        .write_all(entries.as_bytes())
        .unwrap();
    let tree = String::from_utf8(mktree.wait_with_output().unwrap().stdout).unwrap();
    let commit = git(
        h.repo(),
        &["commit-tree", tree.trim(), "-p", "HEAD", "-m", "bad"],
    );
    git(h.repo(), &["update-ref", "refs/heads/main", commit.trim()]);

    let script = vec![
        reply().call("terminal", json!({"command": "touch ran"})),
        reply().call("finish", json!({"message": "done"})),
    ];
    let server = ScriptedServer::start(script).await.unwrap();
    let output = h.run(&server.url(), "touch a file", &[]).await;
    let said = stderr(&output);
    assert_ne!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains("cannot check out the agent's clone"),
        "{said}"
    );
    assert!(said.contains("invalid path"), "{said}");
    assert!(!said.contains("wright resume"), "{said}");
    // Whether the checkout failed before the session was ready (then nothing of the
    // conversation is kept) or after the first request went out is a race; either way
    // nothing of a reply ran.
    assert!(server.chat_requests().len() <= 1);
    let conversations = h.data.path().join("wright/conversations");
    let kept = std::fs::read_dir(&conversations).map_or(0, |dir| dir.count());
    if kept > 0 {
        let events = h.events();
        assert!(observations(&events).is_empty());
        assert_eq!(crate::common::last_state(&events), "state:failed");
    }
    let workspaces = h.data.path().join("wright/workspaces");
    let clones: Vec<_> = std::fs::read_dir(&workspaces)
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(clones.is_empty(), "left: {clones:?}");
    assert!(!h.repo().join("ran").exists());
    let branches = git(h.repo(), &["branch", "--list", "wright/*"]);
    assert!(branches.trim().is_empty(), "{branches}");
}
