//! What small models get wrong, met with errors that name the fix: arguments that belong
//! to another tool are refused before anything runs, and the error says which tool.

use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_of_another_tool_are_refused_and_named() {
    let h = Harness::new();
    std::fs::write(h.repo().join("export.py"), "x = 1\n").unwrap();
    let server = ScriptedServer::start(vec![
        // Run as a shell command this would try to start a program `file_editor`.
        reply().call(
            "terminal",
            json!({"command": "file_editor", "path": "export.py", "view": true}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "view", "path": "export.py"}),
        ),
        reply().call("finish", json!({"message": "looked"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "look at export.py", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let seen = observations(&h.events());
    assert_eq!(seen[0]["is_error"], true);
    let said = seen[0]["output"].as_str().unwrap();
    assert!(
        said.contains("terminal has no parameter `path`, `view`")
            && said.contains("`path` is file_editor's: call file_editor with command=view"),
        "{said}"
    );
    assert!(!said.contains("command not found"), "{said}");
    assert!(seen[1]["output"].as_str().unwrap().contains("x = 1"));
}
