//! Tasks with no failing test, in process (see `harness`), the commands run for real in
//! the workspace (a git repository): when the first look passes, wright finds the file
//! the task is about, asks apart for a check of the task and for the file whole, and keeps
//! the first version with which the tests and the check pass; a check that passes before
//! any change is discarded; a version that breaks the tests is put back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../harness/mod.rs"]
mod harness;
mod task_words;

use harness::reply;
use harness::Harness;
use serde_json::json;
use wright_core::Outcome;
use wright_protocol::Candidate;
use wright_protocol::CandidateOutcome;
use wright_protocol::EventBody;
use wright_protocol::StopReason;
use wright_strategies::Help;
use wright_testkit::Reply;

const TESTS: &str = "python3 -m unittest";
const CONFIG: &str = "PORT = 8080\n";
const TASK: &str = "The default port must be 3000, overridable by the PORT environment variable.";
const NEW_CONFIG: &str = "import os\n\nPORT = int(os.environ.get(\"PORT\", \"3000\"))\n";

/// A repository whose tests pass: config.py, its test, and a module the task is not about.
fn passing_repo(h: &Harness) {
    h.write("config.py", CONFIG);
    h.write(
        "test_config.py",
        "import unittest\nimport config\n\n\nclass T(unittest.TestCase):\n    def test_port(self):\n        self.assertIsInstance(config.PORT, int)\n",
    );
    h.write("greet.py", "def greet(name):\n    return 'hi ' + name\n");
    let root = h.workspace.path().to_path_buf();
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "start",
        ],
    ] {
        let ran = std::process::Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(ran.status.success(), "{ran:?}");
    }
    // Every command runs for real, from the workspace's root.
    h.shell.reacts(move |command| {
        let ran = std::process::Command::new("bash")
            .args(["-c", command])
            .current_dir(&root)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("bash");
        let output = format!(
            "{}{}",
            String::from_utf8_lossy(&ran.stdout),
            String::from_utf8_lossy(&ran.stderr)
        );
        Some((ran.status.code().unwrap_or(1), output))
    });
}

fn sh(script: &str) -> Reply {
    reply().text(&format!("It runs the module.\n```sh\n{script}\n```"))
}

fn python(code: &str) -> Reply {
    reply().text(&format!("```python\n{code}```"))
}

/// A check written as a test file in the style of test_config.py.
const TEST_CHECK: &str = "import unittest\nimport config\n\n\nclass T(unittest.TestCase):\n    def test_default(self):\n        self.assertEqual(config.PORT, 3000)\n";

/// An answer to the request for a check as a test file that holds none.
fn no_code() -> Reply {
    reply().text("The test should check the port.")
}

const CHECK: &str = "python3 -c 'import config; assert config.PORT == 3000' && PORT=4000 python3 -c 'import config; assert config.PORT == 4000'";

fn candidates(h: &Harness) -> Vec<Candidate> {
    h.events()
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Candidate(candidate) => Some(candidate.clone()),
            _ => None,
        })
        .collect()
}

fn config(h: &Harness) -> String {
    std::fs::read_to_string(h.workspace.path().join("config.py")).unwrap()
}

fn equip(h: &mut Harness) {
    h.conversation.look_first(TESTS.into());
    h.conversation.try_file_versions(true);
    h.conversation.account(true);
    h.conversation.stop_when_done(true);
}

/// The task run on the passing repository with the help on, the model answering
/// `replies` in turn.
async fn run_task(replies: Vec<Reply>) -> (Harness, Outcome) {
    run_task_as(TASK, replies).await
}

/// `task` run on the passing repository with the help on, the model answering `replies`
/// in turn.
async fn run_task_as(task: &str, replies: Vec<Reply>) -> (Harness, Outcome) {
    let mut h = Harness::run_mode(replies).await;
    passing_repo(&h);
    equip(&mut h);
    let outcome = h.run(task).await;
    (h, outcome)
}

/// The outcomes of a run whose first answer for a check held none, then `tries`.
fn after_no_check(tries: Vec<CandidateOutcome>) -> Vec<CandidateOutcome> {
    let none = CandidateOutcome::NotTried {
        why: "the answer wrote no check".into(),
    };
    std::iter::once(none).chain(tries).collect()
}

/// A version that breaks the tests: the port read as text.
const BREAKS: &str = "import os\n\nPORT = os.environ.get(\"PORT\", \"3000\")\n";

