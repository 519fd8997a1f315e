//! The HTTP side: one `reqwest` client per conversation, requests built once as bytes,
//! transient failures retried with exponential backoff and jitter, every failure turned
//! into an `LlmError` that names the server and the fix.

use crate::accumulate::Accumulator;
use crate::accumulate::Chunk;
use crate::constrain::ActiveConstraint;
use crate::constrain::Constraint;
use crate::error::LlmError;
use crate::names::closest_name;
use crate::sse::SseDecoder;
use crate::types::ChatMessage;
use crate::types::ChatRequest;
use crate::types::Response;
use crate::types::StreamDelta;
use crate::types::StreamOptions;
use errors::clip;
use errors::error_text;
use futures_util::StreamExt;
use serde_json::Value;
use std::time::Duration;
use std::time::Instant;

mod errors;

#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Base URL ending in `/v1` (see `normalize_base_url`).
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub stream: bool,
    pub temperature: Option<f32>,
    /// Cap on generated tokens per reply (default: the server's).
    pub max_tokens: Option<u32>,
    pub connect_timeout: Duration,
    /// Longest silence allowed while waiting for (more of) a reply. Long by default: a CPU
    /// prefilling a long prompt at 40 tokens/s is silent for minutes and is not stuck.
    pub idle_timeout: Duration,
    pub max_retries: u32,
    /// Fields added to every request body (a profile's `extra`); never the ones wright
    /// sets itself.
    pub extra: serde_json::Map<String, Value>,
    /// Talk to Ollama through its native `/api/chat`, asking for this window (`num_ctx`),
    /// which its OpenAI-compatible endpoint ignores. See `ollama_chat`.
    pub ollama_num_ctx: Option<u64>,
    /// Ask for the progress of reading the prompt while streaming (llama.cpp's
    /// `return_progress`; set only for a server known to be llama.cpp).
    pub prompt_progress: bool,
    /// Hold every reply to a tool call (`constrain`); None sends no constraint.
    pub constraint: Option<crate::constrain::ActiveConstraint>,
}

impl ClientConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            stream: true,
            temperature: None,
            max_tokens: None,
            connect_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(600),
            max_retries: 3,
            extra: serde_json::Map::new(),
            ollama_num_ctx: None,
            prompt_progress: false,
            constraint: None,
        }
    }
}

/// Accepts `host:port`, `http://host:port` or a full base URL; returns one ending in a
/// path, `/v1` when none was given.
pub fn normalize_base_url(raw: &str) -> Result<String, LlmError> {
    let with_scheme = if raw.contains("://") {
        raw.to_string()
    } else {
        format!("http://{raw}")
    };
    let url = reqwest::Url::parse(&with_scheme).map_err(|err| LlmError::BadUrl {
        url: raw.to_string(),
        reason: err.to_string(),
    })?;
    if url.host_str().is_none() {
        return Err(LlmError::BadUrl {
            url: raw.to_string(),
            reason: "no host".into(),
        });
    }
    let trimmed = with_scheme.trim_end_matches('/').to_string();
    if url.path() == "/" || url.path().is_empty() {
        Ok(format!("{trimmed}/v1"))
    } else {
        Ok(trimmed)
    }
}

/// The one tool of the native tool-calling probe.
pub const PROBE_TOOL: &str = "wright_probe";

#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    config: ClientConfig,
    /// The model answers in this process instead of over HTTP (`in_process`).
    local: Option<std::sync::Arc<dyn crate::in_process::InProcessModel>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.config.base_url)
            .field("model", &self.config.model)
            .field("in_process", &self.local.is_some())
            .finish()
    }
}

impl Client {
    pub fn new(config: ClientConfig) -> Result<Self, LlmError> {
        let mut builder = reqwest::Client::builder().connect_timeout(config.connect_timeout);
        // A server on this machine or its network is reached directly: a proxy from the
        // environment (`http_proxy`) would carry the repository's code elsewhere, where
        // `egress` believes it stays here.
        if crate::destination(&config.base_url) != wright_protocol::Destination::Remote {
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|err| LlmError::BadUrl {
            url: config.base_url.clone(),
            reason: err.to_string(),
        })?;
        Ok(Self {
            http,
            config,
            local: None,
        })
    }

