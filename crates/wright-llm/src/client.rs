//! The HTTP side: one `reqwest` client per conversation, requests built once as bytes,
//! transient failures retried with exponential backoff and jitter, every failure turned
//! into an `LlmError` that names the server and the fix.

use crate::constrain::ActiveConstraint;
use crate::constrain::Constraint;
use crate::error::LlmError;
use crate::names::closest_name;
use crate::types::ChatMessage;
use crate::types::ChatRequest;
use crate::types::StreamOptions;
use serde_json::Value;
use std::time::Duration;

mod errors;
mod send;

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

/// Accepts `host:port` (a port is needed without a scheme), `http://host[:port]` or a
/// full base URL; returns one ending in a path, `/v1` when none was given. Anything else
/// (`not-a-url`, `ftp://h`) is an error naming a valid value, never guessed into a host
/// to send the code to.
pub fn normalize_base_url(raw: &str) -> Result<String, LlmError> {
    let bad = |reason: String| {
        LlmError::BadUrl {
        url: raw.to_string(),
        reason: format!(
            "{reason}; give a URL such as http://localhost:8080/v1, or HOST:PORT such as localhost:8080"
        ),
    }
    };
    let has_scheme = raw.contains("://");
    let with_scheme = if has_scheme {
        raw.to_string()
    } else {
        format!("http://{raw}")
    };
    let url = reqwest::Url::parse(&with_scheme).map_err(|err| bad(err.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(format!(
            "the scheme {} is not http or https",
            url.scheme()
        )));
    }
    if url.host_str().is_none() {
        return Err(bad("no host".into()));
    }
    if !has_scheme && url.port().is_none() {
        return Err(bad(
            "neither a URL (no http:// or https://) nor HOST:PORT".into()
        ));
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

    /// This client for a short answer in words: no constraint, greedy (the model's most
    /// likely words, the same each time), at most `max_tokens`.
    pub fn for_words(&self, max_tokens: u32) -> Client {
        let mut config = self.config.clone();
        config.constraint = None;
        config.temperature = Some(0.0);
        config.max_tokens = Some(max_tokens);
        self.with_config(config)
    }

    /// This client for answers in words sampled at `temperature` (each request may
    /// answer otherwise): no constraint, at most `max_tokens`.
    pub fn for_samples(&self, max_tokens: u32, temperature: f32) -> Client {
        let mut config = self.config.clone();
        config.constraint = None;
        config.temperature = Some(temperature);
        config.max_tokens = Some(max_tokens);
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
                .map(|c| c.tool_choice(tools)),
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
        assert_eq!(
            normalize_base_url("localhost:8080/api/v1").unwrap(),
            "http://localhost:8080/api/v1"
        );
        assert_eq!(
            normalize_base_url("http://gpubox").unwrap(),
            "http://gpubox/v1"
        );
        // Neither a URL nor HOST:PORT: an error that shows a valid value, not a guess.
        for raw in ["not-a-url", "api.example.com", "ftp://h:1", "localhost:"] {
            let err = normalize_base_url(raw).unwrap_err().to_string();
            assert!(err.contains("http://localhost:8080/v1"), "{raw}: {err}");
        }
    }
}