#[tokio::test]
async fn the_file_the_task_is_about_is_written_anew_and_kept_when_tests_and_check_pass() {
    let view = reply().call(
        "file_editor",
        json!({"command": "view", "path": "config.py"}),
    );
    let (h, outcome) = run_task(vec![
        python(TEST_CHECK),
        sh(CHECK),
        python(NEW_CONFIG),
        view,
    ])
    .await;

    let tried = candidates(&h);
    assert_eq!(tried.len(), 1, "{tried:?}");
    assert_eq!(tried[0].outcome, CandidateOutcome::Passed);
    assert_eq!(tried[0].path, "config.py");
    assert_eq!(tried[0].name, "");
    // The first check that passed with it: the test file, written beside the tests.
    assert_eq!(tried[0].check.as_deref(), Some(TEST_CHECK));
    assert_eq!(tried[0].check_file.as_deref(), Some("test_wright_check.py"));
    assert_eq!(config(&h), NEW_CONFIG);
    // Asked apart: a check as a test file in the style of the repository's tests, one as
    // a script, then the file whole, each with the file's text.
    let requests = h.server.chat_requests();
    let file_asked = requests[0].json()["messages"][0]["content"].to_string();
    assert!(
        file_asked.contains(
            "Write a new test file, test_wright_check.py, in the style of test_config.py"
        ),
        "{file_asked}"
    );
    assert!(
        file_asked.contains("assertIsInstance(config.PORT, int)"),
        "{file_asked}"
    );
    let check_asked = requests[1].json()["messages"][0]["content"].to_string();
    assert!(check_asked.contains("short shell script"), "{check_asked}");
    assert!(check_asked.contains("PORT = 8080"), "{check_asked}");
    let version_asked = requests[2].json()["messages"][0]["content"].to_string();
    assert!(
        version_asked.contains("Write config.py changed as the task asks, whole"),
        "{version_asked}"
    );
    // The model reads the kept version in its first message; its next call is the last.
    let first = requests[3].json().to_string();
    assert!(
        first.contains("[Asked apart, you wrote config.py anew for the task; wright put that version in place: `python3 -m unittest` passes with it, and so does a check of the task wright was given."),
        "{first}"
    );
    assert_eq!(requests.len(), 4);
    assert_eq!(outcome.stop, StopReason::Finished);
    // The report shows the check as wright's own, not the repository's tests.
    let summary = outcome.summary.unwrap();
    assert!(
        summary
            .contains("wright's own check of the task (not the repository's tests, not committed"),
        "{summary}"
    );
    assert!(
        summary.contains("the change touches config.py"),
        "{summary}"
    );
    // The check file is gone: only the change is left in the workspace.
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(h.workspace.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&status.stdout), " M config.py\n");
}

#[tokio::test]
async fn without_a_check_that_fails_first_a_version_that_keeps_the_tests_passing_stays_unverified()
{
    let finish = reply().call("finish", json!({"message": "done"}));
    let passes = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_nothing(self):\n        pass\n";
    let mut h =
        Harness::run_mode(vec![python(passes), sh("true"), python(NEW_CONFIG), finish]).await;
    passing_repo(&h);
    equip(&mut h);
    let outcome = h.run(TASK).await;

    let tried = candidates(&h);
    assert_eq!(tried.len(), 3, "{tried:?}");
    for candidate in &tried[..2] {
        assert!(
            matches!(&candidate.outcome, CandidateOutcome::NotTried { why } if why.contains("passes before any change")),
            "{candidate:?}"
        );
    }
    assert_eq!(tried[2].outcome, CandidateOutcome::Unverified);
    assert_eq!(tried[2].check, None);
    assert_eq!(config(&h), NEW_CONFIG);
    // Two checks asked for, a version, then the model's own step, told that nothing
    // checked the version: not the "work is done" of a checked one.
    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 4);
    let first = requests[3].json().to_string();
    assert!(
        first.contains("wright put that version in place: `python3 -m unittest` still passes with it, but nothing has checked that it does what the task asks"),
        "{first}"
    );
    assert!(!first.contains("The work is done"), "{first}");
    assert_eq!(outcome.stop, StopReason::Finished);
    let summary = outcome.summary.unwrap();
    assert!(
        summary.contains("no check confirmed that it does what the task asks"),
        "{summary}"
    );
}

