//! Ending honestly: a model that deletes the failing test is sent back once, and the user
//! sees what it did before anything else.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_the_failing_test_is_caught() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let assertion =
        "        self.assertEqual(export_csv([[1, 2, 3], [4, 5, 6]]), \"1,2,3\\n4,5,6\\n\")";
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "test_export.py", "old_str": assertion, "new_str": "        pass"}),
        ),
        reply().call("finish", json!({"message": "fix: test_export.py"})),
        reply().call("finish", json!({"message": "I removed the assertion."})),
    ])
    .await
    .unwrap();
    let output = h
        .run(
            &server.url(),
            "le test test_export_csv échoue, corrige-le",
            &[],
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    // The first finish was sent back with what was found.
    let third = server.chat_requests()[3].json();
    let sent_back = third["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        sent_back.starts_with(
            "ERROR: Before finishing, look at your own changes. test files changed: test_export.py"
        ),
        "{sent_back}"
    );
    assert!(
        sent_back.contains("test or assertion removed: test_export.py: self.assertEqual"),
        "{sent_back}"
    );
    // The log holds the review, and the report shows it before anything else.
    let reviews = h
        .events()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|v| v["kind"] == "review")
        .count();
    assert_eq!(reviews, 2);
    let out = stdout(&output);
    assert!(out.starts_with("── look before you take this: the agent changed tests\n   test files changed: test_export.py"), "{out}");
}

/// A repository with `calc/ops.py` (a wrong sign) and `setup.py`.
fn calc_repo(dir: &std::path::Path) {
    std::fs::create_dir_all(dir.join("calc")).unwrap();
    std::fs::write(
        dir.join("calc/ops.py"),
        "def add(a, b):\n    return a - b\n",
    )
    .unwrap();
    std::fs::write(dir.join("setup.py"), "NAME = 'calc'\n").unwrap();
    wright_testkit::git(dir, &["init", "-q"]);
    wright_testkit::git(dir, &["add", "-A"]);
    wright_testkit::git(dir, &["commit", "-qm", "calc"]);
}

fn edit(path: &str, old: &str, new: &str) -> wright_testkit::Reply {
    reply().call(
        "file_editor",
        json!({"command": "str_replace", "path": path, "old_str": old, "new_str": new}),
    )
}

/// The reviews a conversation logged, as their lines.
fn review_lines(h: &Harness) -> Vec<String> {
    h.events()
        .into_iter()
        .filter_map(|e| match e.body {
            wright_protocol::EventBody::Review(review) => Some(review.lines()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// "Files the task does not mention" is said only when it tells something: a task that
/// names no place says nothing about where the work belongs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_naming_no_place_gets_no_unmentioned_note() {
    let h = Harness::new();
    calc_repo(h.repo());
    let server = ScriptedServer::start(vec![
        edit("calc/ops.py", "a - b", "a + b"),
        reply().call("finish", json!({"message": "fixed the sign"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "fix the addition", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(review_lines(&h).is_empty(), "{:?}", review_lines(&h));
    assert!(
        !stdout(&output).contains("does not mention"),
        "{}",
        stdout(&output)
    );
}

/// In a chat every message is the task: the file a later message names is not
/// "unmentioned"; one outside every place named still is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_chat_message_counts_as_the_task() {
    let h = Harness::new();
    calc_repo(h.repo());
    let server = ScriptedServer::start(vec![
        reply().text("Hello. What should I look at?"),
        edit("calc/ops.py", "a - b", "a + b"),
        edit("setup.py", "'calc'", "'calculator'"),
        reply().call("finish", json!({"message": "fixed the sign"})),
    ])
    .await
    .unwrap();
    let output = h
        .chat_with_input(
            &server.url(),
            b"hello\nthe sign in calc/ops.py is wrong, fix it\n/exit\n",
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let lines = review_lines(&h);
    assert_eq!(
        lines,
        vec!["files changed that the task does not mention: setup.py"],
        "{}",
        stderr(&output)
    );
}
