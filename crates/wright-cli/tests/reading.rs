//! The reading of the first look's failure: when a small model's first look fails at a
//! line calling code in another file, wright asks the model apart — no tools, no history,
//! greedy, a short answer — which line of that file causes it, logs the answer, and the
//! first message shows it after the failure; `--reading` turns it on or off.

use crate::common::first_user_message;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use crate::first_look::failing_python_repo;
use crate::first_look::run_as;
use crate::first_look::server;
use crate::first_look::FIXED;
use serde_json::json;
use wright_protocol::EventBody;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::Reply;

const ANSWER: &str =
    "The line is `return \",\".join(str(v) for v in r[:-1])`: it leaves the last value out.";

/// The calls that fix the failing repository's code, then finish.
fn fixing_calls() -> Vec<Reply> {
    vec![
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": "r[:-1]", "new_str": "r"}),
        ),
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call("finish", json!({"message": "fixed"})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_model_is_asked_apart_which_line_fails_and_reads_its_answer_first() {
    let h = Harness::new();
    failing_python_repo(&h);
    let mut script = vec![reply().text(ANSWER)];
    script.extend(fixing_calls());
    let server = server(script).await;
    let output = run_as(&h, &server.url(), "qwen2.5-coder-1.5b", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let requests = server.chat_requests();
    // The question: one user message, no tools, no constraint, greedy, short.
    let asked = requests[0].json();
    let messages = asked["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{asked}");
    let question = messages[0]["content"].as_str().unwrap();
    assert!(
        question.starts_with("export.py:\n```python\ndef row(r):\n    return \",\".join(str(v) for v in r[:-1])\n```\n\n`python3 -m unittest` failed:\n```\n"),
        "{question}"
    );
    assert!(
        question.contains("  File \"test_export.py\", line 7, in test_row\n"),
        "{question}"
    );
    assert!(
        question.ends_with("Which line of export.py causes this failure? Quote that line, then say in one sentence what is wrong with it."),
        "{question}"
    );
    assert!(asked.get("tools").is_none(), "{asked}");
    assert!(asked.get("response_format").is_none(), "{asked}");
    assert!(asked.get("tool_choice").is_none(), "{asked}");
    assert_eq!(asked["temperature"], json!(0.0));
    assert_eq!(asked["max_tokens"], json!(200));

    // The task's first message: the failure, then the answer; the same in every step.
    let first = first_user_message(&requests[1].json());
    let failure_at = first.find("wright ran the tests").unwrap();
    let answer_at = first
        .find(&format!(
            "\n\n[Asked apart which line of export.py causes this failure, the model answered: {ANSWER}]"
        ))
        .unwrap_or_else(|| panic!("{first}"));
    assert!(failure_at < answer_at && first.ends_with(']'), "{first}");
    for request in &requests[2..] {
        assert_eq!(first_user_message(&request.json()), first);
    }
    assert!(
        stderr(&output).contains("→ wright asks the model apart which line of export.py fails:"),
        "{}",
        stderr(&output)
    );

    let readings: Vec<_> = h
        .events()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::Reading(reading) => Some(reading),
            _ => None,
        })
        .collect();
    assert_eq!(readings.len(), 1);
    assert_eq!(readings[0].call_id, "first-look");
    assert_eq!(readings[0].path, "export.py");
    assert_eq!(readings[0].question, question);
    assert_eq!(readings[0].answer, ANSWER);
    let shown = h.wright(&["show", &h.conversation_id()], &[]).await;
    assert!(
        stdout(&shown).contains(&format!(
            "reading (asked apart which line of export.py fails): {ANSWER}"
        )),
        "{}",
        stdout(&shown)
    );
    let id = h.conversation_id();
    let fixed = git(h.repo(), &["show", &format!("wright/{id}:export.py")]);
    assert_eq!(fixed, FIXED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reading_follows_its_setting_and_needs_a_failure_in_other_code() {
    for (model, extra, expected) in [
        ("qwen2.5-coder-1.5b", &["--reading", "off"][..], false),
        ("test-model", &["--first-look", "on"][..], false),
        (
            "test-model",
            &["--first-look", "on", "--reading", "on"][..],
            true,
        ),
        // No first look, nothing to read.
        ("qwen2.5-coder-1.5b", &["--first-look", "off"][..], false),
    ] {
        let h = Harness::new();
        failing_python_repo(&h);
        let mut script = if expected {
            vec![reply().text(ANSWER)]
        } else {
            Vec::new()
        };
        script.extend(fixing_calls());
        let server = server(script).await;
        let output = run_as(&h, &server.url(), model, extra).await;
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let first = server.chat_requests()[0].json();
        let is_question = first.get("tools").is_none()
            && first["messages"].as_array().unwrap().len() == 1
            && first_user_message(&first).contains("Which line of export.py");
        assert_eq!(is_question, expected, "{model} {extra:?}: {first}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reading_the_server_refuses_is_logged_and_the_run_goes_on_without_it() {
    let h = Harness::new();
    failing_python_repo(&h);
    let mut script = vec![Reply::Status(
        400,
        json!({"error": {"message": "no such thing"}}),
    )];
    script.extend(fixing_calls());
    let server = server(script).await;
    let output = run_as(&h, &server.url(), "qwen2.5-coder-1.5b", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let first = first_user_message(&server.chat_requests()[1].json());
    assert!(first.contains("wright ran the tests"), "{first}");
    assert!(!first.contains("Asked apart"), "{first}");
    let reading = h
        .events()
        .into_iter()
        .find_map(|e| match e.body {
            EventBody::Reading(reading) => Some(reading),
            _ => None,
        })
        .unwrap();
    assert!(reading.answer.is_empty());
    assert!(
        reading
            .failed
            .as_deref()
            .is_some_and(|why| why.contains("400")),
        "{reading:?}"
    );
    assert!(
        stderr(&output).contains("which line of export.py fails; no answer:"),
        "{}",
        stderr(&output)
    );
}
