//! The strategies, in process (see `harness`): each decision as the model reads it in the
//! log, and the same decision after the conversation is resumed by a new process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::reply;
use harness::Harness;
use serde_json::json;
use wright_core::strategy::AtFinish;
use wright_core::strategy::Context;
use wright_core::strategy::Finish;
use wright_core::strategy::Strategy;
use wright_core::StoreError;
use wright_protocol::AgentState;
use wright_protocol::StopReason;
use wright_strategies::Help;
use wright_testkit::Reply;

const TEST_NOTE: &str = "[This is a test file.";

fn edit_test(text: &str) -> Reply {
    reply().call(
        "file_editor",
        json!({"command": "create", "path": "tests/test_calc.py", "file_text": text}),
    )
}

fn finish() -> Reply {
    reply().call("finish", json!({"message": "done"}))
}

fn terminal(command: &str) -> Reply {
    reply().call("terminal", json!({"command": command}))
}

/// How many results carry the note after a test edit.
fn notes(h: &Harness) -> usize {
    h.results_of("file_editor")
        .iter()
        .filter(|text| text.contains(TEST_NOTE))
        .count()
}

#[tokio::test]
async fn a_test_edit_is_noted_once_and_a_resumed_conversation_does_not_say_it_again() {
    // Uninterrupted: two edits of a test, one note.
    let script = vec![edit_test("a = 1\n"), edit_test("a = 2\n"), finish()];
    let mut whole = Harness::run_mode(script).await;
    whole.run("fix the calculator").await;
    assert_eq!(notes(&whole), 1);

    // Stopped after the first edit, resumed by a new process: the note is found in the
    // log, not said again.
    let mut first = Harness::run_mode(vec![edit_test("a = 1\n")]).await;
    let outcome = first.run_steps(Some("fix the calculator"), 1).await;
    assert!(matches!(outcome.stop, StopReason::MaxSteps { .. }));
    assert_eq!(notes(&first), 1);
    let mut resumed = first.resume(vec![edit_test("a = 2\n"), finish()]).await;
    let outcome = resumed.run_steps(None, 5).await;
    assert_eq!(outcome.state, AgentState::Finished);
    assert_eq!(notes(&resumed), 1, "{:?}", resumed.results());
    assert_eq!(
        resumed.results_of("file_editor").len(),
        whole.results_of("file_editor").len()
    );
}

#[tokio::test]
async fn a_finish_before_anything_was_done_is_refused_and_what_was_done_survives_a_resume() {
    let mut h = Harness::run_mode(vec![finish(), terminal("ls")]).await;
    h.run_steps(Some("list the files"), 2).await;
    let finishes = h.results_of("finish");
    assert!(finishes[0].starts_with("finish was called before anything was done"));

    // Resumed: the `ls` that ran is read back from the log, the finish is taken.
    let mut h = h.resume(vec![finish()]).await;
    let outcome = h.run_steps(None, 3).await;
    assert_eq!(outcome.state, AgentState::Finished, "{:?}", h.results());
}

#[tokio::test]
async fn a_reply_without_a_call_is_sent_back_once_then_the_run_stops() {
    let script = vec![
        reply().text("I think it works."),
        reply().text("Still thinking."),
    ];
    let mut h = Harness::run_mode(script).await;
    let outcome = h.run("fix it").await;
    assert_eq!(outcome.stop, StopReason::NoToolCall);
    assert_eq!(h.said(), vec![wright_strategies::NUDGE.to_string()]);
    assert_eq!(outcome.summary.as_deref(), Some("Still thinking."));

    // In a chat the same reply is the answer.
    let mut chat = Harness::chat_mode(vec![reply().text("It works.")]).await;
    let outcome = chat.run("does it work?").await;
    assert_eq!(outcome.stop, StopReason::Answered);
    assert!(chat.said().is_empty());
}

#[tokio::test]
async fn a_finish_right_after_a_failing_command_is_sent_back_once_per_run() {
    let script = vec![terminal("false"), finish(), finish()];
    let mut h = Harness::run_mode(script).await;
    h.shell.answers("false", 1, "");
    let outcome = h.run("make it pass").await;
    assert_eq!(outcome.state, AgentState::Finished);
    let finishes = h.results_of("finish");
    assert_eq!(finishes.len(), 2);
    assert!(finishes[0].starts_with("The last command failed (exit 1): false."));

    // A new run (resumed by a new process) asks once again: the latch is the run's.
    let mut h = h.resume(vec![terminal("false"), finish(), finish()]).await;
    h.shell.answers("false", 1, "");
    h.run("and now?").await;
    let finishes = h.results_of("finish");
    assert_eq!(finishes.len(), 4);
    assert!(finishes[2].starts_with("The last command failed (exit 1): false."));
}

