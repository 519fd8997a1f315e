//! The first look: before a small model's first step, wright runs the test command the
//! workspace map found, in the sandbox, and the model's first message shows the result;
//! it is wright's action (not the agent's: no loop, no "acted"), and `--first-look`
//! turns it on or off.

use crate::common::first_user_message;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

pub(crate) const FIXED: &str = "def row(r):\n    return \",\".join(str(v) for v in r)\n";

pub(crate) fn failing_python_repo(h: &Harness) {
    python_repo(
        h,
        "def row(r):\n    return \",\".join(str(v) for v in r[:-1])\n",
        "self.assertEqual(row([1, 2, 3]), \"1,2,3\")",
    );
}

/// A repository of one commit: `export.py` holding `code`, and `test_export.py` whose one
/// test, `test_row`, asserts `assertion` on `row`.
pub(crate) fn python_repo(h: &Harness, code: &str, assertion: &str) {
    let repo = h.repo();
    std::fs::write(repo.join("export.py"), code).unwrap();
    std::fs::write(
        repo.join("test_export.py"),
        format!("import unittest\nfrom export import row\n\n\nclass T(unittest.TestCase):\n    def test_row(self):\n        {assertion}\n"),
    )
    .unwrap();
    git(repo, &["init", "-q"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "Export rows"]);
}

/// The scripted server, answering to every model name these tests use.
pub(crate) async fn server(script: Vec<wright_testkit::Reply>) -> ScriptedServer {
    let models = ["test-model", "qwen2.5-coder-1.5b", "Qwen2.5-72B-Instruct"];
    ScriptedServer::start_with_models(script, models.iter().map(|m| m.to_string()).collect())
        .await
        .unwrap()
}

pub(crate) async fn run_as(
    h: &Harness,
    url: &str,
    model: &str,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec!["run", "--base-url", url, "--model", model];
    // Versions asked for before step 1 have tests of their own (candidates.rs): the
    // others script the model's steps only.
    if !extra.contains(&"--candidates") {
        args.extend(["--candidates", "off"]);
    }
    args.extend_from_slice(extra);
    args.push("the test fails, fix it");
    h.wright(&args, &[]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_model_starts_with_the_tests_already_run() {
    let h = Harness::new();
    failing_python_repo(&h);
    let run_tests = json!({"command": "python3 -m unittest"});
    let server = server(vec![
        // The same failing command twice more: with the first look that is three runs,
        // but only two are the agent's, so this is no loop.
        reply().call("terminal", run_tests.clone()),
        reply().call("terminal", run_tests.clone()),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": "r[:-1]", "new_str": "r"}),
        ),
        reply().call("terminal", run_tests),
        reply().call("finish", json!({"message": "fixed"})),
    ])
    .await;
    // The reading of the failure has tests of its own (reading.rs).
    let output = run_as(
        &h,
        &server.url(),
        "qwen2.5-coder-1.5b",
        &["--reading", "off"],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    assert!(
        stderr(&output).contains("  → wright runs the tests first: terminal python3 -m unittest"),
        "{}",
        stderr(&output)
    );
    let requests = server.chat_requests();
    let first = first_user_message(&requests[0].json());
    assert!(
        first.contains("the test fails, fix it\n\n[Before your first step, wright ran the tests with `python3 -m unittest`; it exited with code 1:]"),
        "{first}"
    );
    assert!(first.contains("FAIL: test_row"), "{first}");
    assert!(first.contains("[It failed at test_export.py:7"), "{first}");
    // The first message is fixed before step 1: every later request repeats it.
    for request in &requests[1..] {
        assert_eq!(first_user_message(&request.json()), first);
    }

    let events = h.events();
    let look: Vec<_> = events
        .iter()
        .filter(|e| e.source == Source::Environment)
        .filter_map(|e| match &e.body {
            EventBody::Action {
                step,
                call_id,
                tool,
                ..
            } => Some((*step, call_id.clone(), tool.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        look,
        vec![(0, "first-look".to_string(), "terminal".to_string())]
    );
    let nudged = events.iter().any(|e| {
        matches!(&e.body, EventBody::Message { text, .. }
            if e.source == Source::Environment && text.contains("going in circles"))
    });
    assert!(!nudged, "the first look made a loop");
    // The fix is handed over; the first look changed nothing on its own.
    let id = h.conversation_id();
    let fixed = git(h.repo(), &["show", &format!("wright/{id}:export.py")]);
    assert_eq!(fixed, FIXED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_look_follows_the_setting_and_the_model_size() {
    for (model, extra, expected) in [
        // A name without a size is not known to be small.
        ("test-model", &[][..], false),
        ("test-model", &["--first-look", "on"][..], true),
        ("qwen2.5-coder-1.5b", &["--first-look", "off"][..], false),
        ("Qwen2.5-72B-Instruct", &[][..], false),
    ] {
        let h = Harness::new();
        failing_python_repo(&h);
        let server = server(vec![
            reply().call("terminal", json!({"command": "true"})),
            reply().call("finish", json!({"message": "looked"})),
        ])
        .await;
        // The model "finishes" with the tests failing: not what is looked at here.
        let extra = [extra, &["--retest", "off"][..]].concat();
        let output = run_as(&h, &server.url(), model, &extra).await;
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let first = first_user_message(&server.chat_requests()[0].json());
        assert_eq!(
            first.contains("wright ran the tests"),
            expected,
            "{model} {extra:?}: {first}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_first_look_or_last_change_value_is_refused_with_the_choices() {
    let h = Harness::new();
    for (flag, value, named) in [
        ("--first-look", "sometimes", &["auto", "on", "off"][..]),
        ("--last-change", "maybe", &["--last-change"][..]),
    ] {
        let output = h.wright(&["run", flag, value, "fix it"], &[]).await;
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        let said = stderr(&output);
        assert!(named.iter().all(|word| said.contains(word)), "{said}");
    }
}
