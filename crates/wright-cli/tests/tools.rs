//! The search and plan tools through the binary: `grep` and `glob` see the workspace but
//! not what `.gitignore` leaves out nor anything through a link (a link to /etc/passwd
//! included), read-only calls of one reply run together and the log says so, the plan is
//! an event that a condensed history and a resumed conversation still carry, and
//! `--tools` (or the `tools` key) chooses the set — a call to a tool left out gets an
//! answer the model can act on.

use crate::common::observations;
use crate::common::of_kind;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use pretty_assertions::assert_eq;
use serde_json::json;
use serde_json::Value;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;
use wright_testkit::ServerOptions;

/// A plain directory with ignored files, a binary, and links out of it.
fn project(h: &Harness, outside: &std::path::Path) {
    let root = h.repo();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
    std::fs::write(root.join("src/app.py"), "def needle():\n    return 1\n").unwrap();
    std::fs::write(root.join("README.md"), "A needle in the readme.\n").unwrap();
    std::fs::write(root.join("build/out.py"), "needle = 'built'\n").unwrap();
    std::fs::write(root.join("debug.log"), "needle in a log\n").unwrap();
    std::fs::write(root.join("data.bin"), b"needle\0\x01").unwrap();
    std::fs::write(outside.join("secret.py"), "needle = 'SECRET'\n").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("passwd.py")).unwrap();
    std::os::unix::fs::symlink(outside, root.join("vendor")).unwrap();
}

