//! Candidate fixes: when the first look fails on a function defined in another file, wright
//! asks the model apart for that function corrected, tries each version with the failing
//! command in the sandbox, puts the file back after each that fails, and keeps the first
//! that passes, shown to the model after the failure — then asks no reading. A version
//! that fails, or an answer without the function, is not shown; `--candidates off` asks
//! for none.

use crate::common::first_user_message;
use crate::common::stderr;
use crate::common::Harness;
use crate::first_look::failing_python_repo;
use crate::first_look::run_as;
use crate::first_look::server;
use crate::first_look::FIXED;
use serde_json::json;
use std::time::Duration;
use wright_protocol::CandidateOutcome;
use wright_protocol::EventBody;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::Reply;

const BROKEN: &str = "def row(r):\n    return \",\".join(str(v) for v in r[:-1])";

pub(crate) fn candidates(h: &Harness) -> Vec<wright_protocol::Candidate> {
    h.events()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::Candidate(candidate) => Some(candidate),
            _ => None,
        })
        .collect()
}

/// The directory the one conversation worked in.
pub(crate) fn workspace_of(h: &Harness) -> String {
    h.events()
        .into_iter()
        .find_map(|e| match e.body {
            EventBody::Start(start) => Some(start.workspace),
            _ => None,
        })
        .unwrap()
}

/// The last message of a request, as JSON text.
pub(crate) fn last_message(request: &serde_json::Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string()
}

