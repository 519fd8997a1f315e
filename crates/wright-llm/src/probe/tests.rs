//! End-to-end probes against emulated servers on 127.0.0.1.
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
            allocated_context: None,
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
            allocated_context: None,
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

#[test]
fn the_ollama_window_never_shrinks_a_loaded_model_nor_passes_its_training() {
    let info = |allocated: Option<u64>| ServerInfo {
        kind: ServerKind::Ollama,
        version: None,
        models: Vec::new(),
        context: Some(ContextWindow {
            tokens: allocated.unwrap_or(4096),
            model_max: Some(131072),
            source: String::new(),
        }),
        processor: None,
        allocated_context: allocated,
    };
    let asked = |allocated, user| ollama_window(&info(allocated), user).unwrap();
    assert_eq!(
        (asked(None, None).num_ctx, asked(None, None).tokens),
        (32768, 32768)
    );
    // Loaded with more already: keep it (no reload), but stay within the user's limit.
    let loaded = asked(Some(65536), Some(20000));
    assert_eq!((loaded.num_ctx, loaded.tokens), (65536, 20000));
    let beyond = asked(None, Some(200000));
    assert_eq!((beyond.num_ctx, beyond.tokens), (131072, 131072));
    let other = ServerInfo {
        kind: ServerKind::LlamaCpp,
        ..info(None)
    };
    assert!(ollama_window(&other, None).is_none());
}