#[tokio::test]
async fn when_no_version_passes_a_check_the_first_that_kept_the_tests_passing_is_put_back_unverified(
) {
    // The only check expects a port nobody asked for: it fails before and with every
    // version. The first version keeps the tests passing, the second breaks them.
    let wrong = TEST_CHECK.replace("3000", "3001");
    let finish = reply().call("finish", json!({"message": "done"}));
    let (h, _) = run_task(vec![
        python(&wrong),
        no_code(),
        python(NEW_CONFIG),
        python(BREAKS),
        finish,
    ])
    .await;

    let tried = candidates(&h);
    let outcomes: Vec<_> = tried.iter().map(|c| c.outcome.clone()).collect();
    let failed = CandidateOutcome::Failed { exit_code: Some(1) };
    assert_eq!(
        outcomes,
        after_no_check(vec![failed.clone(), failed, CandidateOutcome::Unverified])
    );
    // The version put back is the first one, logged again without asking again.
    assert_eq!(tried[3].new_str.as_deref(), Some(NEW_CONFIG));
    assert_eq!(tried[3].answer, "");
    assert_eq!(config(&h), NEW_CONFIG);
    assert!(!h.workspace.path().join("test_wright_check.py").exists());
    assert_eq!(h.server.chat_requests().len(), 5);
}

#[tokio::test]
async fn a_version_that_breaks_the_tests_is_put_back_and_the_next_one_kept() {
    let view = reply().call(
        "file_editor",
        json!({"command": "view", "path": "config.py"}),
    );
    let (h, _) = run_task(vec![
        no_code(),
        sh(CHECK),
        python(BREAKS),
        python(NEW_CONFIG),
        view,
    ])
    .await;

    let outcomes: Vec<_> = candidates(&h).into_iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        after_no_check(vec![
            CandidateOutcome::Failed { exit_code: Some(1) },
            CandidateOutcome::Passed
        ])
    );
    assert_eq!(config(&h), NEW_CONFIG);
}

#[tokio::test]
async fn nothing_is_asked_when_the_first_look_fails_or_the_piece_is_off() {
    let finish = reply().call("finish", json!({"message": "done"}));
    let view = reply().call(
        "file_editor",
        json!({"command": "view", "path": "config.py"}),
    );
    let mut h = Harness::run_mode(vec![view, finish]).await;
    passing_repo(&h);
    h.conversation.look_first(TESTS.into());
    h.run(TASK).await;
    assert!(candidates(&h).is_empty());
    assert_eq!(h.server.chat_requests().len(), 2);
}

#[tokio::test]
async fn a_finish_before_any_change_where_the_tests_passed_first_is_told_the_change_is_still_to_make(
) {
    let finish = || reply().call("finish", json!({"message": "the tests pass"}));
    let view = reply().call(
        "file_editor",
        json!({"command": "view", "path": "config.py"}),
    );
    let mut h = Harness::run_mode(vec![finish(), view, finish()]).await;
    passing_repo(&h);
    h.conversation.look_first(TESTS.into());
    h.run(TASK).await;
    let finishes = h.results_of("finish");
    assert!(
        finishes[0].starts_with("finish was called before anything was done")
            && finishes[0].contains("The tests passed before you began")
            && finishes[0].contains("the task asks for a change"),
        "{finishes:?}"
    );
    // The view counts as work done: the second finish is taken.
    assert_eq!(finishes.len(), 2, "{finishes:?}");
    assert!(
        !finishes[1].contains("before anything was done"),
        "{finishes:?}"
    );
}

#[tokio::test]
async fn a_version_is_kept_when_one_check_passes_though_the_other_never_does() {
    // The test file expects a port nobody asked for: it fails before and with every
    // version. The script is right: the version is kept with it.
    let wrong = TEST_CHECK.replace("3000", "3001");
    let view = reply().call(
        "file_editor",
        json!({"command": "view", "path": "config.py"}),
    );
    let (h, _) = run_task(vec![python(&wrong), sh(CHECK), python(NEW_CONFIG), view]).await;
    let tried = candidates(&h);
    assert_eq!(tried.len(), 1, "{tried:?}");
    assert_eq!(tried[0].outcome, CandidateOutcome::Passed);
    assert_eq!(tried[0].check.as_deref(), Some(CHECK));
    assert_eq!(tried[0].check_file, None);
    assert_eq!(config(&h), NEW_CONFIG);
    assert!(!h.workspace.path().join("test_wright_check.py").exists());
}

