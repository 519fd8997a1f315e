//! The work checked by wright: when the first look failed, wright runs its command again
//! after each edit of the code, and the model reads the verdict after the edit's result;
//! a `finish` while it still fails is sent back with the failure, twice, and the next one
//! stops the run (exit 3), never finished — on resume too; `--retest off` takes the
//! model's word.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use crate::first_look::failing_python_repo;
use crate::first_look::run_as;
use crate::first_look::server;
use crate::first_look::FIXED;
use serde_json::json;
use serde_json::Value;
use wright_protocol::Check;
use wright_protocol::CheckMoment;
use wright_protocol::EventBody;
use wright_protocol::StopReason;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

fn edit(old: &str, new: &str) -> Reply {
    reply().call(
        "file_editor",
        json!({"command": "str_replace", "path": "export.py", "old_str": old, "new_str": new}),
    )
}

/// A run of the small model on the failing repository, its answer about the failure
/// (tested in reading.rs) left out.
async fn run_small(h: &Harness, server: &ScriptedServer, extra: &[&str]) -> std::process::Output {
    let args = [&["--reading", "off"][..], extra].concat();
    run_as(h, &server.url(), "qwen2.5-coder-1.5b", &args).await
}

fn checks(h: &Harness) -> Vec<Check> {
    h.events()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::Check(check) => Some(check),
            _ => None,
        })
        .collect()
}

/// The content of the last `tool` message of a request.
fn last_tool_result(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_each_edit_of_the_code_the_model_reads_whether_the_tests_pass_now() {
    let h = Harness::new();
    failing_python_repo(&h);
    let server = server(vec![
        // A wrong fix, then the right one, then finish.
        edit("r[:-1]", "r[1:]"),
        edit("r[1:]", "r"),
        reply().call("finish", json!({"message": "fixed"})),
    ])
    .await;
    let output = run_small(&h, &server, &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let requests = server.chat_requests();
    let after_wrong = last_tool_result(&requests[1].json());
    assert!(
        after_wrong.contains(
            "\n\n[wright ran `python3 -m unittest` again after this edit: it still fails (exit 1):]\n"
        ),
        "{after_wrong}"
    );
    assert!(
        after_wrong.contains("AssertionError: '2,3' != '1,2,3'"),
        "{after_wrong}"
    );
    let after_fix = last_tool_result(&requests[2].json());
    assert!(
        after_fix.contains("[wright ran `python3 -m unittest` again after this edit: it passes now (OK). If the task asked for nothing more, call finish.]"),
        "{after_fix}"
    );
    // Each request still extends the one before: the verdicts are logged, not made up.
    for pair in requests.windows(2) {
        let previous = &pair[0].body;
        assert!(pair[1].body.starts_with(&previous[..previous.len() - 2]));
    }

    let checks = checks(&h);
    let seen: Vec<(CheckMoment, Option<i32>)> =
        checks.iter().map(|c| (c.moment, c.exit_code)).collect();
    assert_eq!(
        seen,
        vec![
            (CheckMoment::AfterEdit, Some(1)),
            (CheckMoment::AfterEdit, Some(0)),
            (CheckMoment::BeforeFinish, Some(0)),
        ]
    );
    assert!(
        stderr(&output).contains("→ check after the edit: `python3 -m unittest` still fails (exit 1): FAILED (failures=1)"),
        "{}",
        stderr(&output)
    );
    let shown = h.wright(&["show", &h.conversation_id()], &[]).await;
    assert!(
        stdout(&shown).contains("[check before finish: `python3 -m unittest` passes: OK]"),
        "{}",
        stdout(&shown)
    );
    let id = h.conversation_id();
    let fixed = git(h.repo(), &["show", &format!("wright/{id}:export.py")]);
    assert_eq!(fixed, FIXED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finishing_while_the_tests_fail_is_sent_back_twice_then_the_run_stops_unfinished() {
    let h = Harness::new();
    failing_python_repo(&h);
    let finish = || reply().call("finish", json!({"message": "the tests pass"}));
    let server = server(vec![
        reply().call("terminal", json!({"command": "ls"})),
        finish(),
        finish(),
        finish(),
    ])
    .await;
    let output = run_small(&h, &server, &[]).await;
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stdout(&output).contains(
            "the model called finish 3 times while `python3 -m unittest` still failed; the task is not done. Resume with a hint: wright resume"
        ),
        "{}",
        stdout(&output)
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    for request in &requests[2..] {
        let sent_back = last_tool_result(&request.json());
        assert!(
            sent_back.starts_with("ERROR: [wright ran `python3 -m unittest` before taking this finish: it still fails (exit 1):]\n"),
            "{sent_back}"
        );
        assert!(
            sent_back.ends_with("The task is not done: fix the code so that it passes (do not weaken the tests), then call finish."),
            "{sent_back}"
        );
    }
    let events = h.events();
    let stop = events.iter().rev().find_map(|e| match &e.body {
        EventBody::State { stop, .. } => stop.clone(),
        _ => None,
    });
    assert_eq!(
        stop,
        Some(StopReason::ChecksFail {
            command: "python3 -m unittest".into(),
            finishes: 3
        })
    );
    assert_eq!(checks(&h).len(), 3);

    // Resumed, the check still holds: the fix passes it and the finish is taken.
    let fixing = crate::first_look::server(vec![
        edit("r[:-1]", "r"),
        reply().call("finish", json!({"message": "fixed now"})),
    ])
    .await;
    let id = h.conversation_id();
    let resumed = h
        .wright(
            &[
                "resume",
                &id,
                "--base-url",
                &fixing.url(),
                "fix export.py, not the test",
            ],
            &[],
        )
        .await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let moments: Vec<(CheckMoment, Option<i32>)> = checks(&h)
        .iter()
        .skip(3)
        .map(|c| (c.moment, c.exit_code))
        .collect();
    assert_eq!(
        moments,
        vec![
            (CheckMoment::AfterEdit, Some(0)),
            (CheckMoment::BeforeFinish, Some(0))
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_retest_off_the_model_s_finish_is_taken_as_before() {
    let h = Harness::new();
    failing_python_repo(&h);
    let server = server(vec![
        reply().call("terminal", json!({"command": "ls"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await;
    let output = run_small(&h, &server, &["--retest", "off"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(checks(&h).is_empty());
    // A bad value is refused with the choices, before anything runs.
    let refused = run_as(
        &h,
        &server.url(),
        "qwen2.5-coder-1.5b",
        &["--retest", "maybe"],
    )
    .await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("--retest"),
        "{}",
        stderr(&refused)
    );
}
