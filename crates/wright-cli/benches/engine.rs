//! `WRIGHT_BENCH_MODEL=FILE.gguf [WRIGHT_BENCH_LLAMA_SERVER=llama-server] cargo bench -p
//! wright-cli --bench engine`: wright's embedded engine against llama.cpp's `llama-server`
//! over HTTP, on the same model file, the same threads, window and prompts.
//!
//! The prompts are wright's own: the request bodies of a fix-a-failing-test run (recorded
//! from the binary against the scripted server: system prompt, tools, workspace map, tool
//! outputs), sent step by step to both back ends, interleaved, greedy, each reply capped.
//! The histories are the recorded ones, so both read exactly the same prompts. Prints per
//! step the prompt tokens each had to process (prompt minus cached), time to first token
//! and wall time, each back end's own prompt-evaluation time and milliseconds per generated
//! token (llama.cpp's timings: where the time went), the totals, and each one's peak
//! resident memory.
//!
//! Without `WRIGHT_BENCH_MODEL` it says how to run it and stops (the default bench run
//! needs no model). Without `WRIGHT_BENCH_LLAMA_SERVER` it measures the engine alone.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_macros)]

use serde_json::json;
use serde_json::Value;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;
use wright_engine::Conversation;
use wright_engine::Engine;
use wright_engine::EngineConfig;
use wright_llm::in_process::InProcessModel;
use wright_llm::Client;
use wright_llm::ClientConfig;
use wright_llm::StreamDelta;
use wright_testkit::failing_python_repo;
use wright_testkit::fix_a_test_script;
use wright_testkit::ScriptedServer;

const WRIGHT: &str = env!("CARGO_BIN_EXE_wright");
/// The window both back ends get.
const WINDOW: u32 = 8192;
/// Tokens each reply may generate: enough for a first token and a start of a call.
const REPLY_TOKENS: u32 = 32;

/// One step's figures on one back end.
#[derive(Default, Clone, Copy)]
struct Step {
    prompt: u64,
    processed: u64,
    first_token_ms: f64,
    wall_ms: f64,
    /// The backend's own timings: prompt evaluation, and generation per token.
    prefill_ms: f64,
    generated: u64,
    generating_ms: f64,
}