#[tokio::test]
async fn a_check_file_left_by_a_killed_wright_is_removed_when_the_run_resumes() {
    let finish = || reply().call("finish", json!({"message": "done"}));
    let view = reply().call(
        "file_editor",
        json!({"command": "view", "path": "config.py"}),
    );
    let (h, _) = run_task(vec![no_code(), sh("true"), view, finish()]).await;
    // As a wright killed while its check file was in place leaves it: the file, and the
    // record of it beside the log.
    let stray = h.workspace.path().join("test_wright_check.py");
    std::fs::write(&stray, TEST_CHECK).unwrap();
    let event = Candidate {
        check: Some(TEST_CHECK.into()),
        check_file: Some("test_wright_check.py".into()),
        path: "test_wright_check.py".into(),
        ..candidates(&h)[0].clone()
    };
    let record = json!([{"event": event, "text": "", "absent": true}]);
    let at = h.log_path().with_file_name("versions_in_place.json");
    std::fs::write(&at, record.to_string()).unwrap();
    let before = candidates(&h).len();
    let mut h = h.resume(vec![finish()]).await;
    equip(&mut h);
    h.run_steps(Some("go on"), 5).await;
    assert!(!stray.exists(), "the check file is removed");
    assert!(!at.exists(), "the record is settled");
    let after = candidates(&h);
    assert_eq!(after.len(), before + 1, "{after:?}");
    assert!(
        matches!(&after[before].outcome, CandidateOutcome::NotTried { why }
            if why.contains("check file test_wright_check.py was in place; it was removed")),
        "{:?}",
        after[before]
    );
}

#[tokio::test]
async fn a_python_version_that_uses_a_standard_module_it_never_imports_gets_the_import() {
    let view = reply().call(
        "file_editor",
        json!({"command": "view", "path": "config.py"}),
    );
    let without = "PORT = int(os.environ.get(\"PORT\", \"3000\"))\n";
    let (h, _) = run_task(vec![python(TEST_CHECK), sh(CHECK), python(without), view]).await;
    let tried = candidates(&h);
    assert_eq!(tried.len(), 1, "{tried:?}");
    assert_eq!(tried[0].outcome, CandidateOutcome::Passed);
    assert_eq!(config(&h), format!("import os\n{without}"));
}

#[tokio::test]
async fn a_version_of_the_second_file_is_asked_and_tried_on_top_of_the_first_ones() {
    // The port is read in app.py: the task needs config.py's default and app.py's
    // override. The first file's version keeps the tests passing, but the check fails
    // until the second file is changed too.
    let app = "import config\n\n\ndef port():\n    return config.PORT\n";
    let new_app = "import os\n\nimport config\n\n\ndef port():\n    return int(os.environ.get(\"PORT\", config.PORT))\n";
    let check = "python3 -c 'import app; assert app.port() == 3000' && PORT=4000 python3 -c 'import app; assert app.port() == 4000'";
    let default_only = "PORT = 3000\n";
    let finish = reply().call("finish", json!({"message": "done"}));
    let mut h = Harness::run_mode(vec![
        no_code(),
        sh(check),
        python(default_only),
        python(BREAKS),
        python(new_app),
        finish,
    ])
    .await;
    h.write("app.py", app);
    passing_repo(&h);
    equip(&mut h);
    let outcome = h.run(TASK).await;

    let tried = candidates(&h);
    let outcomes: Vec<_> = tried.iter().map(|c| c.outcome.clone()).collect();
    let failed = CandidateOutcome::Failed { exit_code: Some(1) };
    assert_eq!(
        outcomes,
        after_no_check(vec![
            failed.clone(),
            failed,
            CandidateOutcome::Unverified,
            CandidateOutcome::Passed
        ])
    );
    assert_eq!(tried[3].path, "config.py");
    assert_eq!(tried[4].path, "app.py");
    assert_eq!(config(&h), default_only);
    let written = std::fs::read_to_string(h.workspace.path().join("app.py")).unwrap();
    assert_eq!(written, new_app);
    // The second file's version was asked with the first one shown, for the rest.
    let requests = h.server.chat_requests();
    let asked = requests[4].json()["messages"][0]["content"].to_string();
    assert!(
        asked.contains("config.py is already changed for the task")
            && asked.contains("PORT = 3000")
            && asked.contains("Write app.py changed what the task still needs, whole"),
        "{asked}"
    );
    assert_eq!(requests.len(), 6);
    let summary = outcome.summary.unwrap();
    assert!(
        summary.contains("wright wrote config.py anew")
            && summary.contains("wright wrote app.py anew"),
        "{summary}"
    );
}
