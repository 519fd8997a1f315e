//! `wright serve` through real HTTP and WebSocket: the real binary, the scripted model
//! server, real sandboxes, clones and branches. Conversations created, streamed (and
//! streamed again after a reconnect), interrupted, messaged, run side by side and queued;
//! a server killed with SIGKILL lists them all again; bad input and missing or wrong keys
//! answered with a clear 4xx and nothing changed.

mod actions;
mod aside;
mod automations;
mod automations_busy;
mod automations_checks;
mod automations_comments;
mod automations_forges;
mod automations_hostile;
mod automations_nightly;
mod automations_repository;
mod confirm;
pub(crate) mod database;
mod database_import;
mod engine;
mod errors;
mod fallback;
mod model;
mod openai;
pub(crate) mod replicas;
mod replicas_files;
mod replicas_many;
mod review;
mod runs;
mod security;
mod settings_change;
pub(crate) mod users;
mod users_quota;
mod widening;

use crate::common::of_kind;
use crate::common::Harness;

use futures_util::StreamExt;
use serde_json::json;
use serde_json::Value;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

/// A running `wright serve`, its address and key.
pub(crate) struct Served {
    pub(crate) child: tokio::process::Child,
    pub(crate) base: String,
    pub(crate) key: String,
    /// The address a browser opens once.
    pub(crate) browser: String,
    pub(crate) http: reqwest::Client,
}

