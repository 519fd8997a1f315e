//! The scripted server as Ollama: its own API next to the OpenAI-compatible one, shaped as
//! Ollama's `docs/api.md` describes it. What matters to wright is emulated faithfully: a
//! native `/api/chat` loads the model with the `options.num_ctx` it carries (clamped to
//! the trained length), while an OpenAI-compatible request loads it with the default
//! window (see the `/v1` handler); `/api/ps` reports the window loaded.

use crate::reply::Reply;
use crate::server::error;
use crate::server::is_probe;
use crate::server::is_summary_request;
use crate::server::lock;
use crate::server::next_reply;
use crate::server::Recorded;
use crate::server::Shared;
use axum::body::Body;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use axum::routing::post;
use axum::Json;
use axum::Router;
use serde_json::json;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// The window Ollama gives a model when nothing sets `num_ctx`.
pub(crate) const DEFAULT_NUM_CTX: u64 = 4096;

pub(crate) fn routes(app: Router<Arc<Shared>>) -> Router<Arc<Shared>> {
    app.route(
        "/api/version",
        get(|| async { Json(json!({"version": "0.12.6"})) }),
    )
    .route("/api/show", post(show))
    .route("/api/ps", get(ps))
    .route("/api/chat", post(chat))
}

async fn show(State(shared): State<Arc<Shared>>) -> Json<Value> {
    let trained = shared.ollama_native.unwrap_or(DEFAULT_NUM_CTX);
    Json(json!({
        "parameters": "",
        "details": {"format": "gguf", "family": "qwen2", "parameter_size": "1.5B"},
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": trained}
    }))
}

async fn ps(State(shared): State<Arc<Shared>>) -> Json<Value> {
    let models: Vec<Value> = lock(&shared.ollama_loaded)
        .map(|window| {
            shared
                .models
                .iter()
                .map(|name| json!({"name": format!("{name}:latest"), "model": format!("{name}:latest"),
                                   "size": 1_000_000_000_u64, "size_vram": 0, "context_length": window}))
                .collect()
        })
        .unwrap_or_default();
    Json(json!({ "models": models }))
}

fn line(message: Value, done: bool) -> Value {
    json!({"model": "test-model", "created_at": "2026-12-02T00:00:00Z", "message": message, "done": done})
}

fn last_line(prompt_tokens: u64) -> Value {
    let mut last = line(json!({"role": "assistant", "content": ""}), true);
    last["done_reason"] = json!("stop");
    last["prompt_eval_count"] = json!(prompt_tokens);
    last["eval_count"] = json!(10);
    last["prompt_eval_duration"] = json!(40_000_000);
    last["eval_duration"] = json!(200_000_000);
    last
}

/// The lines of a turn: text in word pieces, each call whole (arguments as an object).
fn turn_lines(text: &str, calls: &[(String, String)], prompt_tokens: u64) -> Vec<Value> {
    let mut lines: Vec<Value> = text
        .split_inclusive(' ')
        .map(|word| line(json!({"role": "assistant", "content": word}), false))
        .collect();
    if !calls.is_empty() {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(name, arguments)| {
                let arguments = serde_json::from_str::<Value>(arguments)
                    .unwrap_or_else(|_| Value::String(arguments.clone()));
                json!({"function": {"name": name, "arguments": arguments}})
            })
            .collect();
        lines.push(line(
            json!({"role": "assistant", "content": "", "tool_calls": calls}),
            false,
        ));
    }
    lines.push(last_line(prompt_tokens));
    lines
}

fn answer(lines: Vec<Value>, stream: bool) -> Response {
    if !stream {
        // One object: the whole message with the final counts.
        let mut whole = lines.last().cloned().unwrap_or(Value::Null);
        let text: String = lines
            .iter()
            .filter_map(|l| l["message"]["content"].as_str())
            .collect();
        whole["message"]["content"] = json!(text);
        if let Some(calls) = lines.iter().find_map(|l| l["message"].get("tool_calls")) {
            whole["message"]["tool_calls"] = calls.clone();
        }
        return Json(whole).into_response();
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    Response::builder()
        .header(header::CONTENT_TYPE, "application/x-ndjson")
        .body(Body::from(text))
        .unwrap_or_else(|_| error(500, "cannot build the reply"))
}

async fn chat(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let trained = shared.ollama_native.unwrap_or(DEFAULT_NUM_CTX);
    let window = request["options"]["num_ctx"]
        .as_u64()
        .unwrap_or(DEFAULT_NUM_CTX)
        .min(trained);
    *lock(&shared.ollama_loaded) = Some(window);
    let constraint_probe = crate::constrain::is_probe(&request);
    let probe = is_probe(&request) && !constraint_probe;
    let summary = is_summary_request(&request);
    let path = match (constraint_probe, probe, summary) {
        (true, _, _) => "/api/chat#constraint-probe",
        (_, true, _) => "/api/chat#probe",
        (_, _, true) => "/api/chat#condense",
        _ => "/api/chat",
    };
    lock(&shared.requests).push(Recorded {
        path: path.into(),
        body: body.to_vec(),
        at: Instant::now(),
        authorization: None,
    });
    // What Ollama does with a prompt longer than the window: it keeps the end.
    let prompt_tokens = ((body.len() / 4) as u64).min(window);
    let stream = request["stream"].as_bool().unwrap_or(true);
    if let Some(refused) = crate::constrain::refusal(&shared.constraints, &request) {
        return refused;
    }
    if constraint_probe {
        let (text, calls) = crate::constrain::probe_answer(&shared.constraints, &request);
        return answer(turn_lines(&text, &calls, prompt_tokens), stream);
    }
    if probe {
        let calls = [("wright_probe".to_string(), json!({"value": 7}).to_string())];
        return answer(turn_lines("", &calls, prompt_tokens), stream);
    }
    if summary {
        let text = "TASK: the scripted task\nDONE: ran the scripted commands\nFILES: none changed\nFAILED: nothing\nPENDING: the rest\nPLAN: go on";
        return answer(turn_lines(text, &[], prompt_tokens), stream);
    }
    match next_reply(&shared, &request).await {
        Ok(Reply::Turn { text, calls, .. }) => {
            answer(turn_lines(&text, &calls, prompt_tokens), stream)
        }
        Ok(Reply::Status(status, body)) => {
            let code = axum::http::StatusCode::from_u16(status)
                .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
            (code, Json(body)).into_response()
        }
        Ok(_) => error(500, "this reply is not emulated on Ollama's native API"),
        Err(response) => response,
    }
}