#[tokio::test]
async fn a_loop_is_named_once_then_the_run_stops_as_stuck() {
    let script = vec![terminal("ls"); 6];
    let mut h = Harness::run_mode(script).await;
    let outcome = h.run("list").await;
    assert_eq!(outcome.state, AgentState::Stuck);
    let told: Vec<String> = h
        .said()
        .into_iter()
        .filter(|text| text.starts_with("You are going in circles"))
        .collect();
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].contains("the same action gave the same result 3 times"));
}

/// A strategy from outside core: sends every `finish` back once with its own words.
#[derive(Default)]
struct SecondThoughts {
    asked: bool,
}

#[async_trait::async_trait]
impl Strategy for SecondThoughts {
    fn name(&self) -> &'static str {
        "second-thoughts"
    }

    async fn at_finish(
        &mut self,
        _cx: &mut Context<'_>,
        _finish: &Finish,
    ) -> Result<AtFinish, StoreError> {
        if std::mem::replace(&mut self.asked, true) {
            return Ok(AtFinish::Continue);
        }
        Ok(AtFinish::SendBack("Are you sure?".into()))
    }
}

#[tokio::test]
async fn a_strategy_registered_from_outside_decides_at_finish_through_the_log() {
    let mut h = Harness::run_mode(vec![terminal("ls"), finish(), finish()]).await;
    h.conversation
        .add_strategy(Box::new(SecondThoughts::default()));
    let outcome = h.run("list").await;
    assert_eq!(outcome.state, AgentState::Finished);
    assert_eq!(h.results_of("finish")[0], "Are you sure?");
}

/// Says a test was removed, whatever the workspace holds.
struct TestRemoved;

impl wright_core::Inspector for TestRemoved {
    fn changes(&self) -> Vec<wright_core::FileChange> {
        vec![wright_core::FileChange {
            path: "tests/test_calc.py".into(),
            added: Vec::new(),
            removed: vec!["def test_add():".into()],
        }]
    }
}

#[tokio::test]
async fn a_removed_test_sends_the_finish_back_once_before_the_failed_command_is_named() {
    let script = vec![terminal("false"), finish(), finish(), finish()];
    let mut h = Harness::run_mode(script).await;
    h.shell.answers("false", 1, "");
    h.conversation.set_inspector(Box::new(TestRemoved));
    let outcome = h.run("fix the calculator").await;
    assert_eq!(outcome.state, AgentState::Finished);
    let finishes = h.results_of("finish");
    // The review first (it is asked before the strategies added after it), then the
    // failed command, then the finish is taken.
    assert!(finishes[0].starts_with("Before finishing, look at your own changes."));
    assert!(finishes[1].starts_with("The last command failed (exit 1): false."));
    assert_eq!(finishes[2], "Task finished.");
    let review = outcome.review.expect("the review in the outcome");
    assert_eq!(
        review.tests_removed,
        vec!["tests/test_calc.py: def test_add():"]
    );
}

#[tokio::test]
async fn a_look_written_as_a_command_runs_as_the_editor_and_foreign_arguments_are_named() {
    let script = vec![
        terminal("file_editor view calc.py"),
        reply().call("terminal", json!({"command": "ls", "path": "calc.py"})),
        finish(),
    ];
    let mut h = Harness::run_mode(script).await;
    h.write("calc.py", "def add(a, b):\n    return a - b\n");
    h.run("read calc.py").await;
    let shell = h.results_of("terminal");
    // The look ran as `file_editor` `view`: the file is in its result, the note first.
    assert!(shell[0].contains("return a - b"), "{shell:?}");
    assert!(shell[0].contains("file_editor"), "{shell:?}");
    assert!(
        shell[1].starts_with("terminal has no parameter `path`"),
        "{shell:?}"
    );
}