/// The request bodies of a fix-a-test run of the real binary.
async fn recorded_prompts() -> Vec<Value> {
    let repo = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    failing_python_repo(repo.path());
    let script = fix_a_test_script();
    let server = ScriptedServer::start(script).await.unwrap();
    let status = tokio::process::Command::new(WRIGHT)
        .args(["run", "--base-url", &server.url(), "--model", "test-model"])
        .args([
            "--tool-calling",
            "native",
            "--constrain",
            "off",
            "--tools",
            "small",
        ])
        .arg("The test test_export_csv fails since the last commit, fix it.")
        .current_dir(repo.path())
        .env("XDG_DATA_HOME", data.path())
        .env("XDG_CACHE_HOME", data.path().join("cache"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .unwrap();
    assert!(status.success(), "the recording run failed: {status}");
    server
        .chat_requests()
        .iter()
        .map(|r| r.json())
        .filter(|body| body["messages"].as_array().is_some_and(|m| m.len() >= 2))
        .collect()
}

/// `body` as both back ends get it: greedy, capped, streamed, for `model`.
fn prepared(body: &Value, model: &str) -> Vec<u8> {
    let mut body = body.clone();
    body["model"] = json!(model);
    body["temperature"] = json!(0.0);
    body["seed"] = json!(1);
    body["max_tokens"] = json!(REPLY_TOKENS);
    body["stream"] = json!(true);
    serde_json::to_vec(&body).unwrap()
}

/// Times one reply: the first token, the whole, and the tokens read.
async fn timed<F, Fut>(send: F) -> Step
where
    F: FnOnce(Box<dyn FnMut(StreamDelta) + Send>) -> Fut,
    Fut: std::future::Future<Output = wright_llm::Response>,
{
    let started = Instant::now();
    let first = Arc::new(std::sync::Mutex::new(None::<Duration>));
    let seen = first.clone();
    let on_delta = Box::new(move |delta: StreamDelta| {
        let token = matches!(
            delta,
            StreamDelta::Text(_)
                | StreamDelta::Reasoning(_)
                | StreamDelta::ToolCallStarted { .. }
                | StreamDelta::ToolCallArguments(_)
        );
        let mut first = seen.lock().unwrap();
        if token && first.is_none() {
            *first = Some(started.elapsed());
        }
    });
    let response = send(on_delta).await;
    let wall = started.elapsed();
    let usage = response.usage.unwrap_or_default();
    let first_token = first.lock().unwrap().unwrap_or(wall);
    Step {
        prompt: usage.prompt_tokens,
        processed: usage.prompt_tokens - usage.cached_tokens.unwrap_or(0),
        first_token_ms: first_token.as_secs_f64() * 1e3,
        wall_ms: wall.as_secs_f64() * 1e3,
        prefill_ms: usage.prompt_ms.unwrap_or(0.0),
        generated: usage.completion_tokens,
        generating_ms: usage.predicted_ms.unwrap_or(0.0),
    }
}

/// The peak resident memory of a process, in MiB (`VmHWM`).
fn peak_rss_mib(pid: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// A running `llama-server` on the model file.
struct LlamaServer {
    child: std::process::Child,
    url: String,
}

impl LlamaServer {
    async fn start(binary: &Path, model: &Path, threads: u32) -> LlamaServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new(binary)
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["-t", &threads.to_string(), "-tb", &threads.to_string()])
            .args(["-c", &WINDOW.to_string(), "-np", "1", "--jinja"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Killed and waited for on drop, whatever happens next.
        let mut server = LlamaServer {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let health = reqwest::Client::new();
        for _ in 0..600 {
            let ready = health
                .get(format!("{}/health", server.url))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if ready {
                server.url.push_str("/v1");
                return server;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        drop(server);
        panic!("llama-server did not become ready in 120 s");
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn print_row(label: &str, step: &Step) {
    println!(
        "  {label:<8} {:>7} {:>10} {:>12.0} {:>10.0} {:>12.0} {:>10.1}",
        step.prompt,
        step.processed,
        step.first_token_ms,
        step.wall_ms,
        step.prefill_ms,
        step.generating_ms / step.generated.max(1) as f64
    );
}

fn total(steps: &[Step]) -> Step {
    steps.iter().fold(Step::default(), |sum, s| Step {
        prompt: sum.prompt + s.prompt,
        processed: sum.processed + s.processed,
        first_token_ms: sum.first_token_ms + s.first_token_ms,
        wall_ms: sum.wall_ms + s.wall_ms,
        prefill_ms: sum.prefill_ms + s.prefill_ms,
        generated: sum.generated + s.generated,
        generating_ms: sum.generating_ms + s.generating_ms,
    })
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Some(model) = std::env::var_os("WRIGHT_BENCH_MODEL").map(PathBuf::from) else {
        println!(
            "engine bench: set WRIGHT_BENCH_MODEL=FILE.gguf (and WRIGHT_BENCH_LLAMA_SERVER=PATH \
             to compare with llama-server); skipped"
        );
        return;
    };
    let server_binary = std::env::var_os("WRIGHT_BENCH_LLAMA_SERVER").map(PathBuf::from);
    let threads = wright_engine::physical_cores();
    let prompts = recorded_prompts().await;
    let own_pid = std::process::id().to_string();
    let before_load = peak_rss_mib(&own_pid);

    let mut config = EngineConfig::new(&model);
    config.window = Some(WINDOW);
    config.threads = Some(threads);
    let loading = Instant::now();
    let engine: Arc<Engine> = Engine::load(&config).unwrap();
    let engine_load = loading.elapsed();
    let conversation = Conversation {
        engine: engine.clone(),
        state_file: None,
    };
    let name = engine.info().name.clone();
    let loading = Instant::now();
    let server = match &server_binary {
        Some(binary) => Some(LlamaServer::start(binary, &model, threads).await),
        None => None,
    };
    let server_load = loading.elapsed();
    let client = server.as_ref().map(|server| {
        let mut config = ClientConfig::new(server.url.clone(), name.clone());
        config.idle_timeout = Duration::from_secs(600);
        Client::new(config).unwrap()
    });

    println!(
        "engine bench: {} ({} MiB), {threads} threads, window {WINDOW}, {} steps of wright's fix-a-test prompts, replies capped at {REPLY_TOKENS} tokens, greedy",
        model.display(),
        std::fs::metadata(&model).map_or(0, |m| m.len()) >> 20,
        prompts.len()
    );
    println!(
        "  load: engine {:.1} s{}",
        engine_load.as_secs_f64(),
        server.as_ref().map_or(String::new(), |_| format!(
            ", llama-server {:.1} s (to /health)",
            server_load.as_secs_f64()
        ))
    );
    println!(
        "  {:<8} {:>7} {:>10} {:>12} {:>10} {:>12} {:>10}",
        "", "prompt", "processed", "first token", "wall (ms)", "prefill", "ms/token"
    );
    let mut engine_steps = Vec::new();
    let mut server_steps = Vec::new();
    for (index, prompt) in prompts.iter().enumerate() {
        println!("step {}", index + 1);
        let body = prepared(prompt, &name);
        let step = timed(|mut on_delta| {
            let conversation = &conversation;
            let body = body.clone();
            async move { conversation.complete(&body, &mut *on_delta).await.unwrap() }
        })
        .await;
        print_row("engine", &step);
        engine_steps.push(step);
        if let Some(client) = &client {
            let step = timed(|mut on_delta| {
                let body = body.clone();
                async move {
                    client
                        .complete_body(body, "bench", &mut *on_delta)
                        .await
                        .unwrap()
                }
            })
            .await;
            print_row("server", &step);
            server_steps.push(step);
        }
    }
    println!("total");
    print_row("engine", &total(&engine_steps));
    if !server_steps.is_empty() {
        print_row("server", &total(&server_steps));
    }
    println!(
        "peak RSS: engine (this process, {before_load:.0} MiB before loading) {:.0} MiB",
        peak_rss_mib(&own_pid)
    );
    if let Some(server) = &server {
        println!(
            "peak RSS: llama-server {:.0} MiB",
            peak_rss_mib(&server.child.id().to_string())
        );
    }
}
