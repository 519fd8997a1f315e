//! The OpenAI-compatible endpoint, where "the model" is the agent working on the server's
//! workspace (`wright serve --workspace DIR`): `POST /v1/chat/completions` starts a
//! conversation with the last user message as its task — its id comes back in
//! `X-Wright-Conversation` — or, with that header, goes on with one (as a message does).
//! Without the header, a request resending the whole history of a conversation this
//! endpoint answered, its own answers unedited, plus one new user message, goes on with
//! that conversation (see `openai_history`); any other history starts a new one;
//! the answer is the agent's own account once its run ended, whole or streamed as SSE
//! (its text, and each action and observation as a short line), with the run's `usage`
//! (its steps' real token counts). Its errors have OpenAI's shape,
//! `{"error": {"message", "type", "code"}}`. `GET /v1/models` names the one model,
//! `wright`. Same key as every route: an OpenAI client sends it as
//! `Authorization: Bearer KEY`.

use crate::api;
use crate::error::ApiError;
use crate::openai_history::content_text;
use crate::openai_history::exchange_of;
use crate::openai_history::Pending;
use crate::openai_history::Role;
use crate::routes::AppState;
use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::response::sse::Event as SseEvent;
use axum::response::sse::Sse;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::Json;
use serde::Deserialize;
use serde_json::json;
use serde_json::Value;
use std::convert::Infallible;
use std::sync::Arc;

/// The header naming the conversation a request goes on with.
pub const CONVERSATION_HEADER: &str = "x-wright-conversation";
/// The one model this endpoint offers.
const MODEL: &str = "wright";

/// The part of a chat completion request the agent reads.
#[derive(Debug, Deserialize)]
pub struct ChatRequest {
    messages: Vec<ChatMessage>,
    #[serde(default)]
    stream: bool,
}

#[derive(Debug, Deserialize)]
struct ChatMessage {
    role: String,
    #[serde(default)]
    content: Value,
}

/// `GET /v1/models`: the one model, `wright` (OpenAI's shape).
#[utoipa::path(get, path = "/v1/models", responses((status = 200, description = "the models, as OpenAI lists them")))]
pub async fn models() -> Json<Value> {
    Json(
        json!({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "wright"}]}),
    )
}

/// The text of the last user message (a string, or the text parts of a list).
fn last_user_text(messages: &[ChatMessage]) -> Option<String> {
    let last = messages.iter().rev().find(|m| m.role == "user")?;
    let text = content_text(&last.content)?;
    (!text.trim().is_empty()).then_some(text)
}

/// `POST /v1/chat/completions`: a conversation on the server's workspace started (or,
/// with `X-Wright-Conversation`, gone on with) by the last user message; the agent's
/// account once its run ended, whole or streamed (`"stream": true`, SSE).
#[utoipa::path(post, path = "/v1/chat/completions",
    request_body(content = Object, description = "an OpenAI chat completion request: `messages`, `stream`"),
    params(("X-Wright-Conversation" = Option<String>, Header, description = "the conversation to go on with")),
    responses((status = 200, description = "an OpenAI chat completion, or its chunks as server-sent events"),
        (status = 400, description = "an OpenAI error: {\"error\": {\"message\", \"type\", \"code\"}}"),
        (status = 409, description = "an OpenAI error: {\"error\": {\"message\", \"type\", \"code\"}}")))]
pub async fn completions(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Json<ChatRequest>, JsonRejection>,
) -> Result<Response, OpenAiError> {
    answer(state, headers, body).await.map_err(OpenAiError)
}

/// An error as OpenAI's clients read it: `{"error": {"message", "type", "code"}}`, the
/// server's own code as `code`.
pub struct OpenAiError(ApiError);

impl IntoResponse for OpenAiError {
    fn into_response(self) -> Response {
        let ApiError {
            status,
            code,
            message,
        } = self.0;
        let kind = match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => "authentication_error",
            status if status.is_server_error() => "server_error",
            _ => "invalid_request_error",
        };
        (
            status,
            Json(json!({"error": {"message": message, "type": kind, "code": code}})),
        )
            .into_response()
    }
}

/// The run's token counts, summed over its steps as they are logged.
#[derive(Debug, Default, Clone, Copy)]
struct Tokens {
    prompt: u64,
    completion: u64,
}

impl Tokens {
    fn usage(self) -> Value {
        json!({
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
        })
    }
}

type Counted = Arc<std::sync::Mutex<Tokens>>;

fn counted(tokens: &Counted) -> Tokens {
    tokens.lock().map(|t| *t).unwrap_or_default()
}