/// export.py as the run handed it over, on its branch.
fn on_branch(h: &Harness) -> String {
    let conversation = h.conversation_id();
    git(
        h.repo(),
        &["show", &format!("wright/{conversation}:export.py")],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_version_that_passes_stays_and_is_shown() {
    let h = Harness::new();
    failing_python_repo(&h);
    let server = server(vec![
        // Words without the function; a version that still fails; the same again; then
        // one that passes, written at a margin of its own.
        reply().text("The slice drops the last value."),
        reply().text("It drops a value.\n```python\ndef row(r):\n    return \",\".join(str(v) for v in r[1:])\n```"),
        reply().text("```python\ndef row(r):\n    return \",\".join(str(v) for v in r[1:])\n```"),
        reply().text("It leaves the last value out.\n```python\n  def row(r):\n      return \",\".join(str(v) for v in r)\n\n  print(row([1]))\n```"),
        reply().call("finish", json!({"message": "fixed"})),
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
            CandidateOutcome::NoCode,
            CandidateOutcome::Failed { exit_code: Some(1) },
            CandidateOutcome::Repeated,
            CandidateOutcome::Passed,
        ]
    );
    assert_eq!(tried[3].new_str.as_deref(), Some(FIXED.trim_end()));
    assert_eq!(tried[3].old_str, BROKEN);
    let requests = server.chat_requests();
    // Each asked apart: the task, the code, the failure; no tools, sampled.
    let asked = requests[0].json();
    let question = first_user_message(&asked);
    assert!(
        question.starts_with("Task: the test fails, fix it\n\nexport.py:\n```python\n"),
        "{question}"
    );
    assert!(
        question.contains("Then write the function `row` fixed, whole"),
        "{question}"
    );
    assert!(asked.get("tools").is_none(), "{asked}");
    assert_eq!(asked["temperature"], json!(0.7));
    // Words without code: the next try asks for the code after them; the one after it
    // asks afresh.
    let followed = requests[1].json();
    let messages = followed["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{followed}");
    assert_eq!(messages[1]["content"], "The slice drops the last value.");
    assert_eq!(
        messages[2]["content"],
        "You wrote no code. Now write the function `row` fixed, whole, in one ```python block."
    );
    assert!(
        tried[1].question.ends_with("[Then asked:]\nYou wrote no code. Now write the function `row` fixed, whole, in one ```python block."),
        "{}",
        tried[1].question
    );
    assert_eq!(requests[2].json()["messages"].as_array().unwrap().len(), 1);
    // The task's first message ends with the version that passed; no reading. The finish
    // is checked, and taken.
    let first = first_user_message(&requests[4].json());
    assert!(
        first.ends_with(&format!("wright put that version in place, and `python3 -m unittest` passes now. export.py now has:\n```\n{}\n```\nThe failure above is fixed: do not edit export.py again. If the task asks for nothing more, call finish now.]", FIXED.trim_end())),
        "{first}"
    );
    assert!(!first.contains("[Asked apart which line"), "{first}");
    assert_eq!(requests.len(), 5);
    // The failing versions were put back, the passing one stayed: handed over as the fix.
    let fixed = on_branch(&h);
    assert_eq!(fixed, FIXED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_version_passing_leaves_the_file_as_it_was_and_off_asks_for_none() {
    let h = Harness::new();
    failing_python_repo(&h);
    let failing = "```python\ndef row(r):\n    return \"\"\n```";
    let mut script: Vec<_> = (0..4)
        .map(|n| reply().text(&format!("{failing}\n# {n}")))
        .collect();
    script.push(reply().call(
        "file_editor",
        json!({"command": "view", "path": "export.py"}),
    ));
    script.push(reply().call("finish", json!({"message": "looked"})));
    let scripted = server(script).await;
    let extra = ["--candidates", "on", "--reading", "off", "--retest", "off"];
    run_as(&h, &scripted.url(), "qwen2.5-coder-1.5b", &extra).await;
    let tried = candidates(&h);
    assert_eq!(tried.len(), 4);
    assert_eq!(
        tried[0].outcome,
        CandidateOutcome::Failed { exit_code: Some(1) }
    );
    assert!(tried[1..]
        .iter()
        .all(|c| c.outcome == CandidateOutcome::Repeated));
    let requests = scripted.chat_requests();
    let first = first_user_message(&requests[4].json());
    assert!(!first.contains("Asked apart"), "{first}");
    // The view the model asked for reads the file as it was.
    let shown = requests[5].json().to_string();
    assert!(shown.contains("r[:-1]"), "{shown}");
    let workspace = workspace_of(&h);
    let now = std::fs::read_to_string(std::path::Path::new(&workspace).join("export.py")).unwrap();
    assert!(now.contains("r[:-1]"), "{now}");

    // Off: the first request is the task's.
    let h = Harness::new();
    failing_python_repo(&h);
    let server = server(vec![reply().call("finish", json!({"message": "done"}))]).await;
    run_as(
        &h,
        &server.url(),
        "qwen2.5-coder-1.5b",
        &["--candidates", "off", "--reading", "off", "--retest", "off"],
    )
    .await;
    assert!(candidates(&h).is_empty());
    assert!(server.chat_requests()[0].json().get("tools").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_the_version_needs_goes_in_with_it() {
    let uses_re = "def row(r):\n    return re.sub(\"x\", \"x\", \",\".join(str(v) for v in r))";
    // Written above the version, or not written: then the run's NameError names it, and
    // the version is run once more with it.
    for answer in [
        format!("```python\nimport re\n\n{uses_re}\n```"),
        format!("```python\n{uses_re}\n```"),
    ] {
        let h = Harness::new();
        failing_python_repo(&h);
        let server = server(vec![
            reply().text(&answer),
            reply().call("finish", json!({"message": "fixed"})),
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
        assert_eq!(tried[0].outcome, CandidateOutcome::Passed, "{answer}");
        assert_eq!(tried[0].imports.as_deref(), Some("import re"), "{answer}");
        let first = first_user_message(&server.chat_requests()[1].json());
        assert!(
            first.contains(&format!(
                "export.py now has:\n```\nimport re\n…\n{uses_re}\n```"
            )),
            "{first}"
        );
        let fixed = on_branch(&h);
        assert_eq!(fixed, format!("import re\n{uses_re}\n"), "{answer}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_helper_of_the_same_short_file_may_be_the_version_that_passes() {
    let h = Harness::new();
    let helper = "def cell(v):\n    return str(v)[:-1]";
    crate::first_look::python_repo(
        &h,
        &format!("{helper}\n\n\ndef row(r):\n    return \",\".join(cell(v) for v in r)\n"),
        "self.assertEqual(row([10, 20]), \"10,20\")",
    );
    // The model writes the whole file back, the helper fixed.
    let server = server(vec![
        reply().text("`cell` cuts the last digit.\n```python\ndef cell(v):\n    return str(v)\n\n\ndef row(r):\n    return \",\".join(cell(v) for v in r)\n```"),
        reply().call("finish", json!({"message": "fixed"})),
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
    let question = first_user_message(&server.chat_requests()[0].json());
    assert!(
        question.contains("which function is wrong (`row` or `cell`)"),
        "{question}"
    );
    let tried = candidates(&h);
    assert_eq!(tried.len(), 1);
    assert_eq!(tried[0].outcome, CandidateOutcome::Passed);
    assert_eq!(tried[0].name, "cell");
    assert_eq!(tried[0].old_str, helper);
    assert_eq!(
        on_branch(&h),
        "def cell(v):\n    return str(v)\n\n\ndef row(r):\n    return \",\".join(cell(v) for v in r)\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_that_breaks_what_passed_is_undone() {
    let h = Harness::new();
    failing_python_repo(&h);
    let server = server(vec![
        reply().text(&format!("```python\n{}```", FIXED)),
        // The model edits on and breaks it.
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": "for v in r)", "new_str": "for v in r[1:])"}),
        ),
        // Told wright undid it, the model undoes it too: that would take the version back.
        reply().call(
            "file_editor",
            json!({"command": "undo_edit", "path": "export.py"}),
        ),
        reply().call("finish", json!({"message": "fixed"})),
    ])
    .await;
    let output = run_as(
        &h,
        &server.url(),
        "qwen2.5-coder-1.5b",
        // What follows a kept version when the model goes on editing: not ended at once.
        &["--candidates", "on", "--assist-piece", "stop-when-done=off"],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let checks: Vec<_> = h
        .events()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::Check(check) => Some(check),
            _ => None,
        })
        .collect();
    assert_eq!(checks[0].exit_code, Some(1));
    assert!(checks[0].undone);
    assert_eq!(checks[1].exit_code, Some(1));
    assert!(checks[1].undone);
    assert!(checks[2].passed() && !checks[2].undone);
    let told = server.chat_requests()[3].json().to_string();
    assert!(
        told.contains("It passed before this edit, so wright undid the edit: export.py is back as it was, and `python3 -m unittest` passes again."),
        "{told}"
    );
    assert!(
        told.contains("It passed before this undo_edit, so wright put back what it took: export.py is as it was before it, and `python3 -m unittest` passes again."),
        "{told}"
    );
    let fixed = on_branch(&h);
    assert_eq!(fixed, FIXED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_of_text_the_kept_version_replaced_is_told_it_passes_now() {
    let h = Harness::new();
    failing_python_repo(&h);
    let planned = reply().call(
        "file_editor",
        json!({"command": "str_replace", "path": "export.py", "old_str": "r[:-1]", "new_str": "list(r)"}),
    );
    let view = reply().call(
        "file_editor",
        json!({"command": "view", "path": "export.py"}),
    );
    // The model makes the edit it planned against text the version took away, views the
    // file, and again, until it is told it goes in circles; then it finishes.
    let mut script = vec![reply().text(&format!("```python\n{}```", FIXED))];
    for _ in 0..3 {
        script.push(planned.clone());
        script.push(view.clone());
    }
    script.push(reply().call("finish", json!({"message": "fixed"})));
    let server = server(script).await;
    let output = run_as(
        &h,
        &server.url(),
        "qwen2.5-coder-1.5b",
        // What follows a kept version when the model goes on editing: not ended at once.
        &["--candidates", "on", "--assist-piece", "stop-when-done=off"],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let requests = server.chat_requests();
    let told = requests[2].json().to_string();
    assert!(
        told.contains("old_str was not found in export.py because the last edit of it rewrote the lines it was in: nothing was changed. Lines 2-2 now read:"),
        "{told}"
    );
    assert!(
        told.contains("[`python3 -m unittest` passes now (its last run): the failure is fixed, nothing needs to change for it. If the task asks for nothing more, call finish.]"),
        "{told}"
    );
    let last = requests.last().unwrap().json().to_string();
    assert!(
        last.contains("You are going in circles: the last steps alternate between two actions"),
        "{last}"
    );
    assert!(
        last.contains("another hypothesis.\\n`python3 -m unittest` passes now (its last run)"),
        "{last}"
    );
    let fixed = on_branch(&h);
    assert_eq!(fixed, FIXED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_stop_at_half_the_time_budget() {
    let h = Harness::new();
    failing_python_repo(&h);
    let server = server(vec![
        // The first version comes late and fails: half of the 20 s is spent by then.
        Reply::Delayed(
            Duration::from_secs(11),
            Box::new(reply().text("```python\ndef row(r):\n    return \"\"\n```")),
        ),
        // The steps have the rest.
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": "r[:-1]", "new_str": "r"}),
        ),
        reply().call("finish", json!({"message": "fixed"})),
    ])
    .await;
    let output = run_as(
        &h,
        &server.url(),
        "qwen2.5-coder-1.5b",
        &["--candidates", "on", "--reading", "off", "--max-time", "20"],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outcomes: Vec<_> = candidates(&h).into_iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        vec![
            CandidateOutcome::Failed { exit_code: Some(1) },
            CandidateOutcome::NotTried {
                why: "half of the run's time (--max-time) is spent: the rest is the steps'".into()
            },
        ]
    );
    // One version asked for, then the steps.
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].json().get("tools").is_some());
}
