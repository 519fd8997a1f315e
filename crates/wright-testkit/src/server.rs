//! The scripted server itself (axum on 127.0.0.1:0).

use crate::reply::Reply;
use axum::extract::State;
use axum::http::header;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use axum::routing::post;
use axum::serve::ListenerExt;
use axum::Json;
use axum::Router;
use bytes::Bytes;
use serde_json::json;
use serde_json::Value;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Instant;
use wire::sse;
use wire::sse_after_prefill;
use wire::sse_paced;
use wire::turn_chunks;
use wire::whole_reply;
use wire::Style;

mod wire;

/// One request the agent sent.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub body: Vec<u8>,
    pub at: Instant,
    /// The `Authorization` header, as sent.
    pub authorization: Option<String>,
}

impl Recorded {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

pub(crate) struct Shared {
    pub(crate) script: Mutex<VecDeque<Reply>>,
    pub(crate) requests: Mutex<Vec<Recorded>>,
    pub(crate) models: Vec<String>,
    /// Emulating Ollama: the window of the loaded model, if one is loaded.
    pub(crate) ollama_loaded: Mutex<Option<u64>>,
    /// Emulating Ollama's native API: the model's trained length.
    pub(crate) ollama_native: Option<u64>,
    style: Style,
    /// Whether the emulated model/server produces native `tool_calls` (answers the
    /// tool-calling probe natively); when false it writes calls as text, like small
    /// models on llama.cpp do.
    native_tools: bool,
    /// What it does with a constrained request.
    pub(crate) constraints: crate::constrain::Constraints,
    /// Stops the server (`Reply::ShutDown`): the listener is closed, and each connection
    /// once its response is sent.
    shutdown: tokio::sync::Notify,
}

pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _task: tokio::task::JoinHandle<()>,
}

/// How the emulated server behaves beyond its script.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub models: Vec<String>,
    /// 0 for any free port.
    pub port: u16,
    pub native_tools: bool,
    /// When set, the server answers llama.cpp's `GET /props` with this `n_ctx` and adds
    /// llama.cpp's `timings` to its streams.
    pub llama_cpp_context: Option<u64>,
    /// Stream like Ollama: whole calls per chunk without `index`, `reasoning` field,
    /// finish reason "stop" after tool calls.
    pub ollama_style: bool,
    /// The address to listen on (loopback unless a test needs the server reached as
    /// another machine would reach it).
    pub bind: std::net::IpAddr,
    /// Emulate Ollama's own API too (`/api/version`, `/api/show`, `/api/ps`, `/api/chat`)
    /// for a model trained for this many tokens: `/api/chat` loads the model with its
    /// `options.num_ctx`, and an OpenAI-compatible request reloads it with Ollama's default
    /// window (4096), as Ollama does.
    pub ollama_native: Option<u64>,
    /// What the server does with `tool_choice: "required"` and a JSON-schema
    /// `response_format` (or Ollama's `format`): by default it takes and ignores them.
    pub constraints: crate::constrain::Constraints,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            models: vec!["test-model".to_string()],
            port: 0,
            native_tools: true,
            llama_cpp_context: None,
            ollama_style: false,
            bind: std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
            ollama_native: None,
            constraints: crate::constrain::Constraints::default(),
        }
    }
}

impl ScriptedServer {
    /// Serves `script` to whoever asks, in order, as model `test-model`.
    pub async fn start(script: Vec<Reply>) -> std::io::Result<Self> {
        Self::start_with(script, ServerOptions::default()).await
    }

    /// Like `start`, on a chosen port (for scripts that must name the server's own port).
    pub async fn start_on_port(script: Vec<Reply>, port: u16) -> std::io::Result<Self> {
        Self::start_with(
            script,
            ServerOptions {
                port,
                ..ServerOptions::default()
            },
        )
        .await
    }

    /// A server whose model has no native function calling: the probe gets its call as
    /// text in a ```json fence, as Qwen2.5-Coder on llama.cpp answers.
    pub async fn start_text_only(script: Vec<Reply>) -> std::io::Result<Self> {
        let options = ServerOptions {
            native_tools: false,
            ..ServerOptions::default()
        };
        Self::start_with(script, options).await
    }

    pub async fn start_with_models(
        script: Vec<Reply>,
        models: Vec<String>,
    ) -> std::io::Result<Self> {
        Self::start_with(
            script,
            ServerOptions {
                models,
                ..ServerOptions::default()
            },
        )
        .await
    }

