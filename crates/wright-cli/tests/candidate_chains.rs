//! Chains of candidate versions: a version with which the failing command fails further
//! on, in a function not asked about yet, stays while versions of that one are asked for;
//! unless the chain ends in a pass every version kept on the way is taken out, and a
//! resume after wright was killed mid-chain puts the file back.

use crate::candidates::candidates;
use crate::candidates::last_message;
use crate::candidates::workspace_of;
use crate::common::first_user_message;
use crate::common::stderr;
use crate::common::Harness;
use crate::first_look::run_as;
use crate::first_look::server;
use serde_json::json;
use std::time::Duration;
use wright_protocol::CandidateOutcome;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::Reply;

const STUBS: &str = "def double(x):\n    raise NotImplementedError\n\n\ndef total(xs):\n    raise NotImplementedError\n";

/// Two stubs in ops.py: the test fails in `double` first, then, once it is written, in
/// `total`.
fn two_stubs_repo(h: &Harness) {
    let repo = h.repo();
    std::fs::write(repo.join("ops.py"), STUBS).unwrap();
    std::fs::write(
        repo.join("test_ops.py"),
        "import unittest\nfrom ops import double, total\n\n\nclass T(unittest.TestCase):\n    def test_ops(self):\n        self.assertEqual(total([double(1), double(2)]), 6)\n",
    )
    .unwrap();
    git(repo, &["init", "-q"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "Stubs"]);
}