    /// A client whose model runs in this process: requests are built exactly as for a
    /// server and handed to `model` instead of being sent.
    pub fn in_process(
        mut config: ClientConfig,
        model: std::sync::Arc<dyn crate::in_process::InProcessModel>,
    ) -> Self {
        config.base_url = crate::in_process::engine_url(&config.model);
        Self {
            http: reqwest::Client::new(),
            config,
            local: Some(model),
        }
    }

    /// Binds an in-process model to the conversation stored in `dir` (its cache is kept
    /// there, for resume); a server's client is unchanged.
    pub fn keep_state_in(&mut self, dir: &std::path::Path) {
        if let Some(bound) = self
            .local
            .as_ref()
            .and_then(|model| model.for_conversation(dir))
        {
            self.local = Some(bound);
        }
    }

    /// This client's constraint for one request that may call none of the tools
    /// `left_out`, when it can say that without changing the prompt: a JSON schema
    /// without their branches, or on the embedded engine `tool_choice` naming the
    /// others. `None` otherwise: the request goes as usual.
    pub fn narrowed_constraint(
        &self,
        left_out: &[&str],
    ) -> Option<crate::constrain::ActiveConstraint> {
        let constraint = self.config.constraint.as_ref()?;
        constraint.without(left_out).or_else(|| {
            self.is_in_process()
                .then(|| constraint.only_tools(left_out))
                .flatten()
        })
    }

    /// Whether the model runs in this process (the embedded engine).
    pub fn is_in_process(&self) -> bool {
        self.local.is_some()
    }

