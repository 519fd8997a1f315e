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
