//! `wright doctor` reports what it finds and says what to fix.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::ServerOptions;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_reports_server_window_tools_speed_and_sandbox() {
    let h = Harness::new();
    let options = ServerOptions {
        llama_cpp_context: Some(32768),
        native_tools: false,
        ..ServerOptions::default()
    };
    let server = ScriptedServer::start_with(vec![reply().text("1 2 3 4 5")], options)
        .await
        .unwrap();
    let url = server.url();
    let output = h
        .wright(&["doctor", "--base-url", &url, "--json"], &[])
        .await;
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    assert_eq!(report["server"]["kind"], "llama.cpp");
    assert_eq!(report["server"]["version"], "b9999-wright-testkit");
    assert_eq!(report["model"], "test-model");
    assert_eq!(report["context_window"]["tokens"], 32768);
    assert_eq!(report["tool_calling"], "text");
    assert!(
        report["speed"]["generation_tokens_per_s"].as_f64().unwrap() > 0.0,
        "{report:#}"
    );
    assert!(report["sandbox"]["landlock"]
        .as_str()
        .unwrap()
        .contains("fully enforced"));
    assert_eq!(report["problems"], serde_json::json!([]));

    let human = h.wright(&["doctor", "--base-url", &url], &[]).await;
    let text = stdout(&human);
    assert!(
        text.contains("server     llama.cpp b9999-wright-testkit at"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_fails_with_advice_when_nothing_answers() {
    let h = Harness::new();
    let output = h
        .wright(&["doctor", "--base-url", "http://127.0.0.1:9"], &[])
        .await;
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains("to fix:")
            && text.contains("cannot reach the model server at http://127.0.0.1:9/v1"),
        "{text}"
    );
}

/// "ready" names the command that has the setup doctor checked: the flags it was given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_names_the_flags_run_needs() {
    let h = Harness::new();
    let options = ServerOptions {
        llama_cpp_context: Some(32768),
        ..ServerOptions::default()
    };
    let server = ScriptedServer::start_with(vec![reply().text("1 2 3")], options)
        .await
        .unwrap();
    let url = server.url();
    let output = h
        .wright(
            &[
                "doctor",
                "--base-url",
                &url,
                "--model",
                "test-model",
                "--api-key",
                "s3cret",
            ],
            &[],
        )
        .await;
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!(
            "ready: `wright run --base-url {url} --model test-model --api-key KEY \"your task\"` will work with this setup."
        )),
        "{text}"
    );
    assert!(!text.contains("s3cret"), "{text}");
}

/// One rule for a small window: `run` warns and goes on, so doctor notes it and exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_window_is_a_note_for_doctor_and_a_warning_for_run() {
    let h = Harness::new();
    let options = ServerOptions {
        llama_cpp_context: Some(4096),
        ..ServerOptions::default()
    };
    let server = ScriptedServer::start_with(
        vec![
            // The speed of each doctor, then the run.
            reply().text("1 2 3"),
            reply().text("1 2 3"),
            reply().call("terminal", serde_json::json!({"command": "echo hi"})),
            reply().call("finish", serde_json::json!({"message": "done"})),
        ],
        options,
    )
    .await
    .unwrap();
    let url = server.url();
    let doctor = h
        .wright(&["doctor", "--base-url", &url, "--json"], &[])
        .await;
    let report: serde_json::Value = serde_json::from_str(&stdout(&doctor)).unwrap();
    assert_eq!(doctor.status.code(), Some(0), "{report:#}");
    assert_eq!(report["ok"], true);
    assert_eq!(report["problems"], serde_json::json!([]));
    assert!(
        report["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("the context window is only 4096 tokens"),
        "{report:#}"
    );
    let human = h.wright(&["doctor", "--base-url", &url], &[]).await;
    let text = stdout(&human);
    assert!(
        text.contains(
            "note (run warns too, and goes on):\n  - the context window is only 4096 tokens"
        ),
        "{text}"
    );
    let run = h.run(&url, "say hi", &["--sandbox", "none"]).await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("warning: the context window is only 4096 tokens"),
        "{}",
        stderr(&run)
    );
}

/// A wrong model name: the server is shown as found, the model as the trouble, and the
/// fix is said once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_model_is_not_a_missing_server() {
    let h = Harness::new();
    let options = ServerOptions {
        llama_cpp_context: Some(32768),
        models: vec!["qwen2.5-coder:7b".into()],
        ..ServerOptions::default()
    };
    let server = ScriptedServer::start_with(vec![], options).await.unwrap();
    let url = server.url();
    let output = h
        .wright(
            &["doctor", "--base-url", &url, "--model", "qwen2.5-codr:7b"],
            &[],
        )
        .await;
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "server     llama.cpp b9999-wright-testkit at {url}\n"
        )) && text.contains("models     qwen2.5-coder:7b\n")
            && text.contains("model      'qwen2.5-codr:7b' is not on this server (see below)\n"),
        "{text}"
    );
    assert!(!text.contains("none usable"), "{text}");
    assert_eq!(text.matches("not found on").count(), 1, "{text}");
    assert!(
        text.contains("Did you mean 'qwen2.5-coder:7b'? Choose one with --model NAME"),
        "{text}"
    );
}

/// Every problem is said once: a line in place, the sentence with its fix under "to fix".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_problem_is_said_once() {
    let h = Harness::new();
    let output = h
        .wright(&["doctor", "--base-url", "http://127.0.0.1:9"], &[])
        .await;
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert_eq!(
        text.matches("cannot reach the model server").count(),
        1,
        "{text}"
    );
    assert!(
        text.contains("server     none usable (see below)\n"),
        "{text}"
    );
    assert!(
        text.contains("Or name a running server with --base-url URL"),
        "{text}"
    );
}

