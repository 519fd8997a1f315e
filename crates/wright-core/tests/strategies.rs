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
    assert_eq!(h.said(), vec![wright_core::NUDGE.to_string()]);
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
