//! `cargo bench -p wright-cli --bench hooks`: what hooks cost a step, against the scripted
//! model server (which answers at once, so every millisecond is wright's). A 30-step run
//! of `echo` commands, sandboxed, in a plain directory: without hooks, with one
//! PreToolUse hook of the user's (`true`, run on the host), and with the same hook asked
//! to run in the sandbox. Prints the median and p90 gap between requests for each.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_macros)]

use serde_json::json;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

const WRIGHT: &str = env!("CARGO_BIN_EXE_wright");

/// The gaps between one run's requests.
async fn gaps(repo: &Path, data: &Path, config: &Path) -> Vec<Duration> {
    let mut script: Vec<Reply> = (0..30)
        .map(|i| reply().call("terminal", json!({"command": format!("echo step {i}")})))
        .collect();
    script.push(reply().call("finish", json!({"message": "done"})));
    let server = ScriptedServer::start(script).await.unwrap();
    let status = tokio::process::Command::new(WRIGHT)
        .args([
            "run",
            "--base-url",
            &server.url(),
            "--model",
            "test-model",
            "--no-snapshot",
            "--json",
            "do the task",
        ])
        .current_dir(repo)
        .env("XDG_DATA_HOME", data)
        .env("XDG_CACHE_HOME", data.join("cache"))
        .env("XDG_CONFIG_HOME", config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .unwrap();
    assert!(status.success(), "wright failed: {status}");
    server
        .chat_requests()
        .windows(2)
        .map(|w| w[1].at.duration_since(w[0].at))
        .collect()
}

fn percentile(values: &mut [Duration], p: f64) -> f64 {
    values.sort();
    values[((values.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let data = tempfile::tempdir().unwrap();
    for (what, hooks) in [
        ("no hooks", None),
        (
            "a PreToolUse hook of yours (`true`, on the host)",
            Some(json!({"hooks": {"PreToolUse": [{"hooks": [{"command": "true"}]}]}})),
        ),
        (
            "the same hook in the sandbox",
            Some(
                json!({"hooks": {"PreToolUse": [{"hooks": [{"command": "true", "sandbox": true}]}]}}),
            ),
        ),
    ] {
        let config = tempfile::tempdir().unwrap();
        if let Some(hooks) = hooks {
            let dir = config.path().join("wright");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("hooks.json"), hooks.to_string()).unwrap();
        }
        let mut all = Vec::new();
        for round in 0..4 {
            let repo = tempfile::tempdir().unwrap();
            let run = gaps(repo.path(), data.path(), config.path()).await;
            if round > 0 {
                all.extend(run);
            }
        }
        println!(
            "per-step overhead, {what}: {:.2} ms median (p90 {:.2} ms)",
            percentile(&mut all, 0.5),
            percentile(&mut all, 0.9)
        );
    }
}
