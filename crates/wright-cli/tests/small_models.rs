//! What small models get wrong, met with errors that name the fix: arguments that belong
//! to another tool, or another tool written as a shell command, are refused before anything
//! runs, and the error says which tool and how to call it.

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_written_as_a_shell_command_is_not_run_and_the_call_is_shown() {
    let h = Harness::new();
    std::fs::write(h.repo().join("export.py"), "x = 1\n").unwrap();
    let server = ScriptedServer::start(vec![
        // The real 1.5B wrote this four times in a row through the terminal.
        reply().call(
            "terminal",
            json!({"command": "file_editor(str_replace, path: 'export.py', old_str: 'x = 1', new_str: 'x = 2')"}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": "x = 1", "new_str": "x = 2"}),
        ),
        reply().call("finish", json!({"message": "changed"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "set x to 2", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let seen = observations(&h.events());
    assert_eq!(seen[0]["is_error"], true);
    let said = seen[0]["output"].as_str().unwrap();
    assert!(
        said.starts_with("`file_editor` is a tool, not a shell command: nothing was run.")
            && said.contains(
                r#"{"name": "file_editor", "arguments": {"command": "str_replace", "path": "…", "old_str": "…", "new_str": "…"}}"#
            ),
        "{said}"
    );
    assert!(!said.contains("syntax error"), "{said}");
    assert_eq!(seen[1]["is_error"], false, "{}", seen[1]["output"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_look_at_a_file_written_as_a_shell_command_runs_as_the_editor_s_view() {
    let h = Harness::new();
    std::fs::write(h.repo().join("export.py"), "x = 1\n").unwrap();
    let server = ScriptedServer::start(vec![
        // The real 1.5B wrote this six times in one run, told each time it is a tool.
        reply().call("terminal", json!({"command": "file_editor export.py"})),
        reply().call(
            "terminal",
            json!({"command": "file_editor create export.py"}),
        ),
        reply().call("finish", json!({"message": "read it"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "read export.py", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let seen = observations(&h.events());
    let read = seen[0]["output"].as_str().unwrap();
    assert_eq!(seen[0]["is_error"], false, "{read}");
    assert!(
        read.starts_with("[`file_editor` is a tool, not a shell command: this ran as the call {\"name\": \"file_editor\", \"arguments\": {\"command\":\"view\",\"path\":\"export.py\"}}.")
            && read.contains("x = 1"),
        "{read}"
    );
    // What writes is never guessed: it stays an error that shows the call.
    assert_eq!(seen[1]["is_error"], true, "{}", seen[1]["output"]);
    assert!(seen[1]["output"]
        .as_str()
        .unwrap()
        .contains("nothing was run"));

    // Rerouted, it is still a call the user is asked about: with nobody to ask, it waits.
    let h = Harness::new();
    std::fs::write(h.repo().join("export.py"), "x = 1\n").unwrap();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "file_editor export.py"}))
    ])
    .await
    .unwrap();
    let output = h
        .run(&server.url(), "read export.py", &["--confirm", "always"])
        .await;
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(observations(&h.events()).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finish_written_as_a_shell_command_is_the_finish_call() {
    let h = Harness::new();
    std::fs::write(h.repo().join("export.py"), "x = 1\n").unwrap();
    let server = ScriptedServer::start(vec![
        // The real 1.5B ran `finish` in the shell five times with its fix in place.
        reply().call("terminal", json!({"command": "finish"})),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": "x = 1", "new_str": "x = 2"}),
        ),
        reply().call("terminal", json!({"command": "finish \"x is 2 now\""})),
        reply().call("finish", json!({"message": "not reached"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "set x to 2", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // Before anything was done it is refused as any early finish; after, it ends the run.
    let seen = observations(&h.events());
    assert_eq!(seen[0]["is_error"], true);
    let said = seen[0]["output"].as_str().unwrap();
    assert!(
        said.contains("finish was called before anything was done"),
        "{said}"
    );
    assert!(!said.contains("command not found"), "{said}");
    assert_eq!(server.chat_requests().len(), 3);
    let finished = h.events().into_iter().any(|e| {
        matches!(
            e.body,
            wright_protocol::EventBody::State {
                state: wright_protocol::AgentState::Finished,
                ..
            }
        )
    });
    assert!(finished, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("x is 2 now"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_str_replace_without_new_str_changes_nothing_and_says_so() {
    let h = Harness::new();
    std::fs::write(h.repo().join("export.py"), "x = [1, 2, 3][:-1]\n").unwrap();
    let server = ScriptedServer::start(vec![
        // The real 1.5B left new_str out three times; taken as "" it deleted the code.
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": "[:-1]"}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": "[:-1]", "new_str": ""}),
        ),
        reply().call("finish", json!({"message": "kept every item"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "keep every item", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let seen = observations(&h.events());
    assert_eq!(seen[0]["is_error"], true);
    let said = seen[0]["output"].as_str().unwrap();
    assert!(
        said.contains("str_replace needs new_str") && said.contains("nothing was changed"),
        "{said}"
    );
    // An empty new_str, given, deletes.
    assert_eq!(seen[1]["is_error"], false, "{}", seen[1]["output"]);
    // A plain directory: edited where it is.
    let file = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert_eq!(file, "x = [1, 2, 3]\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_screen_editor_is_not_started_and_the_way_round_is_named() {
    let h = Harness::new();
    std::fs::write(h.repo().join("fizzbuzz.py"), "def fizzbuzz(n):\n    pass\n").unwrap();
    let server = ScriptedServer::start(vec![
        // The real 1.5B opened vi and waited out the two-minute timeout.
        reply().call("terminal", json!({"command": "vi fizzbuzz.py"})),
        reply().call("terminal", json!({"command": "cat -n fizzbuzz.py"})),
        reply().call("finish", json!({"message": "read it"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "read fizzbuzz.py", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let seen = observations(&h.events());
    assert_eq!(seen[0]["is_error"], true);
    let said = seen[0]["output"].as_str().unwrap();
    assert!(
        said.starts_with("`vi` is a full-screen program that waits for keys, so it was not run.")
            && said.contains("file_editor view"),
        "{said}"
    );
    assert!(seen[1]["output"].as_str().unwrap().contains("def fizzbuzz"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_edit_of_a_test_reminds_the_model_to_fix_the_code() {
    let h = Harness::new();
    std::fs::write(h.repo().join("test_calc.py"), "assert add(2, 2) == 4\n").unwrap();
    std::fs::write(
        h.repo().join("calc.py"),
        "def add(a, b):\n    return a - b\n",
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        // What the 1.5B did: make the test agree with the bug.
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "test_calc.py", "old_str": "== 4", "new_str": "== 0"}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "test_calc.py", "old_str": "== 0", "new_str": "== 4"}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "calc.py", "old_str": "a - b", "new_str": "a + b"}),
        ),
        reply().call("finish", json!({"message": "add adds"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "test_calc fails, fix it", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let seen = observations(&h.events());
    let reminder = "[This is a test file. A failing test says what the code must do";
    let said: Vec<&str> = seen.iter().map(|o| o["output"].as_str().unwrap()).collect();
    // Said once, after the first edit of a test; the edit itself was made.
    assert!(said[0].contains(reminder), "{}", said[0]);
    assert_eq!(seen[0]["is_error"], false);
    assert!(
        !said[1].contains(reminder) && !said[2].contains(reminder),
        "{said:?}"
    );
}