    /// The same client with other settings: over HTTP a new connection pool, in process
    /// the same engine.
    pub fn reconfigured(&self, config: ClientConfig) -> Result<Client, LlmError> {
        match &self.local {
            Some(model) => Ok(Client::in_process(config, model.clone())),
            None => Client::new(config),
        }
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The same connection with other settings (a probe's, or without the constraint).
    pub(crate) fn with_config(&self, config: ClientConfig) -> Client {
        Client {
            http: self.http.clone(),
            config,
            local: self.local.clone(),
        }
    }

    /// Holds every reply to a tool call from now on (None: no longer).
    pub fn set_constraint(&mut self, constraint: Option<crate::constrain::ActiveConstraint>) {
        self.config.constraint = constraint;
    }

    /// This client without its constraint, for a request whose reply is not a call (a
    /// summary, a speed test).
    pub fn unconstrained(&self) -> Client {
        let mut config = self.config.clone();
        config.constraint = None;
        self.with_config(config)
    }

    /// The request body exactly as `complete` sends it.
    pub fn request_body(&self, messages: &[ChatMessage], tools: &[Value]) -> Vec<u8> {
        if let Some(num_ctx) = self.config.ollama_num_ctx {
            let native = crate::ollama_chat::Native {
                model: &self.config.model,
                stream: self.config.stream,
                num_ctx,
                temperature: self.config.temperature,
                max_tokens: self.config.max_tokens,
                extra: &self.config.extra,
                format: self
                    .config
                    .constraint
                    .as_ref()
                    .filter(|c| c.kind == Constraint::OllamaFormat)
                    .and_then(ActiveConstraint::schema),
            };
            return crate::ollama_chat::request_body(&native, messages, tools);
        }
        let constraint = self.config.constraint.as_ref();
        let request = ChatRequest {
            model: &self.config.model,
            messages,
            tools,
            temperature: self.config.temperature,
            max_tokens: self.config.max_tokens,
            extra: &self.config.extra,
            return_progress: self.config.stream && self.config.prompt_progress,
            tool_choice: constraint
                .filter(|c| c.kind == Constraint::ToolChoice && !tools.is_empty())
                .map(ActiveConstraint::tool_choice),
            response_format: constraint
                .filter(|c| c.kind == Constraint::JsonSchema)
                .and_then(ActiveConstraint::schema)
                .map(crate::constrain::ResponseFormat::of),
            stream: self.config.stream,
            stream_options: self.config.stream.then_some(StreamOptions {
                include_usage: true,
            }),
        };
        // Serializing plain data types cannot fail; an empty body would be refused loudly.
        serde_json::to_vec(&request).unwrap_or_default()
    }

    /// Names of the models the server offers (`GET /models`).
    pub async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        if let Some(model) = &self.local {
            return Ok(model.info().models);
        }
        let url = format!("{}/models", self.config.base_url);
        let mut request = self.http.get(&url).timeout(Duration::from_secs(10));
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|err| self.transport(err))?;
        let status = response.status();
        let body = response.bytes().await.map_err(|err| self.transport(err))?;
        if !status.is_success() {
            return Err(self.status_error(status.as_u16(), &body));
        }
        let value: Value = serde_json::from_slice(&body).map_err(|err| LlmError::Malformed {
            url: url.clone(),
            message: format!("model list is not JSON: {err}"),
        })?;
        let names = value
            .get("data")
            .or_else(|| value.get("models"))
            .and_then(Value::as_array)
            .map(|models| {
                models
                    .iter()
                    .filter_map(|m| m.get("id").or_else(|| m.get("name")))
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Ok(names)
    }

    /// Checks that the configured model exists, when the server can list its models.
    pub async fn check_model(&self) -> Result<(), LlmError> {
        let available = match self.list_models().await {
            Ok(names) => names,
            // Servers without a model list (HTTP 404 on /models) are not wrong, just quiet.
            Err(LlmError::Http { status: 404, .. }) => return Ok(()),
            Err(err) => return Err(err),
        };
        if available.is_empty() || available.iter().any(|m| m == &self.config.model) {
            return Ok(());
        }
        Err(self.model_not_found(available))
    }

    fn model_not_found(&self, available: Vec<String>) -> LlmError {
        LlmError::ModelNotFound {
            model: self.config.model.clone(),
            url: self.config.base_url.clone(),
            closest: closest_name(&self.config.model, &available),
            available,
        }
    }

    /// What the server is and what it says about the model (context window first).
    pub async fn probe_server(&self) -> crate::probe::ServerInfo {
        if let Some(model) = &self.local {
            return model.info();
        }
        crate::probe::probe_server(
            &self.http,
            &self.config.base_url,
            self.config.api_key.as_deref(),
            &self.config.model,
        )
        .await
    }

    /// How the server holds a prefix several conversations share (`--parallel`).
    pub async fn prefix_sharing(&self) -> crate::probe::PrefixSharing {
        if self.local.is_some() {
            return crate::probe::PrefixSharing::Unknown;
        }
        crate::probe::prefix_sharing(
            &self.http,
            &self.config.base_url,
            self.config.api_key.as_deref(),
        )
        .await
    }

    /// Whether the server turns this model's tool calls into native `tool_calls`: one tiny
    /// request with one tool, answered in at most 64 tokens.
    pub async fn probe_native_tool_calling(&self) -> Result<bool, LlmError> {
        let mut config = self.config.clone();
        config.stream = false;
        config.temperature = Some(0.0);
        config.max_tokens = Some(64);
        config.constraint = None;
        let probe = self.with_config(config);
        let tools = [serde_json::json!({"type": "function", "function": {
            "name": PROBE_TOOL,
            "description": "Records a number.",
            "parameters": {"type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"]}
        }})];
        let messages = [
            ChatMessage::System {
                content: "You call tools when asked.".into(),
            },
            ChatMessage::User {
                content: format!("Call {PROBE_TOOL} with value 7."),
            },
        ];
        let response = probe
            .complete(&messages, &tools, "probe", &mut |_| {})
            .await?;
        Ok(response
            .tool_calls
            .iter()
            .any(|call| call.function.name == PROBE_TOOL))
    }

    /// Sends the history and returns the whole reply, streaming pieces to `on_delta`.
    /// Transient failures are retried; a cut stream is never returned as a reply.
    pub async fn complete(
        &self,
        messages: &[ChatMessage],
        tools: &[Value],
        step_tag: &str,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Response, LlmError> {
        let body = self.request_body(messages, tools);
        self.complete_body(body, step_tag, on_delta).await
    }

    /// Like `complete`, with the body already built by `request_body` (so a caller can
    /// look at its size first without serializing twice).
    pub async fn complete_body(
        &self,
        body: Vec<u8>,
        step_tag: &str,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Response, LlmError> {
        if let Some(model) = &self.local {
            return model.complete(&body, on_delta).await;
        }
        let body = bytes::Bytes::from(body);
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            match self.attempt(body.clone(), step_tag, on_delta).await {
                Ok(response) => return Ok(response),
                Err(err) if err.is_transient() && attempt < self.config.max_retries => {
                    attempt += 1;
                    on_delta(StreamDelta::Retrying {
                        attempt,
                        reason: err.to_string(),
                    });
                    tokio::time::sleep(backoff(attempt)).await;
                }
                // After retries, the error says how many tries and how long in all.
                Err(err) if attempt > 0 => {
                    return Err(LlmError::GaveUp {
                        last: Box::new(self.refine(err).await),
                        attempts: attempt + 1,
                        elapsed: started.elapsed(),
                    })
                }
                Err(err) => return Err(self.refine(err).await),
            }
        }
    }

    /// A 404 on the chat endpoint is usually an unknown model: say which ones exist.
    async fn refine(&self, err: LlmError) -> LlmError {
        match &err {
            LlmError::Http {
                status: 400 | 404,
                message,
                ..
            } if message.to_lowercase().contains("model") => match self.list_models().await {
                Ok(available) if !available.iter().any(|m| m == &self.config.model) => {
                    self.model_not_found(available)
                }
                _ => err,
            },
            _ => err,
        }
    }

    async fn attempt(
        &self,
        body: bytes::Bytes,
        step_tag: &str,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Response, LlmError> {
        let native = self.config.ollama_num_ctx.is_some();
        let url = if native {
            format!(
                "{}/api/chat",
                crate::probe::server_root(&self.config.base_url)
            )
        } else {
            format!("{}/chat/completions", self.config.base_url)
        };
        let mut request = self
            .http
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key);
        }
        let started = Instant::now();
        let idle = self.config.idle_timeout;
        let response = tokio::time::timeout(idle, request.send())
            .await
            .map_err(|_| self.idle_error())?
            .map_err(|err| self.transport(err))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.bytes().await.unwrap_or_default();
            return Err(self.status_error(status.as_u16(), &body));
        }
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"));
        let mut accumulator = Accumulator::new();
        let mut first_byte: Option<Instant> = None;
        if native {
            // Newline-delimited objects, streamed or not (then there is one).
            let mut reader = crate::ollama_chat::NativeReader::default();
            let mut pending: Vec<u8> = Vec::new();
            let mut stream = response.bytes_stream();
            loop {
                let next = tokio::time::timeout(idle, stream.next())
                    .await
                    .map_err(|_| self.idle_error())?;
                let ended = match next {
                    Some(Ok(bytes)) => {
                        first_byte.get_or_insert_with(Instant::now);
                        pending.extend_from_slice(&bytes);
                        false
                    }
                    Some(Err(_)) => return Err(self.cut(&accumulator)),
                    None => true,
                };
                while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=end).collect();
                    self.push_native_line(&mut reader, &line, &mut accumulator, on_delta)?;
                }
                if ended {
                    let rest = std::mem::take(&mut pending);
                    self.push_native_line(&mut reader, &rest, &mut accumulator, on_delta)?;
                    break;
                }
            }
            if !accumulator.saw_finish() {
                return Err(self.cut(&accumulator));
            }
        } else if is_sse {
            let mut decoder = SseDecoder::new();
            let mut stream = response.bytes_stream();
            let mut done = false;
            while !done {
                let next = tokio::time::timeout(idle, stream.next())
                    .await
                    .map_err(|_| self.idle_error())?;
                let payloads = match next {
                    Some(Ok(bytes)) => {
                        first_byte.get_or_insert_with(Instant::now);
                        decoder.push(&bytes)
                    }
                    Some(Err(_)) => return Err(self.cut(&accumulator)),
                    None => {
                        done = true;
                        decoder.finish().into_iter().collect()
                    }
                };
                for payload in payloads {
                    if payload.trim() == "[DONE]" {
                        done = true;
                        break;
                    }
                    let chunk = self.parse_chunk(&payload)?;
                    accumulator.push_chunk(chunk, on_delta);
                }
            }
            if !accumulator.saw_finish() {
                return Err(self.cut(&accumulator));
            }
        } else {
            let bytes = tokio::time::timeout(idle, response.bytes())
                .await
                .map_err(|_| self.idle_error())?
                .map_err(|_| self.cut(&accumulator))?;
            first_byte = Some(Instant::now());
            let chunk = self.parse_chunk(&String::from_utf8_lossy(&bytes))?;
            accumulator.push_chunk(chunk, on_delta);
        }
        let end = Instant::now();
        let first = first_byte.unwrap_or(end);
        let mut response = accumulator.finish(step_tag);
        // `{"choices": []}` and the like: not an answer, whatever the status said.
        if response.text.is_empty()
            && response.reasoning.is_empty()
            && response.tool_calls.is_empty()
            && response.finish_reason.is_none()
        {
            return Err(LlmError::EmptyReply {
                url: self.config.base_url.clone(),
            });
        }
        response.first_byte_ms = first.duration_since(started).as_secs_f64() * 1000.0;
        response.generation_ms = end.duration_since(first).as_secs_f64() * 1000.0;
        Ok(response)
    }

    fn push_native_line(
        &self,
        reader: &mut crate::ollama_chat::NativeReader,
        line: &[u8],
        accumulator: &mut Accumulator,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<(), LlmError> {
        let line = String::from_utf8_lossy(line);
        if line.trim().is_empty() {
            return Ok(());
        }
        let chunk = reader.chunk(line.trim()).map_err(|err| match err {
            crate::ollama_chat::NativeError::Server(message) => LlmError::Http {
                url: self.config.base_url.clone(),
                status: 500,
                message: clip(&message, 300),
            },
            crate::ollama_chat::NativeError::Malformed(message) => LlmError::Malformed {
                url: self.config.base_url.clone(),
                message: clip(&message, 300),
            },
        })?;
        accumulator.push_chunk(chunk, on_delta);
        Ok(())
    }

    fn parse_chunk(&self, payload: &str) -> Result<Chunk, LlmError> {
        if let Ok(value) = serde_json::from_str::<Value>(payload) {
            if let Some(error) = value.get("error") {
                return Err(LlmError::Http {
                    url: self.config.base_url.clone(),
                    status: 500,
                    message: error_text(error),
                });
            }
            if let Ok(chunk) = serde_json::from_value(value) {
                return Ok(chunk);
            }
        }
        Err(LlmError::Malformed {
            url: self.config.base_url.clone(),
            message: format!("not a chat completion: {}", clip(payload, 200)),
        })
    }
}

/// 0.5 s, 1 s, 2 s … capped at 8 s, each with up to 25 % jitter so retries from several
/// agents do not hit a recovering server in lockstep.
fn backoff(attempt: u32) -> Duration {
    let base_ms = 500u64
        .saturating_mul(1 << attempt.saturating_sub(1).min(4))
        .min(8000);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = u64::from(nanos) % (base_ms / 4 + 1);
    Duration::from_millis(base_ms + jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_normalized() {
        assert_eq!(
            normalize_base_url("localhost:11434").unwrap(),
            "http://localhost:11434/v1"
        );
        assert_eq!(
            normalize_base_url("http://h:1/v1/").unwrap(),
            "http://h:1/v1"
        );
        assert_eq!(
            normalize_base_url("https://h/api/v1").unwrap(),
            "https://h/api/v1"
        );
        assert!(normalize_base_url("http://").is_err());
    }
}
