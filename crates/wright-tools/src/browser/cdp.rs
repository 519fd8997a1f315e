//! The DevTools protocol over `--remote-debugging-pipe`: Chromium reads commands on its
//! fd 3 and writes answers and events on its fd 4, each message JSON ended by a NUL byte.
//! No port is opened anywhere (the host's loopback or the sandbox's): the only way to
//! the browser is the pair of pipes wright made and handed to it.
//!
//! One reader thread takes what Chromium writes, hands each answer to the call waiting
//! for its id and keeps the events the tool reads later (console errors); a message past
//! `MAX_MESSAGE` ends the connection rather than growing without bound.

use serde_json::json;
use serde_json::Value;
use std::collections::HashMap;
use std::io::Read;
use std::io::Write;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::oneshot;

/// The largest message read (a screenshot's PNG in base64 is the largest expected).
const MAX_MESSAGE: usize = 64 << 20;
/// Console errors kept between two `console` calls.
const MAX_ERRORS: usize = 50;

#[derive(Debug, thiserror::Error)]
pub enum CdpError {
    #[error("the browser closed its connection")]
    Closed,
    #[error("the browser did not answer {0} in time")]
    Timeout(String),
    #[error("{method}: {message}")]
    Failed { method: String, message: String },
}

type Waiting = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// A connection to one browser; commands go to its page's session once attached.
pub struct Cdp {
    writer: Mutex<std::fs::File>,
    waiting: Waiting,
    next: AtomicU64,
    pub events: Arc<Mutex<Events>>,
}

/// What the page reported on its own, between calls.
#[derive(Default)]
pub struct Events {
    /// Console errors and uncaught exceptions, oldest first.
    pub errors: Vec<String>,
    /// Errors left out once `MAX_ERRORS` were kept.
    pub dropped: usize,
    /// A download the page started (refused by the browser).
    pub downloads: Vec<String>,
}

impl Cdp {
    /// Talks to the browser over `writer` (its fd 3) and `reader` (its fd 4).
    pub fn new(writer: std::fs::File, reader: std::fs::File) -> Self {
        let waiting: Waiting = Arc::default();
        let events: Arc<Mutex<Events>> = Arc::default();
        let (w, e) = (waiting.clone(), events.clone());
        std::thread::spawn(move || read_loop(reader, &w, &e));
        Self {
            writer: Mutex::new(writer),
            waiting,
            next: AtomicU64::new(1),
            events,
        }
    }

    /// Sends `method` (to the page's `session`, or the browser itself) and waits for its
    /// result.
    pub async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CdpError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id, tx);
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        let written = lock(&self.writer).write_all(&bytes);
        if written.is_err() {
            lock(&self.waiting).remove(&id);
            return Err(CdpError::Closed);
        }
        let answer = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => return Err(CdpError::Closed),
            Err(_) => {
                lock(&self.waiting).remove(&id);
                return Err(CdpError::Timeout(method.to_string()));
            }
        };
        if let Some(error) = answer.get("error") {
            return Err(CdpError::Failed {
                method: method.to_string(),
                message: error["message"].as_str().unwrap_or("failed").to_string(),
            });
        }
        Ok(answer["result"].clone())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn read_loop(mut reader: std::fs::File, waiting: &Waiting, events: &Mutex<Events>) {
    let mut pending: Vec<u8> = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        pending.extend_from_slice(&buffer[..n]);
        while let Some(end) = pending.iter().position(|b| *b == 0) {
            let message: Vec<u8> = pending.drain(..=end).collect();
            if let Ok(value) = serde_json::from_slice::<Value>(&message[..end]) {
                dispatch(value, waiting, events);
            }
        }
        if pending.len() > MAX_MESSAGE {
            break;
        }
    }
    // Every call still waiting learns the browser is gone.
    lock(waiting).clear();
}

fn dispatch(message: Value, waiting: &Waiting, events: &Mutex<Events>) {
    if let Some(id) = message["id"].as_u64() {
        if let Some(tx) = lock(waiting).remove(&id) {
            let _ = tx.send(message);
        }
        return;
    }
    let params = &message["params"];
    let error = match message["method"].as_str().unwrap_or("") {
        "Runtime.exceptionThrown" => {
            let details = &params["exceptionDetails"];
            let text = details["exception"]["description"]
                .as_str()
                .or(details["text"].as_str())
                .unwrap_or("uncaught exception");
            Some(first_lines(text, 3))
        }
        "Runtime.consoleAPICalled" if params["type"] == "error" => {
            let args: Vec<String> = params["args"]
                .as_array()
                .map(|args| {
                    args.iter()
                        .map(|a| match &a["value"] {
                            Value::String(s) => s.clone(),
                            Value::Null => a["description"].as_str().unwrap_or("").to_string(),
                            other => other.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(format!(
                "console.error: {}",
                first_lines(&args.join(" "), 3)
            ))
        }
        "Log.entryAdded" if params["entry"]["level"] == "error" => {
            let entry = &params["entry"];
            let url = entry["url"].as_str().unwrap_or("");
            Some(format!(
                "{} {url}",
                first_lines(entry["text"].as_str().unwrap_or(""), 2)
            ))
        }
        "Browser.downloadWillBegin" => {
            let url = params["url"].as_str().unwrap_or("").to_string();
            lock(events).downloads.push(url);
            None
        }
        _ => None,
    };
    if let Some(error) = error {
        let mut events = lock(events);
        if events.errors.len() < MAX_ERRORS {
            events.errors.push(error.trim().to_string());
        } else {
            events.dropped += 1;
        }
    }
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines()
        .take(n)
        .map(|line| line.chars().take(300).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The events kept so far (a poisoned lock taken over: plain data).
pub fn lock_events(cdp: &Cdp) -> std::sync::MutexGuard<'_, Events> {
    lock(&cdp.events)
}
