//! Probing a model server: what kind it is, its version, its models and — the point of it all —
//! the context window a request to the chosen model must REALLY fit in, plus where the model
//! runs (CPU/GPU) when the server says.
//!
//! Every local server answers the same OpenAI-compatible `/v1/models`, but the number that
//! decides whether an agent works — the live context window — sits somewhere else on each one,
//! and the defaults are traps: Ollama silently cuts every prompt to its default window (4096
//! tokens) unless `num_ctx` is raised; llama-server splits `-c` among its parallel slots; vLLM
//! and SGLang start with whatever `--max-model-len` / `--context-length` says. This module asks
//! each kind in its own dialect (one file per kind, each citing the documentation it follows)
//! and reports the number with where it came from, so a person can be told why their 30k-token
//! conversation is being truncated and exactly which flag fixes it.
//!
//! Guarantees:
//! - `probe_server` never fails and never panics, whatever a server replies (or does not):
//!   anything it cannot learn stays `None`, or `ServerKind::Unknown`.
//! - Every HTTP call has a 2-second timeout and a bounded body; the independent calls run
//!   concurrently, so a probe takes about one or two round trips.
//! - It only reads: GET requests, and Ollama's read-only `POST /api/show`. It never loads a
//!   model (llama.cpp's router is asked with `autoload=false`).
//! - A window is only reported with its `source`; a guess (Ollama's default while the model is
//!   not loaded) says so there.

mod llamacpp;
mod lmstudio;
mod ollama;
mod openai;
mod sglang;
mod sharing;
mod vllm;

use serde_json::Value;
use std::time::Duration;

/// Per-call limit: a local server that takes longer to describe itself is not going to
/// answer the question usefully anyway.
const CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// The largest body read from any probe answer.
const MAX_BODY_BYTES: usize = 8 << 20;
/// Below this many tokens an agent loop (system prompt, tools, a few files) does not fit.
const ENOUGH_TOKENS: u64 = 16384;
/// The window suggested when it is too small.
const SUGGESTED_TOKENS: u64 = 32768;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    Ollama,
    LlamaCpp,
    Vllm,
    LmStudio,
    Sglang,
    /// wright's own engine, in this process (`in_process`).
    Embedded,
    Unknown,
}

impl ServerKind {
    /// The name people know the server by.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Ollama => "Ollama",
            ServerKind::LlamaCpp => "llama.cpp",
            ServerKind::Vllm => "vLLM",
            ServerKind::LmStudio => "LM Studio",
            ServerKind::Sglang => "SGLang",
            ServerKind::Embedded => "wright's embedded engine",
            ServerKind::Unknown => "OpenAI-compatible",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContextWindow {
    /// Tokens the server will actually use for this model now (what a request must fit in).
    pub tokens: u64,
    /// The model's trained maximum, when known (to advise raising the window).
    pub model_max: Option<u64>,
    /// Where the number came from, for people: e.g. "llama.cpp /props n_ctx", "Ollama num_ctx
    /// parameter", "Ollama default (no num_ctx set)", "vLLM max_model_len".
    pub source: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    pub kind: ServerKind,
    pub version: Option<String>,
    pub models: Vec<String>,
    pub context: Option<ContextWindow>,
    /// e.g. "100% GPU", "48% CPU / 52% GPU", "CPU only" when the server says.
    pub processor: Option<String>,
    /// The window allocated for the model now, where the server says (Ollama's `/api/ps`
    /// `context_length` of a loaded model).
    pub allocated_context: Option<u64>,
}

/// What wright asks Ollama for through its native chat API's `num_ctx`, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct OllamaWindow {
    pub num_ctx: u64,
    /// The window wright itself keeps within: `num_ctx`, or less when the user asked for
    /// less.
    pub tokens: u64,
    pub description: String,
}

