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
        "The {} context window for this model is only {have} tokens ({}); agent work needs at \
         least {ENOUGH_TOKENS}.",
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
fn server_root(base_url: &str) -> &str {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::net::SocketAddr;
    use std::sync::Arc;
    use std::sync::Mutex;
    use tokio::io::AsyncReadExt;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    fn window(tokens: u64, model_max: Option<u64>, source: &str) -> ContextWindow {
        ContextWindow {
            tokens,
            model_max,
            source: source.to_string(),
        }
    }

    #[test]
    fn names() {
        let names: Vec<_> = [
            ServerKind::Ollama,
            ServerKind::LlamaCpp,
            ServerKind::Vllm,
            ServerKind::LmStudio,
            ServerKind::Sglang,
            ServerKind::Unknown,
        ]
        .into_iter()
        .map(ServerKind::name)
        .collect();
        assert_eq!(
            names,
            [
                "Ollama",
                "llama.cpp",
                "vLLM",
                "LM Studio",
                "SGLang",
                "OpenAI-compatible"
            ]
        );
    }

    #[test]
    fn no_advice_for_a_big_enough_window() {
        let big = window(16384, None, "vLLM max_model_len");
        assert_eq!(small_window_advice(ServerKind::Vllm, &big), None);
        let huge = window(131072, Some(131072), "llama.cpp /props n_ctx");
        assert_eq!(small_window_advice(ServerKind::LlamaCpp, &huge), None);
    }

    #[test]
    fn ollama_advice_names_the_env_var_and_the_modelfile() {
        let small = window(4096, Some(131072), "Ollama default (no num_ctx set)");
        let advice = small_window_advice(ServerKind::Ollama, &small).expect("advice");
        assert!(advice.contains("only 4096 tokens"), "{advice}");
        assert!(
            advice.contains("Ollama default (no num_ctx set)"),
            "{advice}"
        );
        assert!(
            advice.contains("OLLAMA_CONTEXT_LENGTH=32768 ollama serve"),
            "{advice}"
        );
        assert!(advice.contains("PARAMETER num_ctx 32768"), "{advice}");
    }

    #[test]
    fn advice_per_kind() {
        let small = window(8192, None, "x");
        let cases = [
            (ServerKind::LlamaCpp, "-c 32768"),
            (ServerKind::Vllm, "--max-model-len 32768"),
            (ServerKind::LmStudio, "--context-length 32768"),
            (ServerKind::Sglang, "--context-length 32768"),
            (ServerKind::Unknown, "32768 tokens in its settings"),
        ];
        for (kind, needle) in cases {
            let advice = small_window_advice(kind, &small).expect("advice");
            assert!(advice.contains(needle), "{kind:?}: {advice}");
            assert!(advice.contains(kind.name()), "{kind:?}: {advice}");
        }
    }

    #[test]
    fn advice_never_exceeds_the_trained_maximum() {
        let small = window(4096, Some(20000), "Ollama num_ctx parameter");
        let advice = small_window_advice(ServerKind::Ollama, &small).expect("advice");
        assert!(advice.contains("OLLAMA_CONTEXT_LENGTH=20000"), "{advice}");
        assert!(!advice.contains("32768"), "{advice}");
        assert!(
            advice.contains("20000 is the most this model was trained for"),
            "{advice}"
        );

        let maxed = window(8192, Some(8192), "llama.cpp /props n_ctx");
        let advice = small_window_advice(ServerKind::LlamaCpp, &maxed).expect("advice");
        assert!(
            advice.contains("choose a model with a longer context"),
            "{advice}"
        );
        assert!(!advice.contains("-c "), "{advice}");
    }

    #[test]
    fn root_is_the_base_without_v1() {
        assert_eq!(
            server_root("http://127.0.0.1:11434/v1"),
            "http://127.0.0.1:11434"
        );
        assert_eq!(
            server_root("http://127.0.0.1:11434/v1/"),
            "http://127.0.0.1:11434"
        );
        assert_eq!(server_root("http://host/proxy/v1"), "http://host/proxy");
        assert_eq!(server_root("http://host:8080"), "http://host:8080");
    }

    #[test]
    fn router_url_is_escaped() {
        assert_eq!(
            router_props_url("http://h:8080", "ggml-org/gemma-3-4b-it-GGUF:Q4_K_M").as_deref(),
            Some("http://h:8080/props?model=ggml-org%2Fgemma-3-4b-it-GGUF%3AQ4_K_M&autoload=false")
        );
        assert_eq!(router_props_url("not a url", "m"), None);
    }

    #[test]
    fn counts() {
        assert_eq!(count(&json!(8192)), Some(8192));
        assert_eq!(count(&json!(8192.0)), Some(8192));
        assert_eq!(count(&json!("8192")), Some(8192));
        for odd in [
            json!(-1),
            json!(1.5),
            json!(null),
            json!("x"),
            json!(1e300),
            json!([1]),
        ] {
            assert_eq!(count(&odd), None, "{odd}");
        }
    }

    #[test]
    fn detection_order() {
        let ollama = Signals {
            ollama_version: Some("0.6.2".into()),
            owned_by: Some("library".into()),
            ..Signals::default()
        };
        assert_eq!(detect(&ollama), ServerKind::Ollama);
        let llama_with_shim = Signals {
            ollama_version: Some("0.0.0".into()),
            llama_props: true,
            ..Signals::default()
        };
        assert_eq!(detect(&llama_with_shim), ServerKind::LlamaCpp);
        let lm = Signals {
            lm_studio: true,
            owned_by: Some("organization_owner".into()),
            ..Signals::default()
        };
        assert_eq!(detect(&lm), ServerKind::LmStudio);
        let llama_router = Signals {
            owned_by: Some("llamacpp".into()),
            ..Signals::default()
        };
        assert_eq!(detect(&llama_router), ServerKind::LlamaCpp);
        let sglang = Signals {
            sglang_model: true,
            owned_by: Some("sglang".into()),
            has_max_model_len: true,
            ..Signals::default()
        };
        assert_eq!(detect(&sglang), ServerKind::Sglang);
        let vllm = Signals {
            owned_by: Some("vllm".into()),
            vllm_models: true,
            has_max_model_len: true,
            ..Signals::default()
        };
        assert_eq!(detect(&vllm), ServerKind::Vllm);
        assert_eq!(detect(&Signals::default()), ServerKind::Unknown);
    }

    /// A tiny HTTP/1.1 server on 127.0.0.1: answers each listed path (query ignored) with its
    /// JSON, anything else with 404, and records every request head it saw.
    async fn serve(routes: Vec<(&'static str, Value)>) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let routes = Arc::new(routes);
        let log = Arc::clone(&seen);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let routes = Arc::clone(&routes);
                let log = Arc::clone(&log);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0_u8; 4096];
                    let head_end = loop {
                        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            break pos;
                        }
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    };
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                    let length: usize = head
                        .lines()
                        .filter_map(|line| line.split_once(':'))
                        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
                        .and_then(|(_, value)| value.trim().parse().ok())
                        .unwrap_or(0);
                    while buf.len() < head_end + 4 + length {
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let path = target.split('?').next().unwrap_or("/").to_string();
                    log.lock().expect("log").push(head);
                    let (status, body) = match routes.iter().find(|(p, _)| *p == path) {
                        Some((_, body)) => ("200 OK", body.to_string()),
                        None => ("404 Not Found", r#"{"error":"not found"}"#.to_string()),
                    };
                    let reply = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(reply.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        (addr, seen)
    }

    fn test_client() -> reqwest::Client {
        reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("client")
    }

    #[tokio::test]
    async fn probes_an_emulated_llama_server() {
        let model_id = "qwen2.5-coder-7b-instruct-q4_k_m.gguf";
        let (addr, seen) = serve(vec![
            (
                "/props",
                json!({
                    "default_generation_settings": {"id": 0, "n_ctx": 8192,
                        "params": {"n_predict": -1}, "prompt": ""},
                    "total_slots": 4,
                    "model_path": "/models/qwen2.5-coder-7b-instruct-q4_k_m.gguf",
                    "modalities": {"vision": false},
                    "build_info": "b5000-deadbeef"
                }),
            ),
            (
                "/v1/models",
                json!({"object": "list", "data": [{
                    "id": model_id, "object": "model", "created": 1735142223,
                    "owned_by": "llamacpp",
                    "meta": {"vocab_type": 2, "n_vocab": 152064, "n_ctx_train": 32768,
                             "n_embd": 3584, "n_params": 7615616512_u64, "size": 4683071488_u64}
                }]}),
            ),
            ("/health", json!({"status": "ok"})),
        ])
        .await;
        let base_url = format!("http://{addr}/v1");
        let info = probe_server(&test_client(), &base_url, Some("sk-test"), model_id).await;
        assert_eq!(
            info,
            ServerInfo {
                kind: ServerKind::LlamaCpp,
                version: Some("b5000-deadbeef".into()),
                models: vec![model_id.to_string()],
                context: Some(ContextWindow {
                    tokens: 8192,
                    model_max: Some(32768),
                    source: "llama.cpp /props n_ctx (per slot, 4 parallel slots)".into()
                }),
                processor: None,
            }
        );
        let advice = info
            .context
            .as_ref()
            .and_then(|c| small_window_advice(info.kind, c))
            .expect("8192 is small");
        assert!(advice.contains("-c 32768"), "{advice}");

        let heads = seen.lock().expect("log").clone();
        assert!(
            heads.iter().any(|h| h.starts_with("GET /props ")),
            "{heads:?}"
        );
        assert!(
            heads
                .iter()
                .all(|h| h.to_lowercase().contains("authorization: bearer sk-test")),
            "{heads:?}"
        );
        assert!(heads.iter().all(|h| h.starts_with("GET ")), "{heads:?}");
    }

    #[tokio::test]
    async fn probes_an_emulated_ollama() {
        let (addr, seen) = serve(vec![
            ("/api/version", json!({"version": "0.6.2"})),
            (
                "/v1/models",
                json!({"object": "list", "data": [
                    {"id": "qwen2.5-coder:7b", "object": "model", "created": 1, "owned_by": "library"}
                ]}),
            ),
            (
                "/api/show",
                json!({"parameters": "stop \"<|im_end|>\"", "details": {"family": "qwen2"},
                       "model_info": {"general.architecture": "qwen2",
                                      "qwen2.context_length": 32768}}),
            ),
            (
                "/api/ps",
                json!({"models": [{"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b",
                                   "size": 10_000_000_000_u64, "size_vram": 5_200_000_000_u64,
                                   "context_length": 4096}]}),
            ),
        ])
        .await;
        let info = probe_server(
            &test_client(),
            &format!("http://{addr}/v1/"),
            None,
            "qwen2.5-coder:7b",
        )
        .await;
        assert_eq!(info.kind, ServerKind::Ollama);
        assert_eq!(info.version.as_deref(), Some("0.6.2"));
        assert_eq!(info.models, vec!["qwen2.5-coder:7b".to_string()]);
        assert_eq!(info.processor.as_deref(), Some("48% CPU / 52% GPU"));
        assert_eq!(
            info.context,
            Some(ContextWindow {
                tokens: 4096,
                model_max: Some(32768),
                source: "Ollama /api/ps context_length (model loaded)".into()
            })
        );
        let heads = seen.lock().expect("log").clone();
        assert!(
            heads.iter().any(|h| h.starts_with("POST /api/show ")),
            "{heads:?}"
        );
        assert!(
            !heads
                .iter()
                .any(|h| h.to_lowercase().contains("authorization")),
            "{heads:?}"
        );
    }

    #[tokio::test]
    async fn nothing_listening_is_unknown_and_quick() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        drop(listener);
        let started = std::time::Instant::now();
        let info = probe_server(&test_client(), &format!("http://{addr}/v1"), None, "m").await;
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(
            info,
            ServerInfo {
                kind: ServerKind::Unknown,
                version: None,
                models: Vec::new(),
                context: None,
                processor: None,
            }
        );
    }

    #[tokio::test]
    async fn garbage_replies_are_survived() {
        let (addr, _) = serve(vec![
            ("/v1/models", json!("not a list")),
            ("/props", json!({"default_generation_settings": 7})),
            ("/api/version", json!({"version": 12})),
            ("/api/v0/models", json!({"data": 3})),
            ("/get_model_info", json!([])),
        ])
        .await;
        let info = probe_server(&test_client(), &format!("http://{addr}/v1"), None, "").await;
        assert_eq!(info.kind, ServerKind::Unknown);
        assert!(info.models.is_empty());
        assert_eq!(info.context, None);
    }
}
