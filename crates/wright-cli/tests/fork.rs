//! `wright fork`: a second approach from a prefix of a conversation, in its own clone and
//! branch, leaving the first untouched.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_tries_another_fix_on_its_own_branch() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server =
        ScriptedServer::start(vec![
        reply().call("file_editor", json!({"command": "view", "path": "export.py"})),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
        ),
        reply().call("finish", json!({"message": "first approach"})),
    ])
        .await
        .unwrap();
    let output = h.run(&server.url(), "fix the test", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let original = h.conversation_id();
    // The first observation (the view) is the fork point: nothing was changed before it.
    let at = h
        .events()
        .iter()
        .find(|e| matches!(e.body, wright_protocol::EventBody::Observation { .. }))
        .unwrap()
        .id
        .to_string();

    let second = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "grep -c 'row\\[:-1\\]' export.py; sed -i 's/row\\[:-1\\]/list(row)/' export.py && python3 -m unittest 2>&1 | tail -n 1"})),
        reply().call("finish", json!({"message": "second approach"})),
    ])
    .await
    .unwrap();
    let url = second.url();
    let forked = h
        .wright(
            &[
                "fork",
                &original,
                "--at",
                &at,
                "--base-url",
                &url,
                "--model",
                "test-model",
                "try sed instead",
            ],
            &[],
        )
        .await;
    assert!(
        forked.status.success(),
        "{}\n{}",
        stderr(&forked),
        stdout(&forked)
    );
    let text = stdout(&forked);
    assert!(
        text.contains(&format!("forked {original} at event {at} as ")),
        "{text}"
    );
    let fork_id = text
        .split(" as ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();

    // The fork started from the original files (the bug was still there) and used its own branch.
    let events: Vec<serde_json::Value> = std::fs::read_to_string(
        h.data
            .path()
            .join("wright/conversations")
            .join(&fork_id)
            .join("events.jsonl"),
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    assert_eq!(events[0]["forked_from"], format!("{original}@{at}"));
    let sed = events
        .iter()
        .find(|e| e["kind"] == "observation" && e["tool"] == "terminal")
        .unwrap();
    assert_eq!(sed["output"], "1\nOK");
    let fork_file = git(h.repo(), &["show", &format!("wright/{fork_id}:export.py")]);
    assert!(fork_file.contains("list(row)"), "{fork_file}");
    let original_file = git(h.repo(), &["show", &format!("wright/{original}:export.py")]);
    assert!(original_file.contains(FIX) && !original_file.contains("list(row)"));
    // The fork's history points at the fork's own clone.
    assert!(events[0]["system_prompt"]
        .as_str()
        .unwrap()
        .contains(&fork_id));
}