/// For an Ollama server: the window to ask for. The user's `--context-window`, else
/// 32768 tokens; never less than what the loaded model already has (asking for less would
/// reload it for nothing); never more than the model was trained for, as Ollama would
/// clamp it (which is said).
pub fn ollama_window(info: &ServerInfo, user_limit: Option<u64>) -> Option<OllamaWindow> {
    if info.kind != ServerKind::Ollama {
        return None;
    }
    let model_max = info.context.as_ref().and_then(|c| c.model_max);
    let wanted = user_limit.unwrap_or(SUGGESTED_TOKENS);
    let mut num_ctx = wanted.max(info.allocated_context.unwrap_or(0));
    let mut notes = Vec::new();
    if let Some(max) = model_max.filter(|max| num_ctx > *max) {
        num_ctx = max;
        notes.push(format!(
            "the model was trained for {max} tokens, so Ollama gives no more than that"
        ));
    }
    match (info.allocated_context, &info.context) {
        (Some(allocated), _) => notes.push(format!("{allocated} allocated before")),
        (None, Some(context)) => notes.push(format!(
            "the model is not loaded; without it, Ollama would give {}",
            context.tokens
        )),
        (None, None) => {}
    }
    let tokens = user_limit.map_or(num_ctx, |limit| limit.min(num_ctx));
    let asked = match user_limit {
        Some(_) => "your context_window, asked of Ollama",
        None => "wright's default, asked of Ollama",
    };
    Some(OllamaWindow {
        num_ctx,
        tokens,
        description: format!(
            "{tokens} tokens ({asked}: num_ctx {num_ctx} through its native /api/chat, since its OpenAI-compatible endpoint ignores num_ctx; {})",
            notes.join("; ")
        ),
    })
}

/// `base_url` ends in `/v1` (e.g. "http://127.0.0.1:11434/v1"); the server root is that
/// without the trailing `/v1`.
/// Never fails: whatever cannot be learned stays None / Unknown. Each HTTP call has a short
/// timeout (2 s) and the independent ones run concurrently.
pub async fn probe_server(
    http: &reqwest::Client,
    base_url: &str,
    api_key: Option<&str>,
    model: &str,
) -> ServerInfo {
    let base = base_url.trim().trim_end_matches('/');
    let root = server_root(base);
    let get = |url: String| fetch_json(http, url, api_key, None);

    // Round one: everything that tells the kinds apart, at once.
    let (models, ollama_version, lm_v0, lm_v1, props, sglang_model, vllm_version) = tokio::join!(
        get(format!("{base}/models")),
        get(format!("{root}/api/version")),
        get(format!("{root}/api/v0/models")),
        get(format!("{root}/api/v1/models")),
        get(format!("{root}/props")),
        get(format!("{root}/get_model_info")),
        get(format!("{root}/version")),
    );
    let lm_v0 = lm_v0.filter(lmstudio::parse_is_v0_models);
    let lm_v1 = lm_v1.filter(lmstudio::parse_is_v1_models);
    let llama_props = props.as_ref().and_then(llamacpp::parse_props);
    let kind = detect(&Signals {
        ollama_version: ollama_version.as_ref().and_then(ollama::parse_version),
        lm_studio: lm_v0.is_some() || lm_v1.is_some(),
        llama_props: llama_props.is_some(),
        sglang_model: sglang_model
            .as_ref()
            .and_then(sglang::parse_model_info)
            .is_some(),
        owned_by: models.as_ref().and_then(openai::parse_owned_by),
        vllm_models: models.as_ref().is_some_and(vllm::parse_is_vllm),
        has_max_model_len: models.as_ref().is_some_and(openai::parse_has_max_model_len),
    });

    let mut model_ids = models
        .as_ref()
        .map(openai::parse_model_ids)
        .unwrap_or_default();
    if model_ids.is_empty() {
        if let Some(v0) = &lm_v0 {
            model_ids = openai::parse_model_ids(v0);
        }
    }

    // Round two: what the kind needs to say about the chosen model.
    let mut info = ServerInfo {
        kind,
        version: None,
        models: model_ids,
        context: None,
        processor: None,
        allocated_context: None,
    };
    match kind {
        ServerKind::Ollama => {
            info.version = ollama_version.as_ref().and_then(ollama::parse_version);
            // `name` is what releases before `model` existed read; newer ones ignore it.
            let show_body = serde_json::json!({ "model": model, "name": model });
            let show_request = async {
                if model.is_empty() {
                    None
                } else {
                    fetch_json(http, format!("{root}/api/show"), api_key, Some(&show_body)).await
                }
            };
            let (show, ps) = tokio::join!(show_request, get(format!("{root}/api/ps")));
            let show = show.as_ref().and_then(ollama::parse_show);
            let running = ps.as_ref().and_then(|ps| ollama::parse_ps(ps, model));
            info.context = ollama::context(show.as_ref(), running.as_ref());
            info.allocated_context = running.as_ref().and_then(|r| r.context_length);
            info.processor = running.and_then(|r| r.processor);
        }
        ServerKind::LmStudio => {
            info.context = lm_v0
                .as_ref()
                .and_then(|body| lmstudio::parse_v0_context(body, model))
                .or_else(|| {
                    lm_v1
                        .as_ref()
                        .and_then(|body| lmstudio::parse_v1_context(body, model))
                });
        }
        ServerKind::LlamaCpp => {
            let mut props = llama_props;
            let has_window =
                |p: &llamacpp::LlamaProps| p.slot_n_ctx.is_some() || p.total_n_ctx.is_some();
            if !props.as_ref().is_some_and(has_window) && !model.is_empty() {
                // Router mode: ask for the one model, without loading it.
                if let Some(url) = router_props_url(root, model) {
                    let routed = get(url).await;
                    if let Some(routed) = routed.as_ref().and_then(llamacpp::parse_props) {
                        props = Some(routed);
                    }
                }
            }
            let n_ctx_train = models
                .as_ref()
                .and_then(|body| llamacpp::parse_n_ctx_train(body, model));
            if let Some(props) = &props {
                info.version = props.build_info.clone();
                info.context = llamacpp::context(props, n_ctx_train);
            }
        }
        ServerKind::Sglang => {
            let server_info = get(format!("{root}/get_server_info")).await;
            let server_info = server_info.as_ref().and_then(sglang::parse_server_info);
            info.version = server_info.as_ref().and_then(|s| s.version.clone());
            info.context = sglang::parse_context(models.as_ref(), server_info.as_ref(), model);
        }
        ServerKind::Vllm => {
            info.version = vllm_version.as_ref().and_then(vllm::parse_version);
            info.context = models
                .as_ref()
                .and_then(|body| vllm::parse_context(body, model));
        }
        // Never probed over HTTP: the client answers from the engine itself.
        ServerKind::Embedded => {}
        ServerKind::Unknown => {
            info.context = models
                .as_ref()
                .and_then(|body| openai::parse_generic_context(body, model));
        }
    }
    info
}