async fn answer(
    state: Arc<AppState>,
    headers: HeaderMap,
    body: Result<Json<ChatRequest>, JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(request) = body?;
    let Some(workspace) = state.workspace.clone() else {
        return Err(ApiError::bad_request(
            "this server has no workspace for the OpenAI-compatible endpoint: start it with --workspace DIR",
        ));
    };
    let text = last_user_text(&request.messages)
        .ok_or_else(|| ApiError::bad_request("the request has no user message with text"))?;
    let given = headers
        .get(CONVERSATION_HEADER)
        .map(|v| v.to_str().unwrap_or("").to_string());
    let turns = exchange_of(
        request
            .messages
            .iter()
            .map(|m| (m.role.as_str(), &m.content)),
    );
    let exchanges = state.exchanges.clone();
    // Events after `after` are the new run's; `trusted`: every assistant turn of the
    // request is one this endpoint wrote in that conversation.
    let (id, after, trusted) = match given {
        Some(id) => {
            let id = crate::error::plain_id(&id)?.to_string();
            let trusted = turns.as_ref().is_some_and(|t| exchanges.take_for(&id, t));
            let after = go_on(&state, &id, text)?;
            (id, after, trusted)
        }
        None => {
            // A client resending the history it had from us goes on with its conversation.
            let continued = turns
                .as_ref()
                .and_then(|t| exchanges.take_extended(t))
                .and_then(|id| {
                    go_on(&state, &id, text.clone())
                        .ok()
                        .map(|after| (id, after))
                });
            match continued {
                Some((id, after)) => (id, after, true),
                None => {
                    let request = api::NewConversation {
                        workspace: Some(workspace.display().to_string()),
                        repository_url: None,
                        repository_branch: None,
                        task: text,
                        settings: api::Settings::default(),
                    };
                    let fresh = turns
                        .as_ref()
                        .is_some_and(|t| t.iter().all(|turn| turn.role() == Role::User));
                    (state.runs.create(request)?, None, fresh)
                }
            }
        }
    };
    let pending = Pending {
        exchanges,
        id: id.clone(),
        request: turns.filter(|_| trusted),
    };
    let (sender, receiver) = tokio::sync::mpsc::channel::<String>(64);
    let runs = state.runs.clone();
    let watched = id.clone();
    let tokens = Counted::default();
    let counting = tokens.clone();
    tokio::spawn(async move { follow(&runs, &watched, after, sender, &counting).await });
    let mut response = if request.stream {
        stream(&id, receiver, tokens, pending).into_response()
    } else {
        whole(&id, receiver, tokens, pending).await.into_response()
    };
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(CONVERSATION_HEADER, value);
    }
    Ok(response)
}

/// Goes on with conversation `id` with the user's `text`; the last event before the new
/// run's.
fn go_on(state: &AppState, id: &str, text: String) -> Result<Option<u64>, ApiError> {
    let last = state
        .runs
        .hub(id)
        .and_then(|hub| hub.after(None).last().map(|e| e.id));
    let message = api::Message {
        text,
        settings: api::Settings::default(),
        condense: false,
    };
    state.runs.message(id, message)?;
    Ok(last)
}

/// Sends the run's events after `after` as short text, until the run ended; counts its
/// steps' tokens into `tokens` (before the text, so they are there when the text ends).
async fn follow(
    runs: &crate::runs::Runs,
    id: &str,
    mut after: Option<u64>,
    sender: tokio::sync::mpsc::Sender<String>,
    tokens: &Counted,
) {
    loop {
        let ended = runs.ended.notified();
        let hub = runs.hub(id);
        let mut grown = hub.as_ref().map(|hub| hub.subscribe());
        if let Some(grown) = grown.as_mut() {
            grown.borrow_and_update();
        }
        let new = hub.as_ref().map(|hub| hub.after(after)).unwrap_or_default();
        for event in new {
            after = Some(event.id);
            let value = serde_json::to_value(&event).unwrap_or_default();
            if value["kind"] == "usage" {
                if let Ok(mut tokens) = tokens.lock() {
                    tokens.prompt += value["prompt_tokens"].as_u64().unwrap_or(0);
                    tokens.completion += value["completion_tokens"].as_u64().unwrap_or(0);
                }
            }
            if let Some(text) = describe(&value) {
                if sender.send(text).await.is_err() {
                    return;
                }
            }
            if value["kind"] == "changes" {
                // Answered once the run has let go, so the next request may go on.
                loop {
                    let ended = runs.ended.notified();
                    if !runs.is_active(id) {
                        return;
                    }
                    ended.await;
                }
            }
        }
        if !runs.is_active(id) {
            // Ended without a hand-over: it never ran, or failed to start.
            let why = runs
                .info(id)
                .and_then(|c| c.error)
                .unwrap_or_else(|| "the run ended".into());
            let _ = sender.send(format!("\n[{why}]\n")).await;
            return;
        }
        match grown.as_mut() {
            Some(grown) => {
                tokio::select! {
                    _ = grown.changed() => {}
                    () = ended => {}
                }
            }
            None => ended.await,
        }
    }
}