/// `-C DIR` reads that repository's configuration as `run -C DIR` would, and
/// `--context-window` limits the window checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_takes_a_workspace_and_a_window() {
    let h = Harness::new();
    let server = llama_cpp_32k().await;
    let url = server.url();
    let repo = h.repo();
    std::fs::create_dir_all(repo.join(".wright")).unwrap();
    std::fs::write(repo.join(".wright/config.toml"), "context_window = 8192\n").unwrap();
    wright_testkit::git(repo, &["init", "-q"]);
    wright_testkit::git(repo, &["add", "-A"]);
    wright_testkit::git(repo, &["commit", "-qm", "config"]);
    let elsewhere = tempfile::tempdir().unwrap();
    let dir = repo.display().to_string();
    let output = h
        .wright(&["doctor", "-C", &dir, "--base-url", &url, "--json"], &[])
        .await;
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["context_window"]["tokens"], 8192, "{report:#}");
    assert!(report["run"]
        .as_str()
        .unwrap()
        .contains(&format!("-C {dir}")));
    // Without -C, from another directory: the user's setup alone.
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    let output = command
        .args([
            "doctor",
            "--base-url",
            &url,
            "--context-window",
            "20000",
            "--json",
        ])
        .current_dir(elsewhere.path())
        .env("XDG_DATA_HOME", h.data.path())
        .env("XDG_CACHE_HOME", h.data.path().join("cache"))
        .env("XDG_CONFIG_HOME", h.data.path().join("config"))
        .output()
        .await
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["context_window"]["tokens"], 20000, "{report:#}");
}

/// The run after a doctor takes doctor's tool-calling answer; an answer that is too old,
/// or from a server that changed, is probed again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctors_probe_serves_the_next_run_while_fresh() {
    let h = Harness::new();
    let options = ServerOptions {
        llama_cpp_context: Some(32768),
        ..ServerOptions::default()
    };
    let finish = || {
        vec![
            reply().call("terminal", serde_json::json!({"command": "echo hi"})),
            reply().call("finish", serde_json::json!({"message": "done"})),
        ]
    };
    let mut script = vec![reply().text("1 2 3")];
    for _ in 0..3 {
        script.extend(finish());
    }
    let server = ScriptedServer::start_with(script, options).await.unwrap();
    let url = server.url();
    let doctor = h.wright(&["doctor", "--base-url", &url], &[]).await;
    assert_eq!(doctor.status.code(), Some(0), "{}", stdout(&doctor));
    assert_eq!(server.probes(), 1);
    let run = h.run(&url, "say hi", &["--sandbox", "none"]).await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(server.probes(), 1, "the run probed again");
    assert!(
        stderr(&run).contains("tool calls native (probed by doctor "),
        "{}",
        stderr(&run)
    );
    // Keyed by what the server looks like: another identity is probed again.
    let cache_path = h.data.path().join("cache/wright/tool-calling.json");
    let edit = |change: &dyn Fn(&mut serde_json::Value)| {
        let mut cache: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&cache_path).unwrap()).unwrap();
        let key = format!("{url} test-model");
        change(&mut cache[&key]);
        std::fs::write(&cache_path, cache.to_string()).unwrap();
    };
    edit(&|entry| entry["server"] = "llama.cpp b1 window 4096".into());
    let run = h.run(&url, "say hi", &["--sandbox", "none"]).await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(server.probes(), 2, "a changed server was not probed again");
    // And bounded in age: a day-old answer is probed again.
    edit(&|entry| {
        let at = entry["probed_at"].as_u64().unwrap();
        entry["probed_at"] = (at - 25 * 3600).into();
    });
    let run = h.run(&url, "say hi", &["--sandbox", "none"]).await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(server.probes(), 3, "an old answer was trusted");
}

/// One row per finding: the tools a run gives the model, then how it calls them; `fetch`
/// only where the run's commands would have the web.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_lists_the_tools_a_run_gives_once_and_fetch_only_with_the_web() {
    let h = Harness::new();
    let server = llama_cpp_32k().await;
    let url = server.url();
    let offline = h.wright(&["doctor", "--base-url", &url], &[]).await;
    let text = stdout(&offline);
    assert_eq!(offline.status.code(), Some(0), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("tools ")).count(),
        1,
        "{text}"
    );
    assert!(text.contains("\ntool calls native"), "{text}");
    let tools = text.lines().find(|l| l.starts_with("tools ")).unwrap();
    assert!(
        tools.contains("terminal") && !tools.contains("fetch"),
        "{text}"
    );

    let config = h.data.path().join("config/wright/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "[sandbox]\nnetwork = true\n").unwrap();
    let online = h
        .wright(&["doctor", "--base-url", &url, "--json"], &[])
        .await;
    let report: serde_json::Value = serde_json::from_str(&stdout(&online)).unwrap();
    assert!(
        report["tools"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("fetch")),
        "{report:#}"
    );
}

/// A llama.cpp-like server with a 32k window, answering two probes.
async fn llama_cpp_32k() -> ScriptedServer {
    let options = ServerOptions {
        llama_cpp_context: Some(32768),
        ..ServerOptions::default()
    };
    ScriptedServer::start_with(vec![reply().text("1"), reply().text("2")], options)
        .await
        .unwrap()
}
