//! Help turned on during a run (`wright_strategies::AssistWhenNeeded`), in process: a model that
//! loops gets the tests run after its next call, logged as an `assist` decision and
//! wright's own first look; the check of the work follows its edits from there; a model
//! that does not loop gets nothing; a resumed conversation decides nothing again.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::reply;
use harness::Harness;
use serde_json::json;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_protocol::Need;
use wright_protocol::Source;
use wright_strategies::AssistWhenNeeded;
use wright_testkit::Reply;

fn terminal(command: &str) -> Reply {
    reply().call("terminal", json!({"command": command}))
}

fn finish() -> Reply {
    reply().call("finish", json!({"message": "done"}))
}

fn fix_add() -> Reply {
    reply().call(
        "file_editor",
        json!({"command": "str_replace", "path": "calc.py", "old_str": "a - b", "new_str": "a + b"}),
    )
}

/// A harness whose `pytest` fails until `calc.py` adds, watched by the strategy.
async fn watched(script: Vec<Reply>) -> Harness {
    let mut h = Harness::run_mode(script).await;
    h.write("calc.py", "def add(a, b):\n    return a - b\n");
    let calc = h.workspace.path().join("calc.py");
    h.shell.reacts(move |command| {
        let fixed = std::fs::read_to_string(&calc).is_ok_and(|text| text.contains("a + b"));
        command.contains("pytest").then(|| match fixed {
            true => (0, "1 passed".into()),
            false => (1, "FAILED test_calc.py::test_add\n1 failed".into()),
        })
    });
    h.conversation.add_strategy(Box::new(AssistWhenNeeded::new(
        "pytest".into(),
        vec!["first_look".into(), "retest".into()],
    )));
    h
}

/// The steps after which wright ran the first look, and the decisions logged.
fn looks(h: &Harness) -> (Vec<u32>, Vec<Need>) {
    let steps = h
        .events()
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Action { step, call_id, .. }
                if e.source == Source::Environment && call_id == "first-look" =>
            {
                Some(*step)
            }
            _ => None,
        })
        .collect();
    let needs = h
        .events()
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Assist(decision) => Some(decision.need.clone()),
            _ => None,
        })
        .collect();
    (steps, needs)
}

#[tokio::test]
async fn a_loop_turns_the_tests_on_after_the_next_call_and_the_check_follows() {
    let script = vec![
        terminal("ls"),
        terminal("ls"),
        terminal("ls"),
        terminal("cat calc.py"),
        fix_add(),
        finish(),
    ];
    let mut h = watched(script).await;
    let outcome = h.run("fix add").await;
    assert_eq!(outcome.state, AgentState::Finished, "{:?}", h.results());
    let (steps, needs) = looks(&h);
    assert_eq!(steps, vec![4]);
    assert!(
        matches!(&needs[..], [Need::Loop { pattern }] if pattern.contains("ls")),
        "{needs:?}"
    );
    // The decision is logged before the tests it turns on.
    let at = |wanted: fn(&EventBody) -> bool| h.events().iter().position(|e| wanted(&e.body));
    assert!(
        at(|b| matches!(b, EventBody::Assist(_)))
            < at(|b| matches!(b, EventBody::Action { call_id, .. } if call_id == "first-look"))
    );
    // The model read the failure with that step's results, and the edit was checked.
    let requests = h.server.chat_requests();
    let fifth = requests[4].json().to_string();
    assert!(
        fifth
            .contains("After that step, wright ran the tests with `pytest`; it exited with code 1"),
        "{fifth}"
    );
    assert!(h
        .events()
        .iter()
        .any(|e| matches!(&e.body, EventBody::Check(check) if check.exit_code == Some(0))));
}

#[tokio::test]
async fn a_model_that_needs_nothing_gets_nothing_and_a_resume_decides_nothing_again() {
    let mut calm = watched(vec![terminal("ls"), fix_add(), finish()]).await;
    calm.run("fix add").await;
    assert_eq!(looks(&calm), (vec![], vec![]));

    // Decided in the first process; the second reads it from the log (the strategy given
    // again, as a front end would) and runs nothing more, looping or not.
    let mut first = watched(vec![
        terminal("ls"),
        terminal("ls"),
        terminal("ls"),
        terminal("pwd"),
    ])
    .await;
    first.run_steps(Some("fix add"), 4).await;
    assert_eq!(looks(&first).0, vec![4]);
    let mut resumed = first
        .resume(vec![
            terminal("ls"),
            terminal("ls"),
            terminal("ls"),
            fix_add(),
            finish(),
        ])
        .await;
    resumed
        .conversation
        .add_strategy(Box::new(AssistWhenNeeded::new(
            "pytest".into(),
            vec!["first_look".into()],
        )));
    let outcome = resumed.run_steps(None, 10).await;
    assert_eq!(
        outcome.state,
        AgentState::Finished,
        "{:?}",
        resumed.results()
    );
    assert_eq!(looks(&resumed).0, vec![4], "no second look");
    assert_eq!(looks(&resumed).1.len(), 1);
}
