//! The summary must be true and the run stops when the work is done, in process (see
//! `harness`): a `finish` that claims a change while git sees none is sent back, then
//! ends the run as stopped; words that name a file the change does not touch get wright's
//! account beside them; once a version wright kept passes, the next call is the last.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::reply;
use harness::Harness;
use serde_json::json;
use wright_protocol::Account;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::StopReason;
use wright_strategies::Help;
use wright_strategies::TAKEN_AS_FINISH;
use wright_testkit::Reply;

const TEST: &str = "python3 -m unittest";

fn finish(message: &str) -> Reply {
    reply().call("finish", json!({"message": message}))
}

/// A look first: a `finish` before anything was done is refused by another strategy.
fn look() -> Reply {
    reply().call("terminal", json!({"command": "ls"}))
}

fn accounts(h: &Harness) -> Vec<Account> {
    h.events()
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Account(account) => Some(account.clone()),
            _ => None,
        })
        .collect()
}

/// The workspace as git reads it: `git status` prints `status` (exit 0).
fn git_status(h: &Harness, status: &str) {
    h.shell
        .answers("git -c core.fsmonitor=false status", 0, status);
}

#[tokio::test]
async fn a_change_claimed_with_no_file_changed_is_sent_back_then_stops_the_run_not_finished() {
    let claim = "We have added the --limit argument.";
    let mut h = Harness::run_mode(vec![look(), finish(claim), finish(claim)]).await;
    h.write("script.py", "print('hi')\n");
    git_status(&h, "");
    h.conversation.account(true);
    let outcome = h
        .run("add an option --limit N to script.py, default 5")
        .await;

    assert_eq!(outcome.state, AgentState::Stopped);
    assert_eq!(outcome.stop, StopReason::NothingChanged { finishes: 2 });
    let accounts = accounts(&h);
    assert_eq!(accounts.len(), 2, "{accounts:?}");
    assert!(accounts[0].sent_back && !accounts[1].sent_back);
    assert!(accounts
        .iter()
        .all(|a| a.claims_change && a.changed.is_empty()));
    let finishes = h.results_of("finish");
    assert!(
        finishes[0].contains("No file has changed") && finishes[0].contains("Make the change"),
        "{finishes:?}"
    );
    // wright's account in place of the model's words, which follow as said.
    let summary = outcome.summary.unwrap();
    assert!(
        summary.starts_with("[wright's account: no change was made: the diff is empty.]"),
        "{summary}"
    );
    assert!(summary.contains(claim), "{summary}");
}

#[tokio::test]
async fn words_that_name_a_file_the_change_does_not_touch_get_wrights_account_beside_them() {
    let said = "Updated config.py with the new default port.";
    let mut h = Harness::run_mode(vec![look(), finish(said)]).await;
    h.write("config.py", "PORT = 8080\n");
    h.write(".env", "PORT=3000\n");
    git_status(&h, "?? .env\n");
    h.conversation.account(true);
    let outcome = h.run("the default port must be 3000").await;

    assert_eq!(outcome.stop, StopReason::Finished);
    let accounts = accounts(&h);
    assert_eq!(accounts.len(), 1);
    assert_eq!(accounts[0].changed, vec![".env"]);
    assert_eq!(accounts[0].named_unchanged, vec!["config.py"]);
    assert_eq!(
        outcome.summary.unwrap(),
        format!("{said}\n[wright's account: the change touches .env; the model's message names config.py, which the change does not touch.]")
    );
}

#[tokio::test]
async fn true_words_no_claim_or_no_git_leave_the_summary_as_the_model_wrote_it() {
    for (said, status, exit) in [
        ("Fixed the port in config.py.", " M config.py\n", 0),
        ("The port is read from config.py.", "", 0),
        (
            "We have added the option.",
            "fatal: not a git repository",
            128,
        ),
    ] {
        let mut h = Harness::run_mode(vec![look(), finish(said)]).await;
        h.write("config.py", "PORT = 8080\n");
        h.shell
            .answers("git -c core.fsmonitor=false status", exit, status);
        h.conversation.account(true);
        let outcome = h.run("task").await;
        assert_eq!(outcome.stop, StopReason::Finished, "{said}");
        assert_eq!(outcome.summary.as_deref(), Some(said));
        // Where git cannot say, nothing is decided and nothing logged.
        assert_eq!(accounts(&h).len(), usize::from(exit == 0), "{said}");
    }
}

