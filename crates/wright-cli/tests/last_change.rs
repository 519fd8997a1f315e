//! What the start commit changed: when the first look fails, the model's first message
//! shows the start commit's diff (a regression is most often there), and so does the
//! question of the reading; read from the user's repository before the first step, fixed
//! in the log's start; `--last-change off` leaves it out, and a first commit has none.

use crate::common::first_user_message;
use crate::common::stderr;
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

const BROKEN: &str = "def row(r):\n    return \",\".join(str(v) for v in r[:-1])\n";

/// A repository whose tests passed until its last commit broke `export.py`.
fn regressed_python_repo(h: &Harness) -> String {
    let repo = h.repo();
    std::fs::write(repo.join("export.py"), FIXED).unwrap();
    std::fs::write(
        repo.join("test_export.py"),
        "import unittest\nfrom export import row\n\n\nclass T(unittest.TestCase):\n    def test_row(self):\n        self.assertEqual(row([1, 2, 3]), \"1,2,3\")\n",
    )
    .unwrap();
    git(repo, &["init", "-q"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "Export rows"]);
    std::fs::write(repo.join("export.py"), BROKEN).unwrap();
    git(repo, &["commit", "-qam", "Leave the total column out"]);
    git(repo, &["rev-parse", "--short", "HEAD"])
        .trim()
        .to_string()
}

fn fixing_calls() -> Vec<Reply> {
    vec![
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": "r[:-1]", "new_str": "r"}),
        ),
        reply().call("finish", json!({"message": "fixed"})),
    ]
}

fn logged_last_change(h: &Harness) -> Option<String> {
    h.events().into_iter().find_map(|e| match e.body {
        EventBody::Start(start) => Some(start.last_change),
        _ => None,
    })?
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_first_look_is_followed_by_what_the_last_commit_changed() {
    let h = Harness::new();
    let id = regressed_python_repo(&h);
    let mut script = vec![reply().text("The line `r[:-1]` leaves the last value out.")];
    script.extend(fixing_calls());
    let server = server(script).await;
    let output = run_as(&h, &server.url(), "qwen2.5-coder-1.5b", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let change = format!(
        "[The last commit, `{id} Leave the total column out`, changed export.py:]\nexport.py, line 2, now reads:\n```\n    return \",\".join(str(v) for v in r[:-1])\n```\nBefore that commit it read:\n```\n    return \",\".join(str(v) for v in r)\n```\nIf that change is what makes the tests fail, this call puts those lines back as they were:\n{{\"name\":\"file_editor\",\"arguments\":{{\"command\":\"str_replace\",\"path\":\"export.py\",\"old_str\":\"    return \\\",\\\".join(str(v) for v in r[:-1])\",\"new_str\":\"    return \\\",\\\".join(str(v) for v in r)\"}}}}"
    );
    assert_eq!(logged_last_change(&h).as_deref(), Some(change.as_str()));
    let requests = server.chat_requests();
    // The reading's question holds it, right before what it asks.
    let question = first_user_message(&requests[0].json());
    assert!(
        question.contains(&format!("{change}\n\nWhich line of export.py")),
        "{question}"
    );
    // The task's first message: the failure, then the change, then the reading's answer;
    // the same in every later request.
    let first = first_user_message(&requests[1].json());
    let failure_at = first.find("AssertionError").unwrap();
    let change_at = first
        .find(&format!("\n\n{change}\n\n[Asked apart"))
        .unwrap_or_else(|| panic!("{first}"));
    assert!(failure_at < change_at, "{first}");
    assert_eq!(first.matches("[The last commit").count(), 1, "{first}");
    for request in &requests[2..] {
        assert_eq!(first_user_message(&request.json()), first);
    }
    let conversation = h.conversation_id();
    let fixed = git(
        h.repo(),
        &["show", &format!("wright/{conversation}:export.py")],
    );
    assert_eq!(fixed, FIXED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_change_follows_its_setting_a_first_commit_and_a_passing_look() {
    // Off: not read, not shown.
    let h = Harness::new();
    regressed_python_repo(&h);
    let server_off = server(fixing_calls()).await;
    let extra = ["--last-change", "off", "--reading", "off"];
    let output = run_as(&h, &server_off.url(), "qwen2.5-coder-1.5b", &extra).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(logged_last_change(&h), None);
    let first = first_user_message(&server_off.chat_requests()[0].json());
    assert!(first.contains("wright ran the tests") && !first.contains("[The last commit"));

    // A first commit changed nothing before it: nothing to show.
    let h = Harness::new();
    failing_python_repo(&h);
    let server_root = server(fixing_calls()).await;
    let output = run_as(
        &h,
        &server_root.url(),
        "qwen2.5-coder-1.5b",
        &["--reading", "off"],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(logged_last_change(&h), None);

    // Tests that pass: the change is in the log's start, but not shown to the model.
    let h = Harness::new();
    regressed_python_repo(&h);
    git(h.repo(), &["revert", "--no-edit", "HEAD"]);
    let server_pass = server(vec![
        reply().call("terminal", json!({"command": "true"})),
        reply().call("finish", json!({"message": "nothing to do"})),
    ])
    .await;
    let output = run_as(&h, &server_pass.url(), "qwen2.5-coder-1.5b", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(logged_last_change(&h).is_some());
    let first = first_user_message(&server_pass.chat_requests()[0].json());
    assert!(
        first.contains("; they passed") && !first.contains("[The last commit"),
        "{first}"
    );
}
