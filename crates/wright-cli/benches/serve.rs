//! `cargo bench -p wright-cli --bench serve`: what `wright serve` costs, against the
//! scripted model server (which answers at once).
//!
//! Prints: the per-step overhead of a 30-step `echo` run through the server beside the
//! same run of `wright run` (median, p90; `--sandbox none`, a plain directory); the
//! delivery latency of each event to 100 WebSocket subscribers of one conversation (from
//! the event's own timestamp, so to the millisecond); the wall time of 20 conversations
//! run at once; the server's resident memory idle and after.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_macros)]

use futures_util::StreamExt;
use serde_json::json;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;
use std::time::SystemTime;
use tokio::io::AsyncBufReadExt;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

const WRIGHT: &str = env!("CARGO_BIN_EXE_wright");

struct Server {
    child: tokio::process::Child,
    base: String,
    key: String,
    http: reqwest::Client,
}

impl Server {
    async fn start(data: &Path, max_runs: usize) -> Self {
        let mut child = tokio::process::Command::new(WRIGHT)
            .args(["serve", "--port", "0", "--max-runs", &max_runs.to_string()])
            .env("XDG_DATA_HOME", data)
            .env("XDG_CACHE_HOME", data.join("cache"))
            .env("XDG_CONFIG_HOME", data.join("config"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let (mut base, mut key) = (String::new(), String::new());
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(rest) = line.strip_prefix("wright serve: listening on ") {
                base = rest.to_string();
            }
            if let Some(rest) = line.trim().strip_prefix("key ") {
                key = rest.split_whitespace().next().unwrap().to_string();
            }
            if line.contains("in a browser") {
                break;
            }
        }
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self {
            child,
            base,
            key,
            http: reqwest::Client::new(),
        }
    }

    fn rss_kb(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.child.id().unwrap())).unwrap();
        status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap()
    }

    async fn create(&self, workspace: &Path, url: &str) -> String {
        let body = json!({"workspace": workspace, "task": "do the task",
            "settings": {"base_url": url, "model": "test-model", "sandbox": "none", "max_steps": 100}});
        let response = self
            .http
            .post(format!("{}/api/conversations", self.base))
            .bearer_auth(&self.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 202);
        response.json::<Value>().await.unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    async fn state(&self, id: &str) -> String {
        let body: Value = self
            .http
            .get(format!("{}/api/conversations/{id}", self.base))
            .bearer_auth(&self.key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        body["state"].as_str().unwrap().to_string()
    }

    async fn wait_ended(&self, id: &str) {
        loop {
            match self.state(id).await.as_str() {
                "queued" | "starting" | "running" => {}
                "finished" => return,
                other => panic!("conversation {id} ended {other}"),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn echo_script(steps: usize) -> Vec<Reply> {
    let mut script: Vec<Reply> = (0..steps)
        .map(|i| reply().call("terminal", json!({"command": format!("echo step {i}")})))
        .collect();
    script.push(reply().call("finish", json!({"message": "done"})));
    script
}

fn gaps(server: &ScriptedServer) -> Vec<Duration> {
    server
        .chat_requests()
        .windows(2)
        .map(|w| w[1].at.duration_since(w[0].at))
        .collect()
}

fn percentile(values: &mut [Duration], p: f64) -> Duration {
    values.sort();
    values[((values.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), 20).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let idle_kb = server.rss_kb();

    // 1. Thirty echo steps through the server, and through `wright run`: the gap between
    //    requests is wright's time.
    let (mut served, mut cli) = (Vec::new(), Vec::new());
    for round in 0..4 {
        let workspace = tempfile::tempdir().unwrap();
        let model = ScriptedServer::start(echo_script(30)).await.unwrap();
        let id = server.create(workspace.path(), &model.url()).await;
        server.wait_ended(&id).await;
        let workspace = tempfile::tempdir().unwrap();
        let model_cli = ScriptedServer::start(echo_script(30)).await.unwrap();
        let status = tokio::process::Command::new(WRIGHT)
            .args(["run", "--sandbox", "none", "--base-url", &model_cli.url()])
            .args([
                "--model",
                "test-model",
                "--max-steps",
                "100",
                "--json",
                "do the task",
            ])
            .current_dir(workspace.path())
            .env("XDG_DATA_HOME", data.path())
            .env("XDG_CACHE_HOME", data.path().join("cache"))
            .env("XDG_CONFIG_HOME", data.path().join("config"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await
            .unwrap();
        assert!(status.success());
        if round > 0 {
            served.extend(gaps(&model));
            cli.extend(gaps(&model_cli));
        }
    }

    // 2. 100 subscribers of one conversation: each event's delay from its timestamp to
    //    its arrival, for the events logged once all were connected.
    let workspace = tempfile::tempdir().unwrap();
    let mut script = vec![Reply::Delayed(
        Duration::from_secs(3),
        Box::new(reply().call("terminal", json!({"command": "echo first"}))),
    )];
    script.extend(echo_script(30));
    let model = ScriptedServer::start(script).await.unwrap();
    let id = server.create(workspace.path(), &model.url()).await;
    let url = format!(
        "{}/sockets/events/{id}?session_api_key={}",
        server.base.replacen("http://", "ws://", 1),
        server.key
    );
    let mut sockets = Vec::new();
    for _ in 0..100 {
        let (socket, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .unwrap();
        sockets.push(socket);
    }
    let all_connected = SystemTime::now();
    let readers: Vec<_> = sockets
        .into_iter()
        .map(|mut socket| {
            tokio::spawn(async move {
                let mut delays = Vec::new();
                while let Some(Ok(frame)) = socket.next().await {
                    let arrived = SystemTime::now();
                    let tokio_tungstenite::tungstenite::Message::Text(text) = frame else {
                        continue;
                    };
                    let event: Value = serde_json::from_str(&text).unwrap();
                    let Some(ts) = event["ts"].as_str() else {
                        continue;
                    };
                    let at = humantime::parse_rfc3339(ts).unwrap();
                    if at > all_connected {
                        delays.push(arrived.duration_since(at).unwrap_or_default());
                    }
                    if event["kind"] == "changes" {
                        break;
                    }
                }
                delays
            })
        })
        .collect();
    let mut delays = Vec::new();
    for reader in readers {
        delays.extend(reader.await.unwrap());
    }
    let after_fan_out_kb = server.rss_kb();

    // 3. Twenty conversations at once, ten steps each.
    let models: Vec<ScriptedServer> =
        futures_util::future::join_all((0..20).map(|_| ScriptedServer::start(echo_script(10))))
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
    let workspaces: Vec<_> = (0..20).map(|_| tempfile::tempdir().unwrap()).collect();
    let started = Instant::now();
    let mut ids = Vec::new();
    for (model, workspace) in models.iter().zip(&workspaces) {
        ids.push(server.create(workspace.path(), &model.url()).await);
    }
    let mut most_running = 0;
    loop {
        let mut running = 0;
        let mut ended = 0;
        for id in &ids {
            match server.state(id).await.as_str() {
                "running" | "starting" => running += 1,
                "queued" => {}
                "finished" => ended += 1,
                other => {
                    let body: Value = server
                        .http
                        .get(format!("{}/api/conversations/{id}/events", server.base))
                        .bearer_auth(&server.key)
                        .send()
                        .await
                        .unwrap()
                        .json()
                        .await
                        .unwrap();
                    let tail: Vec<&Value> = body["events"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .rev()
                        .take(4)
                        .collect();
                    panic!("conversation {id} ended {other}: {tail:?}")
                }
            }
        }
        most_running = most_running.max(running);
        if ended == ids.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let twenty = started.elapsed();
    let after_kb = server.rss_kb();

    println!("wright serve, against the scripted server (--sandbox none, plain directories):");
    println!(
        "  per-step overhead, 30-step echo run: server {:.2} ms median (p90 {:.2} ms), wright run {:.2} ms median (p90 {:.2} ms)",
        ms(percentile(&mut served, 0.5)),
        ms(percentile(&mut served, 0.9)),
        ms(percentile(&mut cli, 0.5)),
        ms(percentile(&mut cli, 0.9)),
    );
    println!(
        "  100 WebSocket subscribers, {} deliveries: {:.0} ms median, p99 {:.0} ms (timestamps to the millisecond)",
        delays.len(),
        ms(percentile(&mut delays, 0.5)),
        ms(percentile(&mut delays, 0.99)),
    );
    println!(
        "  20 conversations of 10 steps at once: {:.2} s wall, at most {most_running} running together",
        twenty.as_secs_f64()
    );
    println!(
        "  RSS: idle {:.1} MB, after the fan-out {:.1} MB, after the 20 {:.1} MB",
        idle_kb as f64 / 1024.0,
        after_fan_out_kb as f64 / 1024.0,
        after_kb as f64 / 1024.0
    );
}
