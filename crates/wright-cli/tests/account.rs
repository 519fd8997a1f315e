//! The summary is true and the run stops when the work is done, end to end (real git,
//! the real sandbox): a run whose model says it made a change while the diff is empty
//! is sent back once, then stops (exit 3) with wright's account in the report; a run in
//! which wright kept a passing version ends at the model's next call, whatever that
//! call is, and the report says what wright did.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use crate::first_look::failing_python_repo;
use crate::first_look::python_repo;
use crate::first_look::run_as;
use crate::first_look::server;
use crate::first_look::FIXED;
use serde_json::json;
use wright_protocol::EventBody;
use wright_protocol::StopReason;
use wright_testkit::git;
use wright_testkit::reply;

fn accounts(h: &Harness) -> Vec<wright_protocol::Account> {
    h.events()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::Account(account) => Some(account),
            _ => None,
        })
        .collect()
}

fn last_stop(h: &Harness) -> Option<StopReason> {
    h.events().into_iter().rev().find_map(|e| match e.body {
        EventBody::State { stop, .. } => stop,
        _ => None,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_claimed_with_an_empty_diff_stops_the_run_with_wrights_account() {
    let h = Harness::new();
    // The tests pass: nothing needs fixing, and the model changes nothing.
    python_repo(&h, FIXED, "self.assertEqual(row([1, 2, 3]), \"1,2,3\")");
    let claim = "We have added the --limit argument to export.py.";
    let server = server(vec![
        reply().call(
            "file_editor",
            json!({"command": "view", "path": "export.py"}),
        ),
        reply().call("finish", json!({"message": claim})),
        reply().call("finish", json!({"message": claim})),
    ])
    .await;
    let output = run_as(&h, &server.url(), "test-model", &[]).await;
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(3), "{out}\n{}", stderr(&output));
    assert_eq!(
        last_stop(&h),
        Some(StopReason::NothingChanged { finishes: 2 })
    );
    assert!(
        out.contains("[wright's account: no change was made: the diff is empty"),
        "{out}"
    );
    assert!(out.contains(&format!("(The model said: {claim})")), "{out}");
    assert!(out.contains("── no changes"), "{out}");
    let accounts = accounts(&h);
    assert_eq!(accounts.len(), 2, "{accounts:?}");
    assert!(accounts[0].sent_back && accounts[0].changed.is_empty());
    // The model read why its first finish was sent back.
    let requests = server.chat_requests();
    assert!(
        requests[2]
            .json()
            .to_string()
            .contains("No file has changed"),
        "{}",
        requests[2].json()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_true_claim_finishes_as_before_and_the_account_lists_the_file() {
    let h = Harness::new();
    failing_python_repo(&h);
    let server = server(vec![
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": "r[:-1]", "new_str": "r"}),
        ),
        reply().call("finish", json!({"message": "Fixed the slice in export.py."})),
    ])
    .await;
    let output = run_as(&h, &server.url(), "test-model", &[]).await;
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{}", stderr(&output));
    let accounts = accounts(&h);
    assert_eq!(accounts.len(), 1);
    assert_eq!(accounts[0].changed, vec!["export.py"]);
    assert!(!accounts[0].contradicts());
    // Nothing to correct: the model's words stand alone.
    assert!(!out.contains("wright's account"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_a_kept_version_passes_the_models_next_call_ends_the_run() {
    let h = Harness::new();
    failing_python_repo(&h);
    let server = server(vec![
        // The version asked apart passes; then the model would edit the test file.
        reply().text(&format!("```python\n{FIXED}```")),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "test_export.py", "old_str": "\"1,2,3\"", "new_str": "'1,2,3'"}),
        ),
        reply().call("file_editor", json!({"command": "view", "path": "export.py"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await;
    let output = run_as(
        &h,
        &server.url(),
        "qwen2.5-coder-1.5b",
        &["--candidates", "on", "--reading", "off"],
    )
    .await;
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{}", stderr(&output));
    // One request for the version, one step.
    assert_eq!(server.chat_requests().len(), 2, "{out}");
    assert_eq!(last_stop(&h), Some(StopReason::Finished));
    assert!(
        out.contains("wright put in place a version of `row` in export.py that the model wrote when asked apart, and `python3 -m unittest` passes with it"),
        "{out}"
    );
    // The branch holds the version, and the test file as it was.
    let conversation = h.conversation_id();
    let changed = git(
        h.repo(),
        &[
            "diff",
            "--name-only",
            "HEAD",
            &format!("wright/{conversation}"),
        ],
    );
    assert_eq!(changed.trim(), "export.py");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_stop_when_done_off_the_model_goes_on_after_the_kept_version() {
    let h = Harness::new();
    failing_python_repo(&h);
    let server = server(vec![
        reply().text(&format!("```python\n{FIXED}```")),
        reply().call(
            "file_editor",
            json!({"command": "view", "path": "export.py"}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await;
    let output = run_as(
        &h,
        &server.url(),
        "qwen2.5-coder-1.5b",
        &[
            "--candidates",
            "on",
            "--reading",
            "off",
            "--assist-piece",
            "stop-when-done=off",
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(server.chat_requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_with_no_failing_test_gets_the_file_written_anew_with_wrights_own_check() {
    let h = Harness::new();
    // The tests pass; the task asks for a change of the configuration.
    let repo = h.repo();
    std::fs::write(repo.join("config.py"), "PORT = 8080\n").unwrap();
    std::fs::write(
        repo.join("test_config.py"),
        "import unittest\nimport config\n\n\nclass T(unittest.TestCase):\n    def test_port(self):\n        self.assertIsInstance(config.PORT, int)\n",
    )
    .unwrap();
    git(repo, &["init", "-q"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "Config"]);
    // It reads its input first, as a small model's check may (a bare `sh`, a `cat`): it
    // gets none, and goes on at once.
    let check = "cat >/dev/null; python3 -c 'import config; assert config.PORT == 3000' && PORT=4000 python3 -c 'import config; assert config.PORT == 4000'";
    let new = "import os\n\nPORT = int(os.environ.get(\"PORT\", \"3000\"))\n";
    // Asked first for a test file in the style of test_config.py: it uses `os` without
    // importing it, which wright adds.
    let test_file = "import unittest\nimport config\n\n\nclass T(unittest.TestCase):\n    def test_default(self):\n        self.assertEqual(config.PORT, 3000)\n        os.environ.get('PORT')\n";
    let server = server(vec![
        reply().text(&format!("```python\n{test_file}```")),
        reply().text(&format!("```sh\n{check}\n```")),
        reply().text(&format!("```python\n{new}```")),
        reply().call(
            "finish",
            json!({"message": "The default port is 3000 now."}),
        ),
    ])
    .await;
    let output = h
        .wright(
            &[
                "run",
                "--base-url",
                &server.url(),
                "--model",
                "qwen2.5-coder-1.5b",
                "--reading",
                "off",
                "The default port must be 3000, overridable by the PORT environment variable.",
            ],
            &[],
        )
        .await;
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{}", stderr(&output));
    assert_eq!(server.chat_requests().len(), 4, "{out}");
    assert!(
        out.contains("wright wrote config.py anew with the model's version, asked apart"),
        "{out}"
    );
    // The test file passed first: the report says where it was, and it is gone.
    assert!(
        out.contains("a test written at test_wright_check.py for the run and removed"),
        "{out}"
    );
    assert!(
        out.contains("not the repository's tests, not committed"),
        "{out}"
    );
    // On the branch: config.py as the version wrote it, and no check file.
    let conversation = h.conversation_id();
    let branch = format!("wright/{conversation}");
    let changed = git(repo, &["diff", "--name-only", "HEAD", &branch]);
    assert_eq!(changed.trim(), "config.py");
    assert_eq!(git(repo, &["show", &format!("{branch}:config.py")]), new);
}