/// The advice when the window is small, or None when `tokens >= 16384`. Concrete per kind;
/// never suggests more than `model_max` when that is known (suggests `model_max` instead).
pub fn small_window_advice(kind: ServerKind, context: &ContextWindow) -> Option<String> {
    let have = context.tokens;
    if have >= ENOUGH_TOKENS {
        return None;
    }
    let found = format!(
        "The context window for this model on {} is only {have} tokens ({}); agent work needs \
         at least {ENOUGH_TOKENS}.",
        kind.name(),
        context.source
    );
    let target = match context.model_max {
        Some(max) if max <= have => {
            return Some(format!(
                "{found} That is all this model was trained for ({max} tokens), so choose a model \
                 with a longer context."
            ));
        }
        Some(max) => max.min(SUGGESTED_TOKENS),
        None => SUGGESTED_TOKENS,
    };
    let how = match kind {
        ServerKind::Ollama => format!(
            "Restart Ollama with `OLLAMA_CONTEXT_LENGTH={target} ollama serve`, or set \
             `PARAMETER num_ctx {target}` in a Modelfile and `ollama create` the model from it."
        ),
        ServerKind::LlamaCpp => format!(
            "Restart llama-server with `-c {target}` (with `-np N` parallel slots each slot gets \
             1/N of `-c` unless `--kv-unified` is on, so use `-np 1` or multiply `-c` by N)."
        ),
        ServerKind::Vllm => format!("Restart vLLM with `--max-model-len {target}`."),
        ServerKind::LmStudio => format!(
            "Load the model in LM Studio with a larger context length, e.g. \
             `lms load <model> --context-length {target}`, or raise \"Context Length\" in its \
             load settings."
        ),
        ServerKind::Sglang => format!("Restart SGLang with `--context-length {target}`."),
        ServerKind::Embedded => {
            format!("Raise the context_window setting to {target} tokens: the engine allocates what it is given.")
        }
        ServerKind::Unknown => {
            format!("Raise the server's context length to {target} tokens in its settings.")
        }
    };
    let ceiling = if context.model_max == Some(target) {
        format!(" {target} is the most this model was trained for.")
    } else {
        String::new()
    };
    Some(format!("{found} {how}{ceiling}"))
}