/// An event as a short line of the answer; `None` for what a reader does not need.
fn describe(event: &Value) -> Option<String> {
    let clip = |text: &str, most: usize| -> String {
        let text = text.trim();
        match text.char_indices().nth(most) {
            Some((at, _)) => format!("{}…", &text[..at]),
            None => text.to_string(),
        }
    };
    match event["kind"].as_str()? {
        "message" if event["source"] == "agent" => {
            Some(format!("{}\n", event["text"].as_str()?.trim()))
        }
        "action" if event["tool"] == "finish" => Some(format!(
            "\n{}\n",
            event["arguments"]["message"].as_str().unwrap_or("").trim()
        )),
        "action" => {
            let arguments = &event["arguments"];
            let what = arguments["command"]
                .as_str()
                .or_else(|| arguments["path"].as_str())
                .map(str::to_string)
                .unwrap_or_else(|| arguments.to_string());
            Some(format!(
                "→ {}: {}\n",
                event["tool"].as_str()?,
                clip(&what, 200)
            ))
        }
        "observation" => Some(match event["exit_code"].as_i64() {
            Some(code) => format!("← exit {code}\n"),
            None if event["is_error"] == true => {
                format!("← error: {}\n", clip(event["output"].as_str()?, 200))
            }
            None => "← done\n".to_string(),
        }),
        "changes" => Some(match event["branch"].as_str() {
            Some(branch) => format!("\n[changes on branch {branch}]\n"),
            None => format!("\n[changes: {}]\n", event["outcome"].as_str()?),
        }),
        _ => None,
    }
}

fn chunk(id: &str, delta: Value, finish: Option<&str>) -> String {
    json!({
        "id": format!("chatcmpl-{id}"),
        "object": "chat.completion.chunk",
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
    .to_string()
}

/// Where the stream is.
enum Stage {
    Opening,
    Text,
    Stopped,
    Done,
}

/// What the stream has told so far, and what to record once it is whole.
struct Told {
    text: String,
    pending: Option<Pending>,
}

/// The answer streamed: one chunk per line of text, the end chunk (with the run's
/// `usage`), then `[DONE]`; recorded once the end chunk is out.
fn stream(
    id: &str,
    receiver: tokio::sync::mpsc::Receiver<String>,
    tokens: Counted,
    pending: Pending,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, Infallible>>> {
    let id = id.to_string();
    let told = Told {
        text: String::new(),
        pending: Some(pending),
    };
    let events = futures_util::stream::unfold(
        (receiver, Stage::Opening, told),
        move |(mut receiver, stage, mut told)| {
            let (id, tokens) = (id.clone(), tokens.clone());
            async move {
                let (data, next) = match stage {
                    Stage::Opening => (
                        chunk(&id, json!({"role": "assistant", "content": ""}), None),
                        Stage::Text,
                    ),
                    Stage::Text => match receiver.recv().await {
                        Some(text) => {
                            told.text.push_str(&text);
                            (chunk(&id, json!({"content": text}), None), Stage::Text)
                        }
                        None => {
                            if let Some(pending) = told.pending.take() {
                                pending.answered(&told.text);
                            }
                            let mut last: Value =
                                serde_json::from_str(&chunk(&id, json!({}), Some("stop")))
                                    .unwrap_or_default();
                            last["usage"] = counted(&tokens).usage();
                            (last.to_string(), Stage::Stopped)
                        }
                    },
                    Stage::Stopped => ("[DONE]".to_string(), Stage::Done),
                    Stage::Done => return None,
                };
                Some((Ok(SseEvent::default().data(data)), (receiver, next, told)))
            }
        },
    );
    Sse::new(events)
}

/// The answer whole, once the run ended, with its `usage`.
async fn whole(
    id: &str,
    mut receiver: tokio::sync::mpsc::Receiver<String>,
    tokens: Counted,
    pending: Pending,
) -> impl IntoResponse {
    let mut content = String::new();
    while let Some(text) = receiver.recv().await {
        content.push_str(&text);
    }
    pending.answered(&content);
    (
        StatusCode::OK,
        Json(json!({
            "id": format!("chatcmpl-{id}"),
            "object": "chat.completion",
            "model": MODEL,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content.trim()},
                "finish_reason": "stop",
            }],
            "usage": counted(&tokens).usage(),
        })),
    )
}