#[tokio::test]
async fn a_failed_edit_after_the_check_passes_is_told_the_failure_is_fixed() {
    let fix = || {
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "calc.py", "old_str": "a - b", "new_str": "a + b"}),
        )
    };
    let mut h = Harness::run_mode(vec![fix(), fix(), finish()]).await;
    h.write("calc.py", "def add(a, b):\n    return a - b\n");
    let calc = h.workspace.path().join("calc.py");
    // The tests pass once the code adds.
    h.shell.reacts(move |command| {
        let fixed = std::fs::read_to_string(&calc).is_ok_and(|text| text.contains("a + b"));
        command.contains("pytest").then(|| {
            if fixed {
                (0, "1 passed".into())
            } else {
                (1, "1 failed".into())
            }
        })
    });
    h.conversation.look_first("pytest".into());
    let outcome = h.run("fix add").await;
    assert_eq!(outcome.state, AgentState::Finished, "{:?}", h.results());
    let edits = h.results_of("file_editor");
    assert!(!edits[0].contains("passes now"), "{edits:?}");
    assert!(
        edits[1].contains("[`pytest` passes now (its last run): the failure is fixed"),
        "{edits:?}"
    );
}

/// Asks for a change each time, with one finding.
struct Picky;

#[async_trait::async_trait]
impl wright_core::second_look::Reviewer for Picky {
    fn model(&self) -> String {
        "picky".into()
    }

    async fn review(
        &self,
        task: &str,
        _cancel: tokio_util::sync::CancellationToken,
    ) -> Result<wright_core::second_look::Opinion, wright_core::second_look::NoVerdict> {
        Ok(wright_core::second_look::Opinion {
            verdict: wright_protocol::Verdict::RequestChanges,
            findings: vec![format!("'{task}' is not done: total() is off by one")],
            conversation: None,
        })
    }
}

#[tokio::test]
async fn the_second_look_comes_after_the_failed_command_and_its_findings_go_back_for_its_rounds() {
    let script = vec![terminal("false"), finish(), finish(), finish()];
    let mut h = Harness::run_mode(script).await;
    h.shell.answers("false", 1, "");
    // Whatever order the setters come in, the places are fixed: the reminder first.
    h.conversation.set_reviewer(std::sync::Arc::new(Picky), 1);
    h.conversation.set_require_finish(true);
    let outcome = h.run("fix total").await;
    assert_eq!(outcome.state, AgentState::Finished);
    let finishes = h.results_of("finish");
    assert!(finishes[0].starts_with("The last command failed (exit 1): false."));
    assert!(
        finishes[1].contains("total() is off by one"),
        "{finishes:?}"
    );
    assert_eq!(finishes[2], "Task finished.");
    let look = outcome
        .second_look
        .expect("the last verdict in the outcome");
    assert_eq!((look.round, look.sent_back), (2, false));
}

/// A harness whose `pytest` fails until `calc.py` adds, with the first look on it.
async fn failing_check(script: Vec<Reply>) -> Harness {
    let mut h = Harness::run_mode(script).await;
    h.write("calc.py", "def add(a, b):\n    return a - b\n");
    watch_calc(&h);
    h.conversation.look_first("pytest".into());
    h
}

/// `pytest` passes once `calc.py` adds.
fn watch_calc(h: &Harness) {
    let calc = h.workspace.path().join("calc.py");
    h.shell.reacts(move |command| {
        let fixed = std::fs::read_to_string(&calc).is_ok_and(|text| text.contains("a + b"));
        command.contains("pytest").then(|| match fixed {
            true => (0, "1 passed".into()),
            false => (1, "FAILED test_calc.py::test_add\n1 failed".into()),
        })
    });
}

fn fix_add() -> Reply {
    reply().call(
        "file_editor",
        json!({"command": "str_replace", "path": "calc.py", "old_str": "a - b", "new_str": "a + b"}),
    )
}

