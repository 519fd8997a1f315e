//! The first look and what follows a failing one, in process (see `harness`): the test
//! command run before step 1, the model asked apart which line causes the failure, the
//! versions of the failing function tried, and a conversation killed while versions were
//! in place, resumed by a new process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::reply;
use harness::Harness;
use serde_json::json;
use std::time::Duration;
use wright_protocol::Candidate;
use wright_protocol::CandidateOutcome;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_strategies::Help;
use wright_strategies::FIRST_LOOK_CALL;
use wright_testkit::Reply;

const STUBS: &str = "def double(x):\n    raise NotImplementedError\n\n\ndef total(xs):\n    raise NotImplementedError\n";
const DOUBLE: &str = "def double(x):\n    return 2 * x";
const TOTAL: &str = "def total(xs):\n    return sum(xs)";
const TEST: &str = "python3 -m unittest";

/// Two stubs in ops.py: the test fails in `double` first, then, once it is written, in
/// `total`. The shell runs the real test for any command that names it, and shows a
/// failure as the terminal tool does (where it failed first, the workspace's lines marked).
fn two_stubs(h: &Harness) {
    h.write("ops.py", STUBS);
    h.write(
        "test_ops.py",
        "import unittest\nfrom ops import double, total\n\n\nclass T(unittest.TestCase):\n    def test_ops(self):\n        self.assertEqual(total([double(1), double(2)]), 6)\n",
    );
    let root = h.workspace.path().to_path_buf();
    let workspace = wright_tools::Workspace::new(&root).unwrap();
    h.shell.reacts(move |command| {
        command.contains("unittest").then(|| {
            let ran = std::process::Command::new("python3")
                .args(["-m", "unittest"])
                .current_dir(&root)
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .output()
                .expect("python3");
            let output = format!(
                "{}{}",
                String::from_utf8_lossy(&ran.stdout),
                String::from_utf8_lossy(&ran.stderr)
            );
            let code = ran.status.code().unwrap_or(1);
            let shown = match wright_tools::failure::read(&output, &workspace) {
                Some((header, marked)) if code != 0 => format!("{header}\n{marked}"),
                _ => output,
            };
            (code, shown)
        })
    });
}

fn finish() -> Reply {
    reply().call("finish", json!({"message": "done"}))
}

fn version(code: &str) -> Reply {
    reply().text(&format!("```python\n{code}\n```"))
}

/// The first looks in the log: (source, step, call id).
fn first_looks(h: &Harness) -> usize {
    h.events()
        .iter()
        .filter(|e| {
            matches!(&e.body, EventBody::Action { call_id, step: 0, .. }
                if call_id == FIRST_LOOK_CALL && e.source == Source::Environment)
        })
        .count()
}

