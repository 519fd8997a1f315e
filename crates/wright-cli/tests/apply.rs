//! `wright apply` and `wright discard` never leave the user's repository in a state they did
//! not choose: a dirty tree or an operation in progress is refused before anything starts,
//! a conflict is undone with the files named and the commands to do it by hand, and a
//! conversation with nothing to take says so in wright's words. The commit on the branch
//! carries the model's own summary.

use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use std::path::Path;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

/// A repository with one commit holding `a` ("one").
fn repository(dir: &Path) {
    std::fs::write(dir.join("a"), "one\n").unwrap();
    git(dir, &["init", "-q"]);
    // The user's own identity: their merges are theirs.
    git(dir, &["config", "user.name", "User"]);
    git(dir, &["config", "user.email", "user@example.com"]);
    git(dir, &["add", "a"]);
    git(dir, &["commit", "-qm", "first"]);
}

/// A run whose agent writes `text` into `a` and finishes with `summary`; its id.
async fn agent_writes(h: &Harness, text: &str, summary: &str) -> String {
    let script: Vec<Reply> = vec![
        reply().call(
            "terminal",
            json!({"command": format!("printf '{text}\\n' > a")}),
        ),
        reply().call("finish", json!({"message": summary})),
    ];
    let server = ScriptedServer::start(script).await.unwrap();
    let output = h.run(&server.url(), "change a", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    h.conversation_id()
}

/// Everything about the repository a user would notice: HEAD, the status, the files of
/// an operation in progress, and `a`.
fn state(dir: &Path) -> (String, String, Vec<&'static str>, String) {
    let head = git(dir, &["rev-parse", "HEAD"]);
    let status = git(dir, &["status", "--porcelain"]);
    let markers = ["MERGE_HEAD", "CHERRY_PICK_HEAD", "sequencer", "REVERT_HEAD"]
        .into_iter()
        .filter(|m| dir.join(".git").join(m).exists())
        .collect();
    (
        head,
        status,
        markers,
        std::fs::read_to_string(dir.join("a")).unwrap(),
    )
}

fn commit_user_change(dir: &Path, text: &str) {
    std::fs::write(dir.join("a"), text).unwrap();
    git(dir, &["commit", "-qam", "mine"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conflict_is_undone_and_named_both_ways() {
    let h = Harness::new();
    repository(h.repo());
    let id = agent_writes(&h, "agent", "Rewrote a.").await;
    commit_user_change(h.repo(), "user\n");
    let before = state(h.repo());

    for extra in [&[][..], &["--cherry-pick"][..]] {
        let mut args = vec!["apply", id.as_str()];
        args.extend_from_slice(extra);
        let output = h.wright(&args, &[]).await;
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{said}");
        assert!(
            said.contains("did not go through (conflicts in a)"),
            "{said}"
        );
        assert!(said.contains("it was undone"), "{said}");
        let by_hand = if extra.is_empty() {
            format!("git merge wright/{id}")
        } else {
            "git cherry-pick ".to_string()
        };
        assert!(said.contains(&by_hand), "{said}");
        assert_eq!(state(h.repo()), before, "{said}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dirty_tree_or_an_operation_in_progress_is_refused_before_anything() {
    let h = Harness::new();
    repository(h.repo());
    let id = agent_writes(&h, "agent", "Rewrote a.").await;

    // Uncommitted changes of the user's.
    std::fs::write(h.repo().join("a"), "work in progress\n").unwrap();
    let before = state(h.repo());
    for extra in [&[][..], &["--cherry-pick"][..]] {
        let mut args = vec!["apply", id.as_str()];
        args.extend_from_slice(extra);
        let output = h.wright(&args, &[]).await;
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("has uncommitted changes"),
            "{}",
            stderr(&output)
        );
        assert_eq!(state(h.repo()), before);
    }
    git(h.repo(), &["checkout", "--", "a"]);

    // A merge of the user's own, stopped on a conflict.
    git(h.repo(), &["checkout", "-qb", "side"]);
    commit_user_change(h.repo(), "side\n");
    git(h.repo(), &["checkout", "-q", "main"]);
    commit_user_change(h.repo(), "main\n");
    let merging = std::process::Command::new("git")
        .args(["merge", "side"])
        .current_dir(h.repo())
        .output()
        .unwrap();
    assert!(!merging.status.success());
    let before = state(h.repo());
    assert_eq!(before.2, vec!["MERGE_HEAD"]);
    let output = h.wright(&["apply", &id], &[]).await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("is in the middle of a merge"),
        "{}",
        stderr(&output)
    );
    assert_eq!(state(h.repo()), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_to_take_is_said_in_wrights_words() {
    // No changes: no branch, and apply says so.
    let h = Harness::new();
    repository(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "cat a"})),
        reply().call("finish", json!({"message": "a is fine as it is"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "look at a", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let id = h.conversation_id();
    let output = h.wright(&["apply", &id], &[]).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("left no changes"),
        "{}",
        stderr(&output)
    );

    // Discarded: apply and a second discard say so.
    let h = Harness::new();
    repository(h.repo());
    let id = agent_writes(&h, "agent", "Rewrote a.").await;
    let first = h.wright(&["discard", &id], &[]).await;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(crate::common::stdout(&first).contains(&format!("discarded wright/{id}")));
    let second = h.wright(&["discard", &id], &[]).await;
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert!(
        crate::common::stdout(&second).contains("was already discarded"),
        "{}",
        crate::common::stdout(&second)
    );
    let output = h.wright(&["apply", &id], &[]).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("was discarded"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_commit_says_what_the_model_did_and_what_was_asked() {
    let h = Harness::new();
    repository(h.repo());
    let id = agent_writes(&h, "agent", "Made a say agent.\n\nIt said one before.").await;
    let message = git(
        h.repo(),
        &["log", "-1", "--format=%B", &format!("wright/{id}")],
    );
    assert_eq!(
        message.trim_end(),
        "Made a say agent.\n\nIt said one before.\n\nTask: change a"
    );
    let applied = h.wright(&["apply", &id], &[]).await;
    assert_eq!(applied.status.code(), Some(0), "{}", stderr(&applied));
    assert_eq!(
        std::fs::read_to_string(h.repo().join("a")).unwrap(),
        "agent\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stopped_before_any_change_leaves_no_commit() {
    for in_place in [false, true] {
        let h = Harness::new();
        repository(h.repo());
        let before = git(h.repo(), &["for-each-ref"]);
        let server = ScriptedServer::start(vec![
            reply().call("terminal", json!({"command": "cat a"})),
            Reply::Delayed(
                std::time::Duration::from_secs(30),
                Box::new(reply().call("finish", json!({"message": "done"}))),
            ),
        ])
        .await
        .unwrap();
        let url = server.url();
        let mut args = vec!["run", "--base-url", &url, "--model", "test-model"];
        if in_place {
            args.push("--in-place");
        }
        args.push("look at a");
        let child = h.spawn_wright(&args, &[]);
        // Live once the first command's output is logged.
        for _ in 0..300 {
            let log = std::fs::read_dir(h.data.path().join("wright/conversations"))
                .ok()
                .and_then(|mut d| d.next())
                .map(|e| e.unwrap().path().join("events.jsonl"));
            if log
                .and_then(|l| std::fs::read_to_string(l).ok())
                .is_some_and(|t| t.contains("\"kind\":\"observation\""))
            {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let output = child.wait_with_output().await.unwrap();
        if in_place && crate::common::in_place_needs_namespaces("stopped in place", &output) {
            continue;
        }
        assert_eq!(output.status.code(), Some(143), "{}", stderr(&output));
        assert_eq!(
            git(h.repo(), &["for-each-ref"]),
            before,
            "in place: {in_place}"
        );
        assert_eq!(git(h.repo(), &["status", "--porcelain"]), "");
    }
}

/// A run killed before it handed its work over (as a second Ctrl-C leaves it): `wright
/// apply` and `wright diff` give the one answer, that the work is in its clone — not
/// that there are no changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_never_handed_over_is_in_its_clone_for_apply_and_diff() {
    let h = Harness::new();
    repository(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "printf 'agent\\n' > a"})),
        Reply::Delayed(
            std::time::Duration::from_secs(60),
            Box::new(reply().call("finish", json!({"message": "done"}))),
        ),
    ])
    .await
    .unwrap();
    let url = server.url();
    let mut child = h.spawn_wright(
        &[
            "run",
            "--base-url",
            &url,
            "--model",
            "test-model",
            "change a",
        ],
        &[],
    );
    let conversations = h.data.path().join("wright/conversations");
    let mut live = false;
    for _ in 0..300 {
        let log = std::fs::read_dir(&conversations)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| std::fs::read_to_string(e.ok()?.path().join("events.jsonl")).ok());
        if log.is_some_and(|t| t.contains("\"kind\":\"observation\"")) {
            live = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(live, "the run never got going");
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    let id = h.conversation_id();
    let applied = h.wright(&["apply", &id], &[]).await;
    assert_eq!(applied.status.code(), Some(2), "{}", stderr(&applied));
    let diffed = h.wright(&["diff", &id], &[]).await;
    assert!(!diffed.status.success(), "{}", stderr(&diffed));
    for said in [stderr(&applied), stderr(&diffed)] {
        assert!(said.contains("they are in its clone"), "{said}");
        assert!(!said.contains("no changes"), "{said}");
    }
}