    pub async fn start_with(script: Vec<Reply>, options: ServerOptions) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            requests: Mutex::new(Vec::new()),
            models: options.models,
            style: Style {
                piece: 7,
                ollama: options.ollama_style,
                llama_cpp: options.llama_cpp_context.is_some(),
            },
            native_tools: options.native_tools,
            ollama_loaded: Mutex::new(None),
            ollama_native: options.ollama_native,
            constraints: options.constraints,
            shutdown: tokio::sync::Notify::new(),
        });
        let mut app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/models", get(list_models));
        if let Some(n_ctx) = options.llama_cpp_context {
            let props = json!({
                "default_generation_settings": {"n_ctx": n_ctx},
                "total_slots": 1,
                "model_path": "/models/test-model.gguf",
                "build_info": "b9999-wright-testkit"
            });
            app = app.route("/props", get(move || async move { Json(props) }));
        }
        if options.ollama_native.is_some() {
            app = crate::ollama::routes(app);
        }
        let app = app.with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind((options.bind, options.port)).await?;
        let addr = listener.local_addr()?;
        let stopping = shared.clone();
        let task = tokio::spawn(async move {
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move { stopping.shutdown.notified().await })
                .await;
        });
        Ok(Self {
            addr,
            shared,
            _task: task,
        })
    }

    /// Base URL, `/v1` included.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Emulating Ollama: the model is loaded with this window already (as after another
    /// client's request).
    pub fn ollama_preload(&self, window: u64) {
        *lock(&self.shared.ollama_loaded) = Some(window);
    }

    /// Emulating Ollama: the window the loaded model has now, if one is loaded.
    pub fn ollama_loaded_window(&self) -> Option<u64> {
        *lock(&self.shared.ollama_loaded)
    }

    /// Every request received so far (model lists and probes included), in order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.requests).clone()
    }

    /// The chat requests received so far, in order.
    pub fn chat_requests(&self) -> Vec<Recorded> {
        lock(&self.shared.requests)
            .iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
            .cloned()
            .collect()
    }

    /// How many condensation summaries were asked for.
    pub fn summaries(&self) -> usize {
        lock(&self.shared.requests)
            .iter()
            .filter(|r| r.path.ends_with("#condense"))
            .count()
    }

    /// How many tool-calling probes were received.
    pub fn probes(&self) -> usize {
        lock(&self.shared.requests)
            .iter()
            .filter(|r| r.path.ends_with("#probe"))
            .count()
    }

    /// How many constraint probes were received.
    pub fn constraint_probes(&self) -> usize {
        lock(&self.shared.requests)
            .iter()
            .filter(|r| r.path.ends_with("#constraint-probe"))
            .count()
    }

    /// Replies not yet served.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.script).len()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self._task.abort();
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn authorization(headers: &axum::http::HeaderMap) -> Option<String> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

async fn list_models(
    State(shared): State<Arc<Shared>>,
    headers: axum::http::HeaderMap,
) -> Json<Value> {
    lock(&shared.requests).push(Recorded {
        path: "/v1/models".into(),
        body: Vec::new(),
        at: Instant::now(),
        authorization: authorization(&headers),
    });
    let data: Vec<Value> = shared
        .models
        .iter()
        .map(|id| json!({"id": id, "object": "model", "owned_by": "wright-testkit"}))
        .collect();
    Json(json!({"object": "list", "data": data}))
}

