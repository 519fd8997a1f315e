//! `wright doctor` reports what it finds and says what to fix.

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