/// What round one found out, for telling the kinds apart.
#[derive(Debug, Default)]
struct Signals {
    /// `/api/version` answered `{"version": …}`.
    ollama_version: Option<String>,
    /// `/api/v0/models` or `/api/v1/models` answered like LM Studio.
    lm_studio: bool,
    /// `/props` answered like llama-server.
    llama_props: bool,
    /// `/get_model_info` answered with a `model_path`.
    sglang_model: bool,
    /// `owned_by` of the `/v1/models` entries.
    owned_by: Option<String>,
    /// `/v1/models` entries owned by `vllm` with `max_model_len`.
    vllm_models: bool,
    /// `/v1/models` entries carry `max_model_len`.
    has_max_model_len: bool,
}

/// Ollama, LM Studio, llama.cpp, SGLang, vLLM, in that order of evidence; a llama-server
/// `/props` wins over `/api/version` since Ollama has no `/props` but llama-server has an
/// Ollama-compatible shim.
fn detect(signals: &Signals) -> ServerKind {
    let owned_by = signals.owned_by.as_deref();
    if signals.ollama_version.is_some() && !signals.llama_props {
        ServerKind::Ollama
    } else if signals.lm_studio {
        ServerKind::LmStudio
    } else if signals.llama_props || owned_by == Some("llamacpp") {
        ServerKind::LlamaCpp
    } else if signals.sglang_model || owned_by == Some("sglang") {
        ServerKind::Sglang
    } else if signals.vllm_models || (owned_by == Some("vllm") && signals.has_max_model_len) {
        ServerKind::Vllm
    } else {
        ServerKind::Unknown
    }
}

/// The server root: `base_url` without its trailing `/v1`.
pub(crate) fn server_root(base_url: &str) -> &str {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base)
}

/// `{root}/props?model=NAME&autoload=false` (llama-server router mode).
fn router_props_url(root: &str, model: &str) -> Option<String> {
    let mut url = reqwest::Url::parse(&format!("{root}/props")).ok()?;
    url.query_pairs_mut()
        .append_pair("model", model)
        .append_pair("autoload", "false");
    Some(url.into())
}

/// A JSON answer from `url` (a POST with `body` when given), or None on any failure: no
/// connection, timeout, a non-2xx status, more than `MAX_BODY_BYTES`, not JSON.
async fn fetch_json(
    http: &reqwest::Client,
    url: String,
    api_key: Option<&str>,
    body: Option<&Value>,
) -> Option<Value> {
    let mut request = match body {
        Some(body) => http.post(&url).json(body),
        None => http.get(&url),
    }
    .timeout(CALL_TIMEOUT)
    .header(reqwest::header::ACCEPT, "application/json");
    if let Some(key) = api_key.filter(|key| !key.is_empty()) {
        request = request.bearer_auth(key);
    }
    let mut response = request.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.ok()? {
        if bytes.len().saturating_add(chunk.len()) > MAX_BODY_BYTES {
            return None;
        }
        bytes.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&bytes).ok()
}

/// A non-negative whole number, however the server wrote it (`8192`, `8192.0`, `"8192"`).
fn count(value: &Value) -> Option<u64> {
    match value {
        Value::Number(number) => number.as_u64().or_else(|| {
            number
                .as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0 && f.fract() == 0.0 && *f < 1.8e19)
                .map(|f| f as u64)
        }),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

pub use sharing::prefix_sharing;
pub use sharing::PrefixSharing;

#[cfg(test)]
mod tests;