const DOUBLE: &str = "def double(x):\n    return 2 * x";
const TOTAL: &str = "def total(xs):\n    return sum(xs)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_that_fails_further_on_stays_while_the_next_function_is_asked_for() {
    let h = Harness::new();
    two_stubs_repo(&h);
    let server = server(vec![
        reply().text(&format!("```python\n{DOUBLE}\n```")),
        // Wrong: the failure stays in `total`, so only this one is taken out.
        reply().text("```python\ndef total(xs):\n    return 0\n```"),
        reply().text(&format!("It raises.\n```python\n{TOTAL}\n```")),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await;
    let output = run_as(
        &h,
        &server.url(),
        "qwen2.5-coder-1.5b",
        &["--candidates", "on"],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let tried = candidates(&h);
    let outcomes: Vec<_> = tried.iter().map(|c| c.outcome.clone()).collect();
    assert_eq!(
        outcomes,
        vec![
            CandidateOutcome::FailsFurther {
                next: "total".into()
            },
            CandidateOutcome::Failed { exit_code: Some(1) },
            CandidateOutcome::Passed,
        ]
    );
    assert_eq!(tried[0].name, "double");
    assert_eq!(tried[2].name, "total");
    let requests = server.chat_requests();
    // The second question shows ops.py with `double` as the first version wrote it.
    let second = first_user_message(&requests[1].json());
    assert!(second.contains(DOUBLE), "{second}");
    assert!(
        second.contains("Then write the function `total` fixed, whole"),
        "{second}"
    );
    // The model is shown both versions, in the order they went in.
    let first = first_user_message(&requests[3].json());
    assert!(
        first.ends_with(&format!("[Asked apart, you wrote `double`, `total` anew, one after the other (with each, `python3 -m unittest` failed further on, in the next); wright put those versions in place, and `python3 -m unittest` passes now. They read:\nops.py:\n```\n{DOUBLE}\n```\nops.py:\n```\n{TOTAL}\n```\nThe failure above is fixed: do not edit ops.py again. If the task asks for nothing more, call finish now.]")),
        "{first}"
    );
    let conversation = h.conversation_id();
    let handed = git(
        h.repo(),
        &["show", &format!("wright/{conversation}:ops.py")],
    );
    assert_eq!(handed, format!("{DOUBLE}\n\n\n{TOTAL}\n"));
    // `wright show` says what became of each.
    let shown = h.wright(&["show", &conversation], &[]).await;
    let shown = String::from_utf8_lossy(&shown.stdout).to_string();
    assert!(
        shown.contains("a version of double in ops.py asked apart: `python3 -m unittest` fails further on with it, in total: kept while total is tried"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_kept_on_the_way_are_taken_out_when_no_pass_follows() {
    let h = Harness::new();
    two_stubs_repo(&h);
    let mut script = vec![reply().text(&format!("```python\n{DOUBLE}\n```"))];
    script.extend((0..4).map(|_| reply().text("```python\ndef total(xs):\n    return 0\n```")));
    script.push(reply().call("file_editor", json!({"command": "view", "path": "ops.py"})));
    script.push(reply().call("finish", json!({"message": "looked"})));
    let scripted = server(script).await;
    let extra = ["--candidates", "on", "--reading", "off", "--retest", "off"];
    run_as(&h, &scripted.url(), "qwen2.5-coder-1.5b", &extra).await;
    let outcomes: Vec<_> = candidates(&h).into_iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        vec![
            CandidateOutcome::FailsFurther {
                next: "total".into()
            },
            CandidateOutcome::Failed { exit_code: Some(1) },
            CandidateOutcome::Repeated,
            CandidateOutcome::Repeated,
            CandidateOutcome::Repeated,
        ]
    );
    let requests = scripted.chat_requests();
    let first = first_user_message(&requests[5].json());
    assert!(!first.contains("Asked apart"), "{first}");
    // The model's view reads both stubs: the version of `double` was taken out too.
    let shown = last_message(&requests[6].json());
    assert_eq!(
        shown.matches("raise NotImplementedError").count(),
        2,
        "{shown}"
    );
    assert!(!shown.contains("return 2 * x"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_a_killed_wright_left_in_place_are_put_back_on_resume() {
    let h = Harness::new();
    two_stubs_repo(&h);
    let first = server(vec![
        reply().text(&format!("```python\n{DOUBLE}\n```")),
        // Killed while it waits for a version of `total`: `double`'s is in place.
        Reply::Delayed(Duration::from_secs(60), Box::new(reply().text("late"))),
    ])
    .await;
    let url = first.url();
    let mut child = h.spawn_wright(
        &[
            "run",
            "--base-url",
            &url,
            "--model",
            "qwen2.5-coder-1.5b",
            "--candidates",
            "on",
            "--reading",
            "off",
            "--retest",
            "off",
            "the test fails, fix it",
        ],
        &[],
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let logged = || {
        std::fs::read_dir(h.data.path().join("wright/conversations"))
            .ok()
            .and_then(|mut dir| dir.next())
            .and_then(|entry| entry.ok())
            .and_then(|entry| std::fs::read_to_string(entry.path().join("events.jsonl")).ok())
            .unwrap_or_default()
    };
    while !logged().contains("fails_further") {
        assert!(std::time::Instant::now() < deadline, "no version kept");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    let workspace = workspace_of(&h);
    let ops = std::path::Path::new(&workspace).join("ops.py");
    assert!(std::fs::read_to_string(&ops)
        .unwrap()
        .contains("return 2 * x"));

    let next = server(vec![
        reply().call("file_editor", json!({"command": "view", "path": "ops.py"})),
        reply().call("finish", json!({"message": "looked"})),
    ])
    .await;
    let id = h.conversation_id();
    let next_url = next.url();
    h.wright(
        &[
            "resume",
            &id,
            "--base-url",
            &next_url,
            "--model",
            "qwen2.5-coder-1.5b",
        ],
        &[],
    )
    .await;
    let last = candidates(&h).pop().unwrap();
    assert_eq!(
        last.outcome,
        CandidateOutcome::NotTried {
            why: "wright stopped while versions were in place; ops.py was put back as it was when this run resumed".into()
        }
    );
    assert_eq!(last.name, "double");
    // The model's first view after the resume reads both stubs again.
    let shown = last_message(&next.chat_requests()[1].json());
    assert_eq!(
        shown.matches("raise NotImplementedError").count(),
        2,
        "{shown}"
    );
}