/// The checks wright ran, as (moment, passed), in order.
fn checks(h: &Harness) -> Vec<(wright_protocol::CheckMoment, bool)> {
    h.events()
        .iter()
        .filter_map(|e| match &e.body {
            wright_protocol::EventBody::Check(check) => Some((check.moment, check.passed())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_failing_check_sends_the_finish_back_and_it_is_taken_once_the_fix_makes_it_pass() {
    use wright_protocol::CheckMoment::AfterEdit;
    use wright_protocol::CheckMoment::BeforeFinish;
    let mut h = failing_check(vec![terminal("ls"), finish(), fix_add(), finish()]).await;
    let outcome = h.run("fix add").await;
    assert_eq!(outcome.state, AgentState::Finished, "{:?}", h.results());
    let finishes = h.results_of("finish");
    assert!(
        finishes[0].starts_with(
            "[wright ran `pytest` before taking this finish: it still fails (exit 1):]"
        ),
        "{finishes:?}"
    );
    assert!(finishes[0].contains("The task is not done"), "{finishes:?}");
    assert_eq!(finishes[1], "Task finished.");
    assert_eq!(
        checks(&h),
        vec![
            (BeforeFinish, false),
            (AfterEdit, true),
            (BeforeFinish, true)
        ]
    );

    // Turned off, nothing is run again and the first finish is taken.
    let mut off = failing_check(vec![terminal("ls"), finish()]).await;
    off.conversation.retest(false);
    let outcome = off.run("fix add").await;
    assert_eq!(outcome.state, AgentState::Finished);
    assert!(checks(&off).is_empty());
}

#[tokio::test]
async fn a_resumed_run_checks_the_command_found_in_the_log_and_ends_after_as_many_tries() {
    // Uninterrupted: two finishes sent back, the third ends the run, not finished.
    let script = vec![terminal("ls"), finish(), finish(), finish()];
    let mut whole = failing_check(script).await;
    let outcome = whole.run("fix add").await;
    let ends = StopReason::ChecksFail {
        command: "pytest".into(),
        finishes: 3,
    };
    assert_eq!(outcome.stop, ends, "{:?}", whole.results());

    // Stopped after one finish sent back; a new process resumes (no first look asked for
    // now): the command is read from the log, and the resumed run's finishes are sent
    // back as many times before it ends the same way.
    let mut first = failing_check(vec![terminal("ls"), finish()]).await;
    let outcome = first.run_steps(Some("fix add"), 2).await;
    assert!(matches!(outcome.stop, StopReason::MaxSteps { .. }));
    assert!(first.results_of("finish")[0].contains("it still fails"));
    let mut resumed = first.resume(vec![finish(), finish(), finish()]).await;
    let outcome = resumed.run_steps(None, 5).await;
    assert_eq!(outcome.stop, ends, "{:?}", resumed.results());
    let finishes = resumed.results_of("finish");
    assert_eq!(finishes.len(), 4);
    assert!(finishes[1..].iter().all(|f| f.contains("it still fails")));
    assert!(finishes[3].contains("The run stops here, not finished"));
}

/// A `Stop` hook that refuses a `finish` unless it is told a hook refused the last one.
struct SecondTryPasses;

impl wright_core::hooks::HookRunner for SecondTryPasses {
    fn run(
        &self,
        _hook: &wright_core::hooks::HookCommand,
        stdin: &[u8],
        _env: &[(String, String)],
    ) -> Result<wright_core::hooks::HookProcess, String> {
        let input: serde_json::Value = serde_json::from_slice(stdin).map_err(|e| e.to_string())?;
        let again = input["stop_hook_active"] == json!(true);
        Ok(wright_core::hooks::HookProcess {
            code: Some(if again { 0 } else { 2 }),
            stdout: Vec::new(),
            stderr: if again {
                Vec::new()
            } else {
                b"run the tests first".to_vec()
            },
            timed_out: false,
        })
    }
}

fn stop_hook(h: &mut Harness) {
    let set = wright_core::hooks::HookSet::parse(
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "check"}]}]}}"#,
        "hooks.json",
        wright_protocol::HookOrigin::User,
    )
    .unwrap();
    h.conversation
        .set_hooks(set, std::sync::Arc::new(SecondTryPasses));
}

#[tokio::test]
async fn a_stop_hook_that_refused_the_last_finish_is_told_so_after_a_resume() {
    // Stopped right after the hook refused a finish; a new process resumes.
    let mut first = Harness::run_mode(vec![terminal("ls"), finish()]).await;
    stop_hook(&mut first);
    first.run_steps(Some("list"), 2).await;
    assert!(
        first.results_of("finish")[0].contains("run the tests first"),
        "{:?}",
        first.results()
    );
    let mut resumed = first.resume(vec![finish(), finish()]).await;
    stop_hook(&mut resumed);
    let outcome = resumed.run_steps(None, 5).await;
    assert_eq!(outcome.state, AgentState::Finished);
    // The hook read `stop_hook_active: true` from the log: the first finish is taken.
    assert_eq!(
        resumed.results_of("finish").len(),
        2,
        "{:?}",
        resumed.results()
    );
}