#[tokio::test]
async fn with_the_account_off_an_empty_claim_finishes_as_before() {
    let mut h = Harness::run_mode(vec![look(), finish("We have added it.")]).await;
    git_status(&h, "");
    let outcome = h.run("add an option").await;
    assert_eq!(outcome.stop, StopReason::Finished);
    assert!(accounts(&h).is_empty());
}

const STUB: &str = "def double(x):\n    raise NotImplementedError\n";
const DOUBLE: &str = "def double(x):\n    return 2 * x";
const TEST_FILE: &str = "import unittest\nfrom ops import double\n\n\nclass T(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(double(2), 4)\n";

/// A stub the test fails in; the scripted shell runs the real test for any command that
/// names it, and answers `git status` from the real files against the stub.
fn one_stub(h: &Harness) {
    h.write("ops.py", STUB);
    h.write("test_ops.py", TEST_FILE);
    let root = h.workspace.path().to_path_buf();
    let workspace = wright_tools::Workspace::new(&root).unwrap();
    h.shell.reacts(move |command| {
        if command.contains("git -c core.fsmonitor=false status") {
            let ops = std::fs::read_to_string(root.join("ops.py")).unwrap_or_default();
            return Some((0, if ops == STUB { "" } else { " M ops.py" }.to_string()));
        }
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

/// The model, handed a passing version, goes on editing the test file, then finishes.
fn keeps_editing() -> Vec<Reply> {
    vec![
        reply().text(&format!("```python\n{DOUBLE}\n```")),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "test_ops.py", "old_str": "double(2), 4", "new_str": "double(2), 4.0"}),
        ),
        reply().call("file_editor", json!({"command": "view", "path": "ops.py"})),
        finish("done"),
    ]
}

fn agent_calls(h: &Harness) -> usize {
    h.events()
        .iter()
        .filter(|e| e.source == Source::Agent && matches!(e.body, EventBody::Action { .. }))
        .count()
}

#[tokio::test]
async fn once_a_kept_version_passes_the_next_call_ends_the_run_through_finish() {
    let mut h = Harness::run_mode(keeps_editing()).await;
    one_stub(&h);
    h.conversation.look_first(TEST.into());
    h.conversation.try_candidates(true);
    h.conversation.account(true);
    h.conversation.stop_when_done(true);
    let outcome = h.run("make the test pass").await;

    assert_eq!(outcome.stop, StopReason::Finished);
    // One request for the version, one step: the edit the model wrote was taken as finish.
    assert_eq!(h.server.chat_requests().len(), 2);
    assert_eq!(agent_calls(&h), 1);
    let test = std::fs::read_to_string(h.workspace.path().join("test_ops.py")).unwrap();
    assert_eq!(test, TEST_FILE, "the test file is untouched");
    // Logged under the call the model made, its result saying it was taken as finish.
    assert!(
        h.results_of("file_editor")
            .iter()
            .any(|text| text.starts_with(TAKEN_AS_FINISH)),
        "{:?}",
        h.results()
    );
    // The report says what wright did.
    let summary = outcome.summary.unwrap();
    assert!(
        summary.contains("wright put in place a version of `double` in ops.py"),
        "{summary}"
    );
    assert!(summary.contains("the change touches ops.py"), "{summary}");
}

#[tokio::test]
async fn without_the_stop_the_model_goes_on_editing_after_the_version_passes() {
    let mut h = Harness::run_mode(keeps_editing()).await;
    one_stub(&h);
    h.conversation.look_first(TEST.into());
    h.conversation.try_candidates(true);
    let outcome = h.run("make the test pass").await;
    assert_eq!(outcome.stop, StopReason::Finished);
    assert_eq!(agent_calls(&h), 3);
}
