//! Calls that cannot be malformed: where the server enforces a constraint (probed, not
//! trusted), every request of a run carries it; a server that refuses it gets the next
//! request without it, said once and kept for the conversation; `--constrain off` sends
//! none; doctor says which constraint is in force.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use serde_json::Value;
use wright_protocol::EventBody;
use wright_testkit::reply;
use wright_testkit::Constraints;
use wright_testkit::Enforce;
use wright_testkit::Recorded;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;
use wright_testkit::ServerOptions;

/// llama.cpp with `--jinja`, serving a model that writes its calls as text.
async fn llama_cpp(script: Vec<Reply>, native: bool, constraints: Constraints) -> ScriptedServer {
    let options = ServerOptions {
        llama_cpp_context: Some(32768),
        native_tools: native,
        constraints,
        ..ServerOptions::default()
    };
    ScriptedServer::start_with(script, options).await.unwrap()
}

/// A call as a reply under the JSON-schema constraint writes it.
fn constrained(reasoning: &str, name: &str, arguments: Value) -> Reply {
    reply().text(&json!({"reasoning": reasoning, "name": name, "arguments": arguments}).to_string())
}

/// Each request extends the one before it byte for byte (less its closing `]}`).
fn assert_prefixes(requests: &[Recorded]) {
    for pair in requests.windows(2) {
        let before = &pair[0].body;
        assert!(
            pair[1].body.starts_with(&before[..before.len() - 2]),
            "a request does not extend the one before it:\n{}\n{}",
            String::from_utf8_lossy(before),
            String::from_utf8_lossy(&pair[1].body)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_calls_on_llama_cpp_are_held_to_the_call_schema() {
    let h = Harness::new();
    std::fs::write(h.repo().join("notes.txt"), "hello\n").unwrap();
    let script = vec![
        constrained(
            "See what is here first.",
            "terminal",
            json!({"command": "cat notes.txt"}),
        ),
        constrained("", "finish", json!({"message": "notes.txt says hello."})),
    ];
    let server = llama_cpp(script, false, Constraints::llama_cpp()).await;
    let output = h.run(&server.url(), "what does notes.txt say?", &[]).await;
    let said = stderr(&output);
    assert!(output.status.success(), "{said}\n{}", stdout(&output));
    assert!(
        said.contains(
            "constraint response_format json_schema (the server enforces it; probed now)"
        ),
        "{said}"
    );
    assert_eq!(server.constraint_probes(), 1);
    assert!(
        said.contains("  tools terminal, file_editor, grep, glob, task_tracker, finish (all; think left out: the constraint's reasoning field is its room to think)\n"),
        "{said}"
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        let body = request.json();
        assert_eq!(body["response_format"]["type"], "json_schema", "{body}");
        let branches = body["response_format"]["json_schema"]["schema"]["oneOf"]
            .as_array()
            .unwrap();
        let names: Vec<&str> = branches
            .iter()
            .map(|b| b["properties"]["name"]["const"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"terminal") && names.contains(&"finish"),
            "{names:?}"
        );
        // Its room to think is the reasoning field: no `think` tool to circle in.
        assert!(!names.contains(&"think"), "{names:?}");
        // One branch per command of the editor, each requiring what it needs: a
        // str_replace cannot leave out new_str.
        let replace = branches
            .iter()
            .find(|b| {
                b["properties"]["arguments"]["properties"]["command"]["const"] == "str_replace"
            })
            .unwrap();
        assert_eq!(
            replace["properties"]["arguments"]["required"],
            json!(["command", "path", "old_str", "new_str"])
        );
        // A small model (or one whose size its name does not say) may reason first.
        assert_eq!(
            branches[0]["required"],
            json!(["reasoning", "name", "arguments"])
        );
    }
    assert_prefixes(&requests);
    let system = requests[0].json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains("finish(message") && !system.contains("think(thought"),
        "{system}"
    );
    // The prompt shows the call as the server holds it: a JSON object, reasoning first.
    assert!(
        system.contains(r#"{"reasoning": "<what the last result showed; what you do next>", "name": "<one of the tools below>""#)
            && !system.contains("<tool_call>"),
        "{system}"
    );
    let events = h.events();
    let reasoning: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Message {
                reasoning: Some(r), ..
            } => Some(r.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, vec!["See what is here first."]);
    let observations = crate::common::observations(&events);
    assert_eq!(observations[0]["output"], "hello", "{observations:?}");
    assert_eq!(crate::common::last_state(&events), "state:finished");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_calls_on_llama_cpp_ask_tool_choice_required() {
    let h = Harness::new();
    let script = vec![
        reply().call("terminal", json!({"command": "echo hi"})),
        reply().call("finish", json!({"message": "said hi"})),
    ];
    let server = llama_cpp(script, true, Constraints::llama_cpp()).await;
    let output = h.run(&server.url(), "say hi", &[]).await;
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("tool calls native"), "{said}");
    assert!(
        said.contains("constraint tool_choice \"required\" (the server enforces it; probed now)"),
        "{said}"
    );
    let requests = server.chat_requests();
    for request in &requests {
        let body = request.json();
        assert_eq!(body["tool_choice"], "required", "{body}");
        assert!(body.get("response_format").is_none());
        // No reasoning field here: `think` stays.
        let tools: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert!(tools.contains(&"think"), "{tools:?}");
    }
    assert_prefixes(&requests);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_constrained_request_goes_again_without_it_for_good() {
    let h = Harness::new();
    let script = vec![
        // The probe's small schema passed; the whole toolset's schema does not.
        Reply::Status(
            400,
            json!({"error": {"code": 400, "message": "failed to parse grammar", "type": "invalid_request_error"}}),
        ),
        reply().text("<tool_call>\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"echo hi\"}}\n</tool_call>"),
        reply().text("<tool_call>\n{\"name\": \"finish\", \"arguments\": {\"message\": \"said hi\"}}\n</tool_call>"),
    ];
    let server = llama_cpp(script, false, Constraints::llama_cpp()).await;
    let output = h.run(&server.url(), "say hi", &[]).await;
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    let refused = "the server refused the request with response_format json_schema (failed to parse grammar); it is sent again without it, as is every request of this conversation";
    assert_eq!(said.matches(refused).count(), 1, "{said}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[0].json().get("response_format").is_some());
    assert!(requests[1].json().get("response_format").is_none());
    assert!(requests[2].json().get("response_format").is_none());
    assert_prefixes(&requests[1..]);
    let retries: Vec<String> = h
        .events()
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Retry { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(retries, vec![refused.to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_refuses_or_ignores_the_constraint_gets_none() {
    for (constraints, expected) in [
        (
            Constraints {
                json_schema: Enforce::Refuses,
                ..Constraints::default()
            },
            "constraint none (the server refuses response_format json_schema: Cannot use custom grammar constraints with this request; probed now)",
        ),
        (
            Constraints::default(),
            "constraint none (the server takes response_format json_schema but does not enforce it; probed now)",
        ),
    ] {
        let h = Harness::new();
        let script = vec![
            reply().text("<tool_call>\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"echo hi\"}}\n</tool_call>"),
            reply().text("<tool_call>\n{\"name\": \"finish\", \"arguments\": {\"message\": \"said hi\"}}\n</tool_call>"),
        ];
        let server = llama_cpp(script, false, constraints).await;
        let output = h.run(&server.url(), "say hi", &[]).await;
        let said = stderr(&output);
        assert!(output.status.success(), "{said}");
        assert!(said.contains(expected), "{said}");
        assert_eq!(server.constraint_probes(), 1);
        for request in server.chat_requests() {
            assert!(request.json().get("response_format").is_none());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn constrain_off_sends_no_constraint_and_probes_nothing() {
    let h = Harness::new();
    let script = vec![
        reply().call("terminal", json!({"command": "echo hi"})),
        reply().call("finish", json!({"message": "said hi"})),
    ];
    let server = llama_cpp(script, true, Constraints::llama_cpp()).await;
    let output = h
        .run(&server.url(), "say hi", &["--constrain", "off"])
        .await;
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("constraint off (as asked)"), "{said}");
    assert_eq!(server.constraint_probes(), 0);
    for request in server.chat_requests() {
        assert!(request.json().get("tool_choice").is_none());
    }
    let wrong = h
        .run(&server.url(), "say hi", &["--constrain", "always"])
        .await;
    assert!(!wrong.status.success());
    assert!(stderr(&wrong).contains("--constrain"), "{}", stderr(&wrong));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_says_which_constraint_is_in_force_and_run_takes_it() {
    let h = Harness::new();
    let script = vec![
        reply().text("1 2 3 4 5"),
        constrained("", "terminal", json!({"command": "echo hi"})),
        constrained("", "finish", json!({"message": "said hi"})),
    ];
    let server = llama_cpp(script, false, Constraints::llama_cpp()).await;
    let url = server.url();
    let output = h
        .wright(&["doctor", "--base-url", &url, "--json"], &[])
        .await;
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        report["constraint"]["in_force"], "json_schema",
        "{report:#}"
    );
    assert_eq!(
        report["constraint"]["why"],
        "response_format json_schema (the server enforces it; probed now)"
    );
    assert_eq!(server.constraint_probes(), 1);
    let output = h.run(&url, "say hi", &[]).await;
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains(
            "constraint response_format json_schema (the server enforces it; probed by doctor"
        ),
        "{said}"
    );
    // The run took doctor's answer: no second probe.
    assert_eq!(server.constraint_probes(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_calls_on_ollama_are_held_by_its_format() {
    let h = Harness::new();
    let options = ServerOptions {
        ollama_native: Some(32768),
        ollama_style: true,
        constraints: Constraints::llama_cpp(),
        ..ServerOptions::default()
    };
    let script = vec![
        constrained("", "terminal", json!({"command": "echo hi"})),
        constrained("", "finish", json!({"message": "said hi"})),
    ];
    let server = ScriptedServer::start_with(script, options).await.unwrap();
    let output = h
        .run(&server.url(), "say hi", &["--tool-calling", "text"])
        .await;
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains(
            "constraint Ollama format (a JSON schema) (the server enforces it; probed now)"
        ),
        "{said}"
    );
    let chats: Vec<Value> = server
        .requests()
        .iter()
        .filter(|r| r.path == "/api/chat")
        .map(Recorded::json)
        .collect();
    assert_eq!(chats.len(), 2);
    for body in chats {
        assert!(body["format"]["oneOf"].is_array(), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_run_is_held_as_it_started() {
    let h = Harness::new();
    let script = vec![
        constrained("", "terminal", json!({"command": "echo hi"})),
        constrained("", "finish", json!({"message": "said hi"})),
    ];
    let server = llama_cpp(script, false, Constraints::llama_cpp()).await;
    let stopped = h.run(&server.url(), "say hi", &["--max-steps", "1"]).await;
    assert!(!stopped.status.success(), "{}", stderr(&stopped));
    assert_eq!(crate::common::last_state(&h.events()), "state:stopped");
    let id = h.conversation_id();
    let url = server.url();
    let output = h
        .wright(
            &["resume", &id, "--base-url", &url, "--model", "test-model"],
            &[],
        )
        .await;
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains(
            "constraint response_format json_schema (the server enforces it; probed by run"
        ),
        "{said}"
    );
    assert_eq!(server.constraint_probes(), 1);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].json()["response_format"]["json_schema"].is_object());
    assert_prefixes(&requests);
}

/// The names of the calls a request's schema allows.
fn allowed_calls(request: &Recorded) -> Vec<String> {
    request.json()["response_format"]["json_schema"]["schema"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            b["properties"]["name"]["const"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_two_failed_commands_the_next_reply_must_read_or_change_the_code() {
    let h = Harness::new();
    std::fs::write(h.repo().join("notes.txt"), "hello\n").unwrap();
    let script = vec![
        constrained("Run it.", "terminal", json!({"command": "ls missing.txt"})),
        constrained("Again.", "terminal", json!({"command": "ls missing.txt"})),
        constrained(
            "Read.",
            "file_editor",
            json!({"command": "view", "path": "notes.txt"}),
        ),
        constrained("Now it works.", "terminal", json!({"command": "true"})),
        constrained("", "finish", json!({"message": "done"})),
    ];
    let server = llama_cpp(script, false, Constraints::llama_cpp()).await;
    let output = h
        .run(&server.url(), "fix it", &["--first-look", "off"])
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 5);
    let all = allowed_calls(&requests[0]);
    assert!(all.contains(&"terminal".to_string()), "{all:?}");
    assert_eq!(allowed_calls(&requests[1]), all);
    // Two failures in a row: this one request may neither run a command nor finish.
    let narrowed = allowed_calls(&requests[2]);
    assert!(
        !narrowed.contains(&"terminal".to_string()) && !narrowed.contains(&"finish".to_string()),
        "{narrowed:?}"
    );
    assert!(
        narrowed.contains(&"file_editor".to_string()),
        "{narrowed:?}"
    );
    // Then back to every call; the messages still only grow (the prefix cache holds).
    assert_eq!(allowed_calls(&requests[3]), all);
    assert_eq!(allowed_calls(&requests[4]), all);
    for pair in requests.windows(2) {
        let (before, after) = (pair[0].json(), pair[1].json());
        let (before, after) = (
            before["messages"].as_array().unwrap().clone(),
            after["messages"].as_array().unwrap().clone(),
        );
        assert_eq!(before[..], after[..before.len()]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_call_failing_twice_holds_its_tool_back_for_one_request() {
    let h = Harness::new();
    std::fs::write(h.repo().join("notes.txt"), "hello\n").unwrap();
    let edit =
        json!({"command": "str_replace", "path": "notes.txt", "old_str": "bye", "new_str": "hi"});
    let script = vec![
        constrained("Edit.", "file_editor", edit.clone()),
        constrained("Again.", "file_editor", edit),
        constrained("Check.", "terminal", json!({"command": "cat notes.txt"})),
        constrained("", "finish", json!({"message": "done"})),
    ];
    let server = llama_cpp(script, false, Constraints::llama_cpp()).await;
    let output = h
        .run(&server.url(), "fix it", &["--first-look", "off"])
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    let all = allowed_calls(&requests[0]);
    assert!(all.contains(&"file_editor".to_string()), "{all:?}");
    assert_eq!(allowed_calls(&requests[1]), all);
    // The same edit failed twice: this one request may call anything but file_editor.
    let narrowed = allowed_calls(&requests[2]);
    assert!(
        !narrowed.contains(&"file_editor".to_string()),
        "{narrowed:?}"
    );
    assert!(
        narrowed.contains(&"terminal".to_string()) && narrowed.contains(&"finish".to_string()),
        "{narrowed:?}"
    );
    assert_eq!(allowed_calls(&requests[3]), all);
}