fn events_json(h: &Harness) -> Vec<Value> {
    h.events()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

fn output_of(events: &[Value], call_id: &str) -> String {
    events
        .iter()
        .find(|e| e["kind"] == "observation" && e["call_id"] == call_id)
        .and_then(|e| e["output"].as_str())
        .unwrap_or_else(|| panic!("no observation for {call_id}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_and_glob_skip_ignored_files_and_links_and_run_together() {
    let h = Harness::new();
    let outside = tempfile::tempdir().unwrap();
    project(&h, outside.path());
    let server = ScriptedServer::start(vec![
        reply()
            .text("Looking around.")
            .call("grep", json!({"pattern": "needle|root:"}))
            .call("glob", json!({"pattern": "*.py"}))
            .call(
                "file_editor",
                json!({"command": "view", "path": "src/app.py"}),
            )
            .call("grep", json!({"pattern": "root", "path": "passwd.py"})),
        reply().call("finish", json!({"message": "looked"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "find the needle", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let events = events_json(&h);
    let ids: Vec<String> = events
        .iter()
        .filter(|e| e["kind"] == "action" && e["tool"] != "finish")
        .map(|e| e["call_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 4);
    assert_eq!(
        output_of(&events, &ids[0]),
        "README.md:1:A needle in the readme.\nsrc/app.py:1:def needle():\n[skipped 1 binary file]"
    );
    assert_eq!(output_of(&events, &ids[1]), "src/app.py");
    assert!(output_of(&events, &ids[2]).contains("def needle():"));
    // A link named outright is refused, not followed.
    assert_eq!(
        output_of(&events, &ids[3]),
        "passwd.py is a symbolic link; links are not followed, search the place it points to inside the workspace"
    );
    // The four read-only calls ran together, logged between their actions and their
    // observations, and said so on the screen.
    let together: Vec<&Value> = of_kind(&events, "together");
    assert_eq!(together.len(), 1);
    assert_eq!(together[0]["call_ids"], json!(ids));
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .skip_while(|k| *k != "action")
        .take(9)
        .collect();
    assert_eq!(
        kinds,
        [
            "action",
            "action",
            "action",
            "action",
            "together",
            "observation",
            "observation",
            "observation",
            "observation"
        ]
    );
    assert!(
        stderr(&output).contains("[these 4 read-only calls ran together]"),
        "{}",
        stderr(&output)
    );
    // The native history still answers each call, in order.
    let second = server.chat_requests()[1].json();
    let tool_ids: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(tool_ids, ids.iter().map(String::as_str).collect::<Vec<_>>());
}

/// A plan, then enough steps of long outputs on a small window that the history is
/// summarized past the call that made it.
fn planned_long_task() -> Vec<Reply> {
    let mut script = vec![reply().call(
        "task_tracker",
        json!({"command": "plan", "tasks": [
            {"title": "Reproduce the failure", "status": "done"},
            {"title": "Fix the parser", "status": "doing", "notes": "in src/app.py"},
            {"title": "Run the tests", "status": "todo"}
        ]}),
    )];
    script.extend((0..16).map(|n| {
        reply().text(&format!("Step {n}.")).call(
            "terminal",
            json!({"command": format!("echo step {n} {}", "lorem ipsum dolor sit amet ".repeat(30))}),
        )
    }));
    script.push(reply().call("finish", json!({"message": "planned and done"})));
    script
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_is_shown_and_outlives_a_condensation_and_a_resume() {
    let h = Harness::new();
    let options = ServerOptions {
        llama_cpp_context: Some(8192),
        ..ServerOptions::default()
    };
    let server = ScriptedServer::start_with(planned_long_task(), options)
        .await
        .unwrap();
    let output = h
        .run(&server.url(), "fix the parser", &["--max-steps", "30"])
        .await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stderr(&output),
        stdout(&output)
    );
    assert_eq!(server.remaining(), 0);
    let err = stderr(&output);
    assert!(
        err.contains("  [plan]\n    Plan (1 of 3 done):\n    1. [done] Reproduce the failure\n    2. [doing] Fix the parser\n       in src/app.py\n    3. [todo] Run the tests"),
        "{err}"
    );
    let events = events_json(&h);
    let plans: Vec<&Value> = of_kind(&events, "plan");
    assert_eq!(plans.len(), 1);
    assert_eq!(
        plans[0]["tasks"][1],
        json!({"title": "Fix the parser", "status": "doing", "notes": "in src/app.py"})
    );
    // Summarized past the plan's call, the history still carries the plan.
    let condensation = events
        .iter()
        .find(|e| e["kind"] == "condensation" && e["summary"].is_string())
        .expect("no summary: the window was not small enough");
    assert!(condensation["keep_from"].as_u64().unwrap() > plans[0]["id"].as_u64().unwrap());
    let requests = server.chat_requests();
    let last = String::from_utf8_lossy(&requests.last().unwrap().body).into_owned();
    assert!(
        !last.contains("\"name\":\"task_tracker\",\"arguments\""),
        "the plan's call is still there"
    );
    assert!(
        last.contains("[Your plan (task_tracker) at that point:]\\nPlan (1 of 3 done):\\n1. [done] Reproduce the failure\\n2. [doing] Fix the parser"),
        "{last}"
    );

    // Resumed in a new process, the tool has the plan again.
    let server = ScriptedServer::start(vec![
        reply().call("task_tracker", json!({"command": "view"})),
        reply().call("finish", json!({"message": "checked"})),
    ])
    .await
    .unwrap();
    let output = h
        .resume(&server.url(), &h.conversation_id(), "check the plan")
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("  tools terminal, file_editor, grep, glob, task_tracker, think, finish (as the conversation started; --tools applies to new ones)\n"),
        "{}",
        stderr(&output)
    );
    let events = events_json(&h);
    let viewed = events
        .iter()
        .rev()
        .find(|e| e["kind"] == "observation" && e["tool"] == "task_tracker")
        .unwrap();
    assert_eq!(
        viewed["output"],
        "Plan (1 of 3 done):\n1. [done] Reproduce the failure\n2. [doing] Fix the parser\n   in src/app.py\n3. [todo] Run the tests"
    );
    // `wright show` has it on one line.
    let shown = h.wright(&["show", &h.conversation_id()], &[]).await;
    assert!(
        stdout(&shown).contains("[plan: 1 of 3 done; doing: Fix the parser]"),
        "{}",
        stdout(&shown)
    );
}

fn tool_names(h: &Harness) -> Vec<String> {
    let start = events_json(h).remove(0);
    start["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_chooses_the_set_and_a_tool_left_out_is_explained() {
    let h = Harness::new();
    std::fs::write(h.repo().join("a.py"), "x = 1\n").unwrap();
    let server = ScriptedServer::start(vec![
        reply().call("grep", json!({"pattern": "x"})),
        reply().call("terminal", json!({"command": "grep -rn x ."})),
        reply().call("finish", json!({"message": "found"})),
    ])
    .await
    .unwrap();
    let output = h
        .run(&server.url(), "find x", &["--tools", "terminal"])
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("  tools terminal, finish (as asked)\n"),
        "{}",
        stderr(&output)
    );
    assert_eq!(tool_names(&h), ["terminal", "finish"]);
    let sent = server.chat_requests()[0].json();
    assert_eq!(sent["tools"].as_array().unwrap().len(), 2);
    let obs = observations(&h.events());
    assert_eq!(obs[0]["is_error"], true);
    assert_eq!(
        obs[0]["output"],
        "the tool 'grep' is not available in this conversation (its tool set leaves it out); use one of: terminal, finish"
    );
    assert!(
        obs[1]["output"]
            .as_str()
            .unwrap()
            .contains("./a.py:1:x = 1"),
        "{}",
        obs[1]
    );

    // A name it does not know is refused before anything runs.
    let refused = h
        .run("http://127.0.0.1:9", "x", &["--tools", "terminal,browse"])
        .await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("unknown tool 'browse'"),
        "{}",
        stderr(&refused)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_key_and_the_prompt_each_set_costs() {
    // Default (a model whose name says no size: every tool), then `tools = "small"` from
    // the user's file; the prompt each costs, as characters / 4.
    let mut sizes = Vec::new();
    for (config, expected) in [
        (
            None,
            vec![
                "terminal",
                "file_editor",
                "grep",
                "glob",
                "task_tracker",
                "think",
                "finish",
            ],
        ),
        (
            Some("tools = \"small\"\n"),
            vec!["terminal", "file_editor", "think", "finish"],
        ),
    ] {
        let h = Harness::new();
        if let Some(config) = config {
            let dir = h.data.path().join("config/wright");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("config.toml"), config).unwrap();
        }
        let server = ScriptedServer::start(vec![
            reply().call("terminal", json!({"command": "true"})),
            reply().call("finish", json!({"message": "m"})),
        ])
        .await
        .unwrap();
        let output = h.run(&server.url(), "x", &[]).await;
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(tool_names(&h), expected);
        let start = events_json(&h).remove(0);
        let chars = start["system_prompt"].as_str().unwrap().len()
            + serde_json::to_string(&start["tools"]).unwrap().len();
        sizes.push(chars);
    }
    // In text mode the tools are described in the system prompt itself.
    let mut text_sizes = Vec::new();
    for set in ["full", "small"] {
        let h = Harness::new();
        let server = ScriptedServer::start_text_only(vec![
            reply().text("<tool_call>{\"name\": \"terminal\", \"arguments\": {\"command\": \"true\"}}</tool_call>"),
            reply().text("<tool_call>{\"name\": \"finish\", \"arguments\": {\"message\": \"m\"}}</tool_call>"),
        ])
        .await
        .unwrap();
        let output = h
            .run(
                &server.url(),
                "x",
                &[
                    "--tool-calling",
                    "text",
                    "--constrain",
                    "off",
                    "--tools",
                    set,
                ],
            )
            .await;
        assert!(output.status.success(), "{}", stderr(&output));
        let start = events_json(&h).remove(0);
        assert_eq!(start["tool_calling"], "text");
        text_sizes.push(start["system_prompt"].as_str().unwrap().len());
    }
    eprintln!(
        "system prompt + tool schemas, native mode: full {} chars (~{} tokens), small {} chars (~{} tokens); text mode: full {} chars (~{} tokens), small {} chars (~{} tokens)",
        sizes[0],
        sizes[0] / 4,
        sizes[1],
        sizes[1] / 4,
        text_sizes[0],
        text_sizes[0] / 4,
        text_sizes[1],
        text_sizes[1] / 4
    );
    // The bound for the default set, and the small set no larger than before.
    assert!(sizes[0] / 4 <= 1200, "{sizes:?}");
    assert!(sizes[1] < sizes[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_whose_name_says_small_gets_the_small_set() {
    let h = Harness::new();
    let model = "qwen2.5-coder:1.5b";
    let server = ScriptedServer::start_with_models(vec![], vec![model.into()])
        .await
        .unwrap();
    let url = server.url();
    let doctor = h
        .wright(&["doctor", "--base-url", &url, "--model", model], &[])
        .await;
    assert!(
        stdout(&doctor).contains(
            "tools      terminal, file_editor, think, finish (the small set: the model's name says 8B or less; --tools full for all)"
        ),
        "{}",
        stdout(&doctor)
    );
    // A server of its own: doctor's probes may take scripted replies.
    let server = ScriptedServer::start_with_models(
        vec![
            reply().call("terminal", json!({"command": "true"})),
            reply().call("finish", json!({"message": "m"})),
        ],
        vec![model.into()],
    )
    .await
    .unwrap();
    let output = h
        .wright(
            &["run", "--base-url", &server.url(), "--model", model, "x"],
            &[],
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        tool_names(&h),
        ["terminal", "file_editor", "think", "finish"]
    );
}
