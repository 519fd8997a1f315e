//! Ollama's window, set by wright: its OpenAI-compatible endpoint ignores `num_ctx` (and
//! reloads the model with the default window), so wright talks to Ollama's native
//! `/api/chat` with the window in `options`. Against the scripted server emulating Ollama.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::ServerOptions;

async fn ollama(script: Vec<wright_testkit::Reply>) -> ScriptedServer {
    let options = ServerOptions {
        ollama_style: true,
        ollama_native: Some(32768),
        ..ServerOptions::default()
    };
    ScriptedServer::start_with(script, options).await.unwrap()
}

fn finishing() -> Vec<wright_testkit::Reply> {
    vec![
        reply()
            .text("Looking.")
            .call("terminal", json!({"command": "echo hello > out.txt"})),
        reply().call("finish", json!({"message": "done"})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_asked_for_is_the_window_ollama_loads() {
    let h = Harness::new();
    let server = ollama(finishing()).await;
    server.ollama_preload(4096);
    let output = h.run(&server.url(), "write hello", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("context 32768 tokens (wright's default, asked of Ollama: num_ctx 32768 through its native /api/chat")
            && said.contains("4096 allocated before"),
        "{said}"
    );
    // Every request went to the native API, each with the window; none to /v1's chat.
    let requests = server.requests();
    assert!(
        requests.iter().all(|r| r.path != "/v1/chat/completions"),
        "{requests:?}"
    );
    let chats: Vec<_> = requests
        .iter()
        .filter(|r| r.path.starts_with("/api/chat"))
        .collect();
    assert!(chats.len() >= 3, "{requests:?}");
    for chat in &chats {
        assert_eq!(chat.json()["options"]["num_ctx"], 32768, "{}", chat.json());
    }
    // The tool results name their tool, as Ollama's format has it.
    let last = chats.last().unwrap().json();
    let tool = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(tool["tool_name"], "terminal");
    assert_eq!(server.ollama_loaded_window(), Some(32768));
    assert_eq!(
        std::fs::read_to_string(h.repo().join("out.txt")).unwrap(),
        "hello\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_window_is_asked_for_and_one_beyond_the_model_is_explained() {
    let h = Harness::new();
    let server = ollama(finishing()).await;
    let output = h
        .run(&server.url(), "write hello", &["--context-window", "20000"])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(server.ollama_loaded_window(), Some(20000));
    assert!(
        stderr(&output).contains("context 20000 tokens (your context_window, asked of Ollama"),
        "{}",
        stderr(&output)
    );

    let h = Harness::new();
    let server = ollama(finishing()).await;
    let output = h
        .run(
            &server.url(),
            "write hello",
            &["--context-window", "100000"],
        )
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(server.ollama_loaded_window(), Some(32768));
    assert!(
        stderr(&output)
            .contains("the model was trained for 32768 tokens, so Ollama gives no more than that"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_shows_the_window_ollama_allocated_before_and_after() {
    let h = Harness::new();
    let server = ollama(vec![reply().text("1 2 3")]).await;
    server.ollama_preload(4096);
    let output = h
        .wright(&["doctor", "--base-url", &server.url(), "--json"], &[])
        .await;
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["server"]["kind"], "Ollama", "{report:#}");
    assert_eq!(
        report["ollama_window"],
        json!({"asked": 32768, "before": 4096, "after": 32768}),
        "{report:#}"
    );
    assert_eq!(report["context_window"]["tokens"], 32768);
    assert_eq!(output.status.code(), Some(0), "{report:#}");

    let server = ollama(vec![reply().text("1 2 3")]).await;
    let human = h
        .wright(&["doctor", "--base-url", &server.url()], &[])
        .await;
    assert!(
        stdout(&human).contains("window     Ollama allocated nothing (not loaded) before wright's requests, 32768 after (asked: 32768)"),
        "{}",
        stdout(&human)
    );
}