async fn chat(
    State(shared): State<Arc<Shared>>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let at = Instant::now();
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    lock(&shared.requests).push(Recorded {
        path: "/v1/chat/completions".into(),
        body: body.to_vec(),
        at,
        authorization: authorization(&headers),
    });
    if shared.ollama_native.is_some() {
        // Ollama's OpenAI-compatible endpoint loads the model with its default window.
        *lock(&shared.ollama_loaded) = Some(crate::ollama::DEFAULT_NUM_CTX);
    }
    let prompt_tokens = (body.len() / 4) as u64;
    let constraint_probe = crate::constrain::is_probe(&request);
    if constraint_probe {
        if let Some(last) = lock(&shared.requests).last_mut() {
            last.path = "/v1/chat/completions#constraint-probe".into();
        }
    }
    if let Some(refused) = crate::constrain::refusal(&shared.constraints, &request) {
        return refused;
    }
    if constraint_probe {
        let (text, calls) = crate::constrain::probe_answer(&shared.constraints, &request);
        return Json(whole_reply(&text, &calls, prompt_tokens)).into_response();
    }
    if is_summary_request(&request) {
        if let Some(last) = lock(&shared.requests).last_mut() {
            last.path = "/v1/chat/completions#condense".into();
        }
        let summary = "TASK: the scripted task\nDONE: ran the scripted commands\nFILES: none changed\nFAILED: nothing\nPENDING: the rest of the script\nPLAN: go on with the next command";
        let stream = request
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        return if stream {
            sse(
                turn_chunks("", summary, &[], &shared.style, prompt_tokens),
                false,
            )
        } else {
            Json(whole_reply(summary, &[], prompt_tokens)).into_response()
        };
    }
    if is_probe(&request) {
        if let Some(last) = lock(&shared.requests).last_mut() {
            last.path = "/v1/chat/completions#probe".into();
        }
        let call = json!({"value": 7}).to_string();
        return if shared.native_tools {
            Json(whole_reply(
                "",
                &[("wright_probe".into(), call)],
                prompt_tokens,
            ))
            .into_response()
        } else {
            let text =
                format!("```json\n{{\"name\": \"wright_probe\", \"arguments\": {call}}}\n```");
            Json(whole_reply(&text, &[], prompt_tokens)).into_response()
        };
    }
    let stream = request
        .get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let reply = match next_reply(&shared, &request).await {
        Ok(reply) => reply,
        Err(response) => return response,
    };
    match reply {
        Reply::Status(status, body) => {
            let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            (code, Json(body)).into_response()
        }
        Reply::Turn {
            reasoning,
            text,
            calls,
        } if stream => sse(
            turn_chunks(&reasoning, &text, &calls, &shared.style, prompt_tokens),
            false,
        ),
        Reply::Turn { text, calls, .. } => {
            Json(whole_reply(&text, &calls, prompt_tokens)).into_response()
        }
        Reply::Prefill(time, inner) => match *inner {
            Reply::Turn {
                reasoning,
                text,
                calls,
            } if stream => {
                let progress = shared.style.llama_cpp
                    && request.get("return_progress").and_then(Value::as_bool) == Some(true);
                let chunks = turn_chunks(&reasoning, &text, &calls, &shared.style, prompt_tokens);
                sse_after_prefill(time, progress.then_some(prompt_tokens), chunks)
            }
            Reply::Turn { text, calls, .. } => {
                tokio::time::sleep(time).await;
                Json(whole_reply(&text, &calls, prompt_tokens)).into_response()
            }
            _ => error(500, "the test script's Prefill must hold a turn"),
        },
        Reply::Paced(pause, inner) => match *inner {
            Reply::Turn {
                reasoning,
                text,
                calls,
            } if stream => sse_paced(
                pause,
                turn_chunks(&reasoning, &text, &calls, &shared.style, prompt_tokens),
            ),
            _ => error(500, "the test script's Paced must hold a turn, streamed"),
        },
        Reply::Delayed(..) | Reply::Reacting(..) => error(500, "unreachable: unwrapped above"),
        Reply::ShutDown => {
            // A stored permit: the shutdown starts even if the server task is not yet
            // waiting for it.
            shared.shutdown.notify_one();
            (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::CONNECTION, "close")],
                Json(json!({"error": {"message": "the server is shutting down"}})),
            )
                .into_response()
        }
        Reply::HitTokenLimit { name, arguments } => {
            let half = &arguments[..arguments.len() / 2];
            let calls = vec![(name, half.to_string())];
            let mut chunks = turn_chunks("", "", &calls, &shared.style, prompt_tokens);
            // Replace the finish reason of the last choice chunk.
            if let Some(finish) = chunks
                .iter_mut()
                .rev()
                .find(|c| c["choices"][0]["finish_reason"].is_string())
            {
                finish["choices"][0]["finish_reason"] = json!("length");
            }
            sse(chunks, false)
        }
        Reply::CutMidCall { name, arguments } => {
            let half = &arguments[..arguments.len() / 2];
            let calls = vec![(name, half.to_string())];
            let mut chunks = turn_chunks("", "", &calls, &shared.style, prompt_tokens);
            chunks.truncate(chunks.len().saturating_sub(3));
            sse(chunks, true)
        }
    }
}

/// The script's next reply, delays waited and reactions made.
pub(crate) async fn next_reply(shared: &Shared, request: &Value) -> Result<Reply, Response> {
    let next = lock(&shared.script).pop_front();
    let Some(mut reply) = next else {
        return Err(error(500, "the test script has no more replies"));
    };
    loop {
        match reply {
            Reply::Delayed(delay, inner) => {
                tokio::time::sleep(delay).await;
                reply = *inner;
            }
            Reply::Reacting(reaction) => reply = (reaction.0)(&last_message_text(request)),
            other => return Ok(other),
        }
    }
}

/// The text of the request's last message (a tool result, or in text mode the user turn
/// carrying it).
fn last_message_text(request: &Value) -> String {
    let last = request["messages"]
        .as_array()
        .and_then(|messages| messages.last());
    match last.map(|m| &m["content"]) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// wright's condenser asking for a summary (recognized by its instructions).
pub(crate) fn is_summary_request(request: &Value) -> bool {
    request["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.starts_with("You condense the history"))
}

/// The tool-calling probe: a request whose only tool is `wright_probe`.
pub(crate) fn is_probe(request: &Value) -> bool {
    request["tools"]
        .as_array()
        .is_some_and(|tools| tools.len() == 1 && tools[0]["function"]["name"] == "wright_probe")
}

pub(crate) fn error(status: u16, message: &str) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        code,
        Json(json!({"error": {"message": message, "type": "test_error"}})),
    )
        .into_response()
}
