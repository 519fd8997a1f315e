//! Models without native function calling: calls written as text are read, run and
//! answered, in text mode (chosen by the probe) and as a fallback in native mode.

use crate::common::observations;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixes_the_failing_test_with_calls_written_as_text() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let script = vec![
        // Qwen2.5-Coder on llama.cpp: a fenced JSON object.
        reply().text("I will run the tests.\n```json\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"python3 -m unittest\"}}\n```"),
        // Hermes, with a timeout given as a string.
        reply().text("<tool_call>\n{\"name\": \"file_editor\", \"arguments\": {\"command\": \"view\", \"path\": \"export.py\", \"view_range\": \"[4, 5]\"}}\n</tool_call>"),
        // Qwen3-Coder / OpenHands XML.
        reply().text(&format!(
            "The slice drops the last value.\n<tool_call>\n<function=str_replace_editor>\n<parameter=command>str_replace</parameter>\n<parameter=path>export.py</parameter>\n<parameter=old_str>{BUG}</parameter>\n<parameter=new_str>{FIX}</parameter>\n</function>\n</tool_call>"
        )),
        reply().text("<tool_call>{\"name\": \"execute_bash\", \"arguments\": {\"command\": \"python3 -m unittest\", \"timeout\": \"60\"}}</tool_call>"),
        // Mistral.
        reply().text("[TOOL_CALLS][{\"name\": \"finish\", \"arguments\": {\"message\": \"Fixed row_to_csv; the tests pass.\"}}]"),
    ];
    let server = ScriptedServer::start_text_only(script).await.unwrap();
    // A model the probe found writing its calls as text gets the first look (see
    // `wright_config::assist::Policy`; tested in assist.rs): not what is looked at here.
    let output = h
        .run(
            &server.url(),
            "fix the failing test",
            &["--assist-piece", "first-look=off"],
        )
        .await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stderr(&output),
        stdout(&output)
    );
    assert!(
        stderr(&output).contains("tool calls text (the model wrote its probe call as text"),
        "{}",
        stderr(&output)
    );
    assert_eq!(server.probes(), 1);
    let id = h.conversation_id();
    let source = wright_testkit::git(h.repo(), &["show", &format!("wright/{id}:export.py")]);
    assert!(source.contains(FIX), "{source}");

    let events = h.events();
    let obs = observations(&events);
    assert_eq!(obs.len(), 5);
    assert!(obs[0]["output"]
        .as_str()
        .unwrap()
        .contains("FAIL: test_export_csv"));
    assert_eq!(
        obs[1]["output"].as_str().unwrap(),
        "     4\tdef row_to_csv(row):\n     5\t    return \",\".join(str(v) for v in row[:-1])\n"
    );
    assert_eq!(obs[2]["is_error"], false, "{}", obs[2]);
    assert!(obs[3]["output"].as_str().unwrap().contains("OK"));
    assert_eq!(crate::common::last_state(&events), "state:finished");

    let requests = server.chat_requests();
    let first = requests[0].json();
    assert!(
        first.get("tools").is_none(),
        "text mode sends no tools field"
    );
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("# Tools")
            && system.contains(
                "file_editor(command: view|create|str_replace|insert|undo_edit, path: string"
            ),
        "{system}"
    );
    // The model sees its own words, and the results as one user message.
    let second = requests[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "assistant");
    assert!(messages[2]["content"]
        .as_str()
        .unwrap()
        .contains("```json\n{\"name\": \"terminal\""));
    assert_eq!(messages[3]["role"], "user");
    // A failing test's output starts with where it failed in the workspace.
    let results = messages[3]["content"].as_str().unwrap();
    assert!(
        results.starts_with("<tool_response name=\"terminal\">\n[It failed at ")
            && results.contains("]\nF\n"),
        "{results}"
    );
    for pair in requests.windows(2) {
        let previous = &pair[0].body;
        assert!(pair[1].body.starts_with(&previous[..previous.len() - 2]));
    }

    // A second run on the same server and model reuses the probe's answer.
    let again = ScriptedServer::start_text_only(vec![
        reply().text("[TOOL_CALLS][{\"name\": \"terminal\", \"arguments\": {\"command\": \"true\"}}]"),
        reply().text("[TOOL_CALLS][{\"name\": \"finish\", \"arguments\": {\"message\": \"Nothing to do.\"}}]"),
    ])
    .await
    .unwrap();
    let url = again.url();
    let out = h
        .wright(
            &[
                "run",
                "--base-url",
                &url,
                "--model",
                "test-model",
                "--assist-piece",
                "first-look=off",
                "say hi",
            ],
            &[],
        )
        .await;
    assert!(out.status.success());
    assert_eq!(again.probes(), 1, "a different URL is a different server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_mode_still_reads_calls_written_as_text() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().text("```json\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"echo from-text\"}}\n```"),
        reply().text("<tool_call>\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"echo cu"),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "x", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("tool calls native (the server returned a native tool call"));
    let events = h.events();
    assert_eq!(observations(&events)[0]["output"], "from-text");
    // The unreadable call is not run, and the model is told why.
    let third = server.chat_requests()[2].json();
    let last = third["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .starts_with("Your tool call could not be read"),
        "{last}"
    );
    // Natively, the call read from text is sent back as a native call.
    let second = server.chat_requests()[1].json();
    assert_eq!(
        second["messages"][2]["tool_calls"][0]["function"]["name"],
        "terminal"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_with_an_early_finish_is_sent_back_and_bash_blocks_run() {
    let h = Harness::new();
    let server = ScriptedServer::start_text_only(vec![
        // What qwen2.5-coder-1.5b really answered: a plan, then a bare finish object.
        reply().text("### Step 1\n```bash\nls -l\n```\nThen fix it.\n```json\n{\"name\": \"finish\", \"message\": \"fixed\"}\n```"),
        reply().text("Let me look.\n```bash\necho looked\n```"),
        reply().text("<tool_call>{\"name\": \"finish\", \"arguments\": {\"message\": \"done\"}}</tool_call>"),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "x", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let obs = observations(&h.events());
    assert_eq!(obs[0]["is_error"], true);
    assert!(obs[0]["output"]
        .as_str()
        .unwrap()
        .starts_with("finish was called before anything was done"));
    assert_eq!(obs[1]["output"], "looked");
    assert_eq!(obs[2]["output"], "Task finished.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_first_call_of_a_text_reply_runs() {
    let h = Harness::new();
    std::fs::write(h.repo().join("keep.txt"), "precious").unwrap();
    let server = ScriptedServer::start_text_only(vec![
        // A whole plan at once, as qwen2.5-coder-1.5b wrote one: it must not run blind.
        reply().text("<tool_call>{\"name\": \"terminal\", \"arguments\": {\"command\": \"ls\"}}</tool_call>\n<tool_call>{\"name\": \"terminal\", \"arguments\": {\"command\": \"rm -rf keep.txt\"}}</tool_call>\n<tool_call>{\"name\": \"finish\", \"arguments\": {\"message\": \"done\"}}</tool_call>"),
        reply().text("<tool_call>{\"name\": \"finish\", \"arguments\": {\"message\": \"listed\"}}</tool_call>"),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "list the files", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(h.repo().join("keep.txt").exists());
    let second = server.chat_requests()[1].json();
    let last = second["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        last.contains("keep.txt")
            && last.contains("Only your first tool call ran; the other 2 were not run"),
        "{last}"
    );
}

/// The last message of a captured request, as text.
fn last_message(request: &serde_json::Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    messages.last().unwrap()["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_with_quotes_left_unescaped_is_repaired_runs_and_is_told() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        // What qwen2.5-coder-1.5b wrote twice in three runs: quotes inside the string.
        reply().text("```json\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"echo \"a@b\"\"}}\n```"),
        reply().text("<tool_call>{\"name\": \"finish\", \"arguments\": {\"message\": \"printed\"}}</tool_call>"),
    ])
    .await
    .unwrap();
    let output = h
        .run(
            &server.url(),
            "print the email",
            &["--tool-calling", "text"],
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let events = h.events();
    let obs = observations(&events);
    assert_eq!(obs[0]["output"], "a@b", "{}", obs[0]);
    // The repair is logged where the user (--json, history) and the model see it.
    let notes: Vec<String> = events
        .iter()
        .filter_map(|event| serde_json::to_value(event).ok())
        .filter(|event| event["source"] == "environment" && event["kind"] == "message")
        .filter_map(|event| event["text"].as_str().map(str::to_string))
        .collect();
    let expected = "Your call to terminal was not valid as written; it was repaired (the quotes inside a string were escaped) and ran with the arguments {\"command\":\"echo \\\"a@b\\\"\"}. Next time escape a quote inside a JSON string as \\\".";
    assert!(notes.iter().any(|note| note == expected), "{notes:?}");
    let second = server.chat_requests()[1].json();
    assert!(last_message(&second).contains(expected), "{second}");
    assert_eq!(crate::common::last_state(&events), "state:finished");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_call_is_sent_back_quoted_in_run_never_finished() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        // Which quote ends the string is a guess: not repaired.
        reply().text("<tool_call>{\"name\": \"terminal\", \"arguments\": {\"command\": \"say \"hi\", \"path\": \"x\"}}</tool_call>"),
        // A tag left open, cut off inside a string.
        reply().text("<tool_call>{\"name\": \"terminal\", \"arguments\": {\"command\": \"echo hel"),
        reply().text("<tool_call>{\"name\": \"terminal\", \"arguments\": {\"command\": \"echo hi\"}}</tool_call>"),
        reply().text("<tool_call>{\"name\": \"finish\", \"arguments\": {\"message\": \"said hi\"}}</tool_call>"),
    ])
    .await
    .unwrap();
    let output = h
        .run(&server.url(), "say hi", &["--tool-calling", "text"])
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4, "each broken reply got a corrective turn");
    let first = last_message(&requests[1].json());
    assert!(
        first.starts_with("Your tool call could not be read")
            && first.contains("odd number of quotes")
            && first.contains(
                r#"{"name": "terminal", "arguments": {"command": "say "hi", "path": "x"}}"#
            ),
        "{first}"
    );
    let second = last_message(&requests[2].json());
    assert!(
        second.starts_with("Your tool call could not be read")
            && second.contains("never closed")
            && second.contains(r#""command": "echo hel"#),
        "{second}"
    );
    let events = h.events();
    let obs = observations(&events);
    assert_eq!(
        obs.len(),
        2,
        "nothing ran before the call that could be read"
    );
    assert_eq!(obs[0]["output"], "hi");
    assert_eq!(crate::common::last_state(&events), "state:finished");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_call_is_sent_back_quoted_in_chat() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        // Bare JSON naming a known tool that cannot be read: not prose that ends the turn.
        reply().text("{\"name\": \"terminal\", \"arguments\": {\"command\": \"ls\" \"-l\"}}"),
        reply().text("Sorry, I will write it properly next time."),
    ])
    .await
    .unwrap();
    let url = server.url();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args([
            "chat",
            "--base-url",
            &url,
            "--model",
            "test-model",
            "--tool-calling",
            "text",
        ])
        .current_dir(h.repo())
        .env("XDG_DATA_HOME", h.data.path())
        .env("XDG_CACHE_HOME", h.data.path().join("cache"))
        .env("XDG_CONFIG_HOME", h.data.path().join("config"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, b"list the files\n/exit\n")
        .await
        .unwrap();
    drop(stdin);
    let output = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2, "the broken call did not end the turn");
    let corrective = last_message(&requests[1].json());
    assert!(
        corrective.starts_with("Your tool call could not be read")
            && corrective.contains("two strings side by side")
            && corrective.contains(r#""command": "ls" "-l""#),
        "{corrective}"
    );
    assert!(observations(&h.events()).is_empty());
}