impl Served {
    /// `wright serve --port 0 ARGS` in `h`'s data home; returns once it says where it
    /// listens.
    pub(crate) async fn start(h: &Harness, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut all = vec!["serve", "--port", "0"];
        all.extend_from_slice(args);
        let mut child = h.spawn_wright(&all, env);
        let stdout = child.stdout.take().unwrap();
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let mut base = String::new();
        let mut browser = String::new();
        let mut key = env
            .iter()
            .find(|(k, _)| *k == "WRIGHT_SERVER_KEY")
            .map(|(_, v)| v.to_string())
            .unwrap_or_default();
        let said = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(rest) = line.strip_prefix("wright serve: listening on ") {
                    base = rest.trim().to_string();
                }
                if let Some(rest) = line.trim().strip_prefix("key ") {
                    if !rest.starts_with("from") {
                        key = rest.split_whitespace().next().unwrap().to_string();
                    }
                }
                if let Some(rest) = line.trim().strip_prefix("in a browser, open once: ") {
                    browser = rest.to_string();
                    break;
                }
            }
        })
        .await;
        assert!(said.is_ok(), "wright serve said nothing within 60 s");
        assert!(base.starts_with("http://127.0.0.1:"), "{base}");
        // What it says later is not read: drained so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self {
            child,
            base,
            key,
            browser,
            http: reqwest::Client::new(),
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub(crate) fn ws_url(&self, path: &str) -> String {
        format!("{}{path}", self.base.replacen("http://", "ws://", 1))
    }

    pub(crate) async fn send(&self, request: reqwest::RequestBuilder) -> (u16, Value) {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
        };
        (status, body)
    }

    pub(crate) async fn get(&self, path: &str) -> (u16, Value) {
        self.send(self.http.get(self.url(path)).bearer_auth(&self.key))
            .await
    }

    pub(crate) async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(
            self.http
                .post(self.url(path))
                .bearer_auth(&self.key)
                .json(&body),
        )
        .await
    }

    pub(crate) async fn create(
        &self,
        workspace: &std::path::Path,
        task: &str,
        url: &str,
    ) -> String {
        self.accepted(json!({"workspace": workspace, "task": task,
                             "settings": {"base_url": url, "model": "test-model"}}))
            .await
    }

    /// Creates a conversation from `request`, which the server must accept (202); its id.
    pub(crate) async fn accepted(&self, request: Value) -> String {
        let (status, body) = self.post("/api/conversations", request).await;
        assert_eq!(status, 202, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// Waits until the conversation's state is one of `states`; returns the conversation.
    pub(crate) async fn wait_for(&self, id: &str, states: &[&str]) -> Value {
        let mut last = Value::Null;
        for _ in 0..1200 {
            let (status, body) = self.get(&format!("/api/conversations/{id}")).await;
            assert_eq!(status, 200, "{body}");
            let state = body["state"].as_str().unwrap();
            if states.contains(&state) {
                return body;
            }
            // An end that is not the one awaited: said at once, with the log.
            if ["finished", "stopped", "stuck", "failed", "interrupted"].contains(&state) {
                let events = self.events(id, 1000).await;
                panic!(
                    "conversation {id} ended {state}, not {states:?}: {body}\n{}",
                    brief(&events)
                );
            }
            last = body;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("conversation {id} never reached {states:?}: {last}");
    }

    /// Every event of the conversation, through the paged route (`limit` a page).
    pub(crate) async fn events(&self, id: &str, limit: usize) -> Vec<Value> {
        let mut all = Vec::new();
        let mut after: Option<u64> = None;
        loop {
            let query = match after {
                Some(after) => format!("?after={after}&limit={limit}"),
                None => format!("?limit={limit}"),
            };
            let (status, page) = self
                .get(&format!("/api/conversations/{id}/events{query}"))
                .await;
            assert_eq!(status, 200, "{page}");
            all.extend(page["events"].as_array().unwrap().iter().cloned());
            match page["next_after"].as_u64() {
                Some(next) => after = Some(next),
                None => return all,
            }
        }
    }

    /// Waits until the log has an event of `kind` (polling the events route).
    pub(crate) async fn wait_for_event(&self, id: &str, kind: &str) {
        for _ in 0..1200 {
            if self
                .events(id, 1000)
                .await
                .iter()
                .any(|e| e["kind"] == kind)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("conversation {id} never logged a {kind}");
    }
}

/// Reads a socket's frames until an event of `kind` (deltas skipped); the events read.
async fn read_until(
    socket: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    kind: &str,
) -> Vec<Value> {
    let mut events = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(frame) = socket.next().await {
            let Message::Text(text) = frame.unwrap() else {
                continue;
            };
            let value: Value = serde_json::from_str(&text).unwrap();
            if value["kind"] == "delta" {
                continue;
            }
            let done = value["kind"] == kind;
            events.push(value);
            if done {
                return;
            }
        }
        panic!("the socket closed before a {kind} event");
    })
    .await;
    assert!(read.is_ok(), "no {kind} event within 120 s: {events:?}");
    events
}

/// Each event's id and kind: what the socket and the log are compared by (a float read
/// back from the log may differ in its last digit from the one the run held).
fn shape(events: &[Value]) -> Vec<(u64, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["id"].as_u64().unwrap(),
                e["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A line an event, what a failure needs to show (the whole log, prompt and tools
/// included, is cut off by CI's output before the part that explains the end): its id,
/// kind, tool, and what it said, each value cut at 400 characters.
pub(crate) fn brief(events: &[Value]) -> String {
    let cut = |v: &Value| -> String {
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        text.chars().take(400).collect()
    };
    let mut lines = Vec::new();
    for e in events {
        let said = ["arguments", "output", "message", "reason", "error", "text"]
            .iter()
            .filter(|k| !e[**k].is_null())
            .map(|k| format!("{k}={}", cut(&e[*k])))
            .collect::<Vec<_>>()
            .join(" ");
        lines.push(format!(
            "#{} {} {} {} {said}",
            e["id"],
            e["source"].as_str().unwrap_or(""),
            e["kind"].as_str().unwrap_or(""),
            e["tool"].as_str().unwrap_or(""),
        ));
    }
    lines.join("\n")
}

fn ids(events: &[Value]) -> Vec<u64> {
    events.iter().map(|e| e["id"].as_u64().unwrap()).collect()
}

pub(crate) fn fixing_script() -> Vec<Reply> {
    vec![
        reply().call(
            "terminal",
            json!({"command": "python3 -m unittest 2>&1 | tail -n 3"}),
        ),
        Reply::Delayed(
            Duration::from_millis(500),
            Box::new(reply().call(
                "file_editor",
                json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
            )),
        ),
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call("finish", json!({"message": "row_to_csv keeps the last column now."})),
    ]
}

/// A script whose second reply waits two minutes: a run that is live until stopped, then
/// finishes at the next message.
fn held() -> Vec<Reply> {
    vec![
        reply().call("terminal", json!({"command": "echo started"})),
        Reply::Delayed(
            Duration::from_secs(120),
            Box::new(reply().call("finish", json!({"message": "too late"}))),
        ),
        reply().call("finish", json!({"message": "done after the message"})),
    ]
}
