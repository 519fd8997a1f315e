//! The scripted editor: JSON-RPC lines to `wright acp`'s stdin, its stdout read as
//! messages (every line must be one: nothing but the protocol goes there), its stderr
//! kept for the failures to show.

use crate::common::Harness;
use serde_json::json;
use serde_json::Value;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;

/// The editor's end of a running `wright acp`.
pub struct Editor {
    pub child: tokio::process::Child,
    pub stdin: Option<tokio::process::ChildStdin>,
    lines: tokio::sync::mpsc::UnboundedReceiver<Value>,
    /// What it said on stderr so far (its diagnostics), for failures to show.
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    next_id: u64,
    /// How the next permission requests are answered, in order (none left: a failure).
    pub permissions: std::collections::VecDeque<Permission>,
    /// The `session/request_permission` requests received, in order.
    pub permission_requests: Vec<Value>,
    /// The `$/cancel_request` notifications wright sent.
    pub cancelled_requests: Vec<Value>,
}

/// An answer to a `session/request_permission`.
#[derive(Debug, Clone, Copy)]
pub enum Permission {
    /// The option with this id.
    Choose(&'static str),
    /// The person cancels the prompt: `session/cancel`, then the request answered
    /// `cancelled`, as the protocol has it.
    CancelPrompt,
}

/// What came back for one request: its answer, and the notifications before it.
pub struct Answer {
    pub response: Value,
    pub updates: Vec<Value>,
}

impl Answer {
    /// The `session/update`s' `update` objects of one kind, in order.
    pub fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.updates
            .iter()
            .map(|n| &n["params"]["update"])
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// The text of the chunks of one kind, joined.
    pub fn text(&self, kind: &str) -> String {
        self.of_kind(kind)
            .iter()
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    }

    pub fn tool_calls(&self) -> Vec<&Value> {
        self.of_kind("tool_call")
    }

    /// The update that ended the call `id`.
    pub fn ended(&self, id: &Value) -> &Value {
        self.of_kind("tool_call_update")
            .into_iter()
            .find(|u| &u["toolCallId"] == id)
            .unwrap_or_else(|| panic!("no update ended {id}: {:#?}", self.updates))
    }
}

impl Editor {
    pub fn start(h: &Harness, url: &str) -> Self {
        Self::start_with(h, &["--base-url", url, "--model", "test-model"])
    }

    /// `wright acp ARGS`.
    pub fn start_with(h: &Harness, args: &[&str]) -> Self {
        let mut child = h.spawn_wright_piped(&[&["acp"], args].concat());
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let (send, lines) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = tokio::io::BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                // Nothing but the protocol on stdout: every line is a JSON-RPC message.
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|err| panic!("not JSON on stdout ({err}): {line}"));
                assert_eq!(message["jsonrpc"], "2.0", "{line}");
                if send.send(message).is_err() {
                    break;
                }
            }
        });
        let said = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let kept = said.clone();
        tokio::spawn(async move {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buffer).await {
                if n == 0 {
                    break;
                }
                kept.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        Self {
            child,
            stdin,
            lines,
            stderr: said,
            next_id: 1,
            permissions: Default::default(),
            permission_requests: Vec::new(),
            cancelled_requests: Vec::new(),
        }
    }

    pub fn said(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub async fn write(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    pub async fn send(&mut self, message: Value) {
        self.write(&message.to_string()).await;
    }

    /// Sends a request; its id.
    pub async fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Reads until the answer to `id` (a result or an error), with the notifications
    /// that came first.
    pub async fn answer(&mut self, id: Value) -> Answer {
        let mut updates = Vec::new();
        let deadline = Duration::from_secs(120);
        loop {
            let message = tokio::time::timeout(deadline, self.lines.recv())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "no answer to {id} within 120 s; got {updates:#?}\nstderr:\n{}",
                        self.said()
                    )
                })
                .unwrap_or_else(|| panic!("wright acp closed its stdout before answering {id}"));
            if message["method"] == "session/request_permission" {
                self.answer_permission(message).await;
            } else if message["method"] == "$/cancel_request" {
                // wright withdrawing a request the editor answered or will answer as
                // cancelled (a prompt cancelled while it asked): nothing to do.
                self.cancelled_requests.push(message);
            } else if message.get("method").is_some() {
                assert_eq!(message["method"], "session/update", "{message}");
                updates.push(message);
            } else if message["id"] == id {
                return Answer {
                    response: message,
                    updates,
                };
            } else {
                panic!("an answer to something not asked: {message}");
            }
        }
    }

    /// Answers a permission request as `permissions` says.
    async fn answer_permission(&mut self, request: Value) {
        let permission = self.permissions.pop_front().unwrap_or_else(|| {
            panic!(
                "a permission request nobody expected: {request}\nstderr:\n{}",
                self.said()
            )
        });
        let outcome = match permission {
            Permission::Choose(option) => json!({"outcome": "selected", "optionId": option}),
            Permission::CancelPrompt => {
                let session = request["params"]["sessionId"].clone();
                self.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}))
                    .await;
                json!({"outcome": "cancelled"})
            }
        };
        let id = request["id"].clone();
        self.permission_requests.push(request);
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": outcome}}))
            .await;
    }

    pub async fn call(&mut self, method: &str, params: Value) -> Answer {
        let id = self.request(method, params).await;
        self.answer(json!(id)).await
    }

    /// Reads notifications until one satisfies `found`; those read.
    pub async fn until(&mut self, found: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = tokio::time::timeout(Duration::from_secs(120), self.lines.recv())
                .await
                .unwrap_or_else(|_| panic!("not seen within 120 s; got {seen:#?}"))
                .unwrap();
            let done = found(&message);
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    pub async fn initialize(&mut self) -> Value {
        let answer = self
            .call(
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}}}),
            )
            .await;
        answer.response["result"].clone()
    }

    pub async fn new_session(&mut self, cwd: &std::path::Path) -> String {
        let answer = self
            .call("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await;
        answer.response["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {}", answer.response))
            .to_string()
    }

    pub async fn prompt(&mut self, session: &str, text: &str) -> Answer {
        self.call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
        .await
    }

    /// Closes stdin, as an editor that quits: wright ends, with status 0. Its stderr.
    pub async fn close(mut self) -> String {
        drop(self.stdin.take());
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .expect("wright acp did not end within 60 s of its stdin closing")
            .unwrap();
        let stderr = self.said();
        assert!(status.success(), "{status}; stderr:\n{stderr}");
        stderr
    }
}