fn candidates(h: &Harness) -> Vec<Candidate> {
    h.events()
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Candidate(candidate) => Some(candidate.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_first_look_runs_once_before_step_one_and_a_resumed_conversation_does_not_look_again() {
    let mut h = Harness::run_mode(vec![finish()]).await;
    h.shell
        .answers("pytest", 1, "FAILED test_calc.py::test_add");
    h.conversation.look_first("pytest".into());
    h.run("fix it").await;
    assert_eq!(first_looks(&h), 1);
    // Logged before the model's first request, as wright's own call.
    let look = h
        .events()
        .iter()
        .position(|e| matches!(&e.body, EventBody::Observation { call_id, .. } if call_id == FIRST_LOOK_CALL))
        .unwrap();
    let step = h
        .events()
        .iter()
        .position(|e| e.source == Source::Agent)
        .unwrap();
    assert!(look < step, "the first look comes before step 1");
    // A new process, its front end asking for the first look again: the log says it was
    // made, so it is not made again.
    let mut h = h.resume(vec![finish()]).await;
    h.conversation.look_first("pytest".into());
    h.run_steps(Some("and now?"), 5).await;
    assert_eq!(first_looks(&h), 1);
}

#[tokio::test]
async fn a_failing_first_look_is_read_apart_and_the_answer_logged() {
    let said = "Line 2 of ops.py adds 1 too many.";
    let mut h = Harness::run_mode(vec![reply().text(said), finish()]).await;
    two_stubs(&h);
    // A wrong function rather than a stub: the test's own line fails, calling it.
    h.write(
        "ops.py",
        "def double(x):\n    return x + x + 1\n\n\ndef total(xs):\n    return sum(xs)\n",
    );
    h.conversation.look_first(TEST.into());
    h.conversation.read_first_failure(true);
    h.run("make the test pass").await;
    let readings: Vec<_> = h
        .events()
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Reading(reading) => Some(reading.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(readings.len(), 1, "{readings:?}");
    assert_eq!(readings[0].call_id, FIRST_LOOK_CALL);
    assert_eq!(readings[0].path, "ops.py");
    assert_eq!(readings[0].answer, said);
    // Asked apart: no tools, the question alone.
    let asked = h.server.chat_requests()[0].json();
    assert!(asked
        .get("tools")
        .is_none_or(|tools| tools.as_array().is_some_and(Vec::is_empty)));
    assert_eq!(asked["messages"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn versions_are_tried_function_after_function_until_the_test_passes() {
    let mut h = Harness::run_mode(vec![version(DOUBLE), version(TOTAL), finish()]).await;
    two_stubs(&h);
    h.conversation.look_first(TEST.into());
    h.conversation.try_candidates(true);
    h.run("make the test pass").await;
    let outcomes: Vec<_> = candidates(&h).into_iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        vec![
            CandidateOutcome::FailsFurther {
                next: "total".into()
            },
            CandidateOutcome::Passed,
        ]
    );
    let ops = std::fs::read_to_string(h.workspace.path().join("ops.py")).unwrap();
    assert_eq!(ops, format!("{DOUBLE}\n\n\n{TOTAL}\n"));
    // Settled by the log: no record of versions in place is left.
    assert!(!h
        .log_path()
        .with_file_name("versions_in_place.json")
        .exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_killed_while_a_version_is_in_place_puts_the_file_back_when_resumed() {
    // The second version is asked for while the first, which failed further on, is in
    // place; the model takes long to answer, and the process dies meanwhile.
    let slow = Reply::Delayed(Duration::from_secs(60), Box::new(version(TOTAL)));
    let mut h = Harness::run_mode(vec![version(DOUBLE), slow]).await;
    two_stubs(&h);
    h.conversation.look_first(TEST.into());
    h.conversation.try_candidates(true);
    {
        let server = &h.server;
        let asked_twice = async {
            while server.chat_requests().len() < 2 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        let limits = wright_core::Limits {
            max_steps: 5,
            max_tokens: None,
            max_time: None,
            max_cost: None,
        };
        let cancel = tokio_util::sync::CancellationToken::new();
        let mut quiet = harness::Quiet;
        tokio::select! {
            _ = h.conversation.proceed(Some("make the test pass"), limits, &cancel, &mut quiet) => {
                panic!("the run ended before it was killed")
            }
            // Dropping the run in flight is the kill: nothing after this point runs.
            _ = asked_twice => {}
        }
    }
    let ops = h.workspace.path().join("ops.py");
    assert!(std::fs::read_to_string(&ops).unwrap().contains(DOUBLE));
    assert!(h
        .log_path()
        .with_file_name("versions_in_place.json")
        .exists());
    let before = candidates(&h).len();
    // A new process resumes, its front end asking for the same help again.
    let mut h = h.resume(vec![finish()]).await;
    h.conversation.look_first(TEST.into());
    h.conversation.try_candidates(true);
    h.run_steps(None, 5).await;
    assert_eq!(std::fs::read_to_string(&ops).unwrap(), STUBS);
    let after = candidates(&h);
    assert_eq!(
        after.len(),
        before + 1,
        "one candidate says what was put back"
    );
    let put_back = after.last().unwrap();
    assert!(
        matches!(&put_back.outcome, CandidateOutcome::NotTried { why } if why.contains("wright stopped while versions were in place")),
        "{put_back:?}"
    );
    assert_eq!(put_back.path, "ops.py");
    // The same decision as the uninterrupted run: the first look was made; none again.
    assert_eq!(first_looks(&h), 1);
    assert!(!h
        .log_path()
        .with_file_name("versions_in_place.json")
        .exists());
}

#[tokio::test]
async fn once_a_version_of_the_function_under_test_fails_the_next_request_points_at_its_helpers() {
    // The bug is in `halve`, a helper imported from another module; the model's first
    // version rewrites `share` (the method at the end of the test's chain of calls) and
    // fails; the second request says so and points at `halve`.
    let share = "    def share(self):\n        return halve(self.amount) + 0";
    let halve = "def halve(x):\n    return x / 2";
    let mut h = Harness::run_mode(vec![version(share), version(halve), finish()]).await;
    two_stubs(&h);
    h.write("split.py", "def halve(x):\n    return x // 3\n");
    h.write(
        "ops.py",
        "from split import halve\n\n\nclass Bill:\n    def __init__(self):\n        self.amount = 0\n\n    def add(self, amount):\n        self.amount += amount\n        return self\n\n    def share(self):\n        return halve(self.amount)\n",
    );
    h.write(
        "test_ops.py",
        "import unittest\nfrom ops import Bill\n\n\nclass T(unittest.TestCase):\n    def test_share(self):\n        self.assertEqual(Bill().add(9).share(), 4.5)\n",
    );
    h.conversation.look_first(TEST.into());
    h.conversation.try_candidates(true);
    h.run("make the test pass").await;
    let tried = candidates(&h);
    let names: Vec<&str> = tried.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["share", "halve"], "{tried:#?}");
    assert!(matches!(tried[0].outcome, CandidateOutcome::Failed { .. }));
    assert_eq!(tried[1].outcome, CandidateOutcome::Passed);
    // The first request asks about the method first; the second points at the helper.
    assert!(
        !tried[0].question.contains("was tried"),
        "{}",
        tried[0].question
    );
    assert!(
        tried[1]
            .question
            .contains("A version of `share` was tried and `python3 -m unittest` still failed, so the cause is not there: it is in `halve`. First say"),
        "{}",
        tried[1].question
    );
    let split = std::fs::read_to_string(h.workspace.path().join("split.py")).unwrap();
    assert_eq!(split, format!("{halve}\n"));
}
