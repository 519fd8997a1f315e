//! Finding a model server when none is configured: the usual local ports, asked at once.

use crate::error::LlmError;
use serde_json::Value;
use std::time::Duration;

/// The servers people run locally, in the order wright prefers them when several answer.
pub const LOCAL_SERVERS: &[(&str, u16)] = &[
    ("Ollama", 11434),
    ("LM Studio", 1234),
    ("llama.cpp", 8080),
    ("vLLM", 8000),
    ("SGLang", 30000),
];

#[derive(Debug, Clone, PartialEq)]
pub struct FoundServer {
    pub kind: &'static str,
    pub base_url: String,
    pub models: Vec<String>,
}

/// Asks every usual local port for its model list in parallel and returns the first
/// server (in `LOCAL_SERVERS` order) that answered like an OpenAI-compatible one.
pub async fn discover_local_server(host: &str) -> Result<FoundServer, LlmError> {
    // Straight to this machine: a proxy from the environment is never asked.
    let http = reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_millis(300))
        .timeout(Duration::from_secs(2))
        .build()
        .map_err(|err| LlmError::BadUrl {
            url: host.to_string(),
            reason: err.to_string(),
        })?;
    let probes = LOCAL_SERVERS.iter().map(|(kind, port)| {
        let http = http.clone();
        let base_url = format!("http://{host}:{port}/v1");
        async move {
            let answer = http.get(format!("{base_url}/models")).send().await.ok()?;
            if !answer.status().is_success() {
                return None;
            }
            let value: Value = answer.json().await.ok()?;
            let models = value
                .get("data")?
                .as_array()?
                .iter()
                .filter_map(|m| m.get("id").and_then(Value::as_str))
                .map(str::to_string)
                .collect();
            Some(FoundServer {
                kind,
                base_url,
                models,
            })
        }
    });
    let answers = futures_util::future::join_all(probes).await;
    answers
        .into_iter()
        .flatten()
        .next()
        .ok_or_else(|| LlmError::NoServerFound {
            tried: LOCAL_SERVERS
                .iter()
                .map(|(kind, port)| format!("{kind} ({host}:{port})"))
                .collect::<Vec<_>>()
                .join(", "),
        })
}
