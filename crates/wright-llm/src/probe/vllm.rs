//! vLLM.
//!
//! Read against vLLM's OpenAI-compatible server source, https://github.com/vllm-project/vllm
//! `vllm/entrypoints/openai/protocol.py` (`ModelCard`: `id`, `owned_by = "vllm"`, `root`,
//! `parent`, `max_model_len`) and `vllm/entrypoints/openai/api_server.py`
//! (`GET /version` → `{"version": VLLM_VERSION}`), and the `--max-model-len` engine argument
//! (docs.vllm.ai, "Engine Arguments").
//! - `max_model_len` is the length the engine was started with: what a request (prompt plus
//!   completion) must fit in. It is already the smaller of `--max-model-len` and what the
//!   model supports, so the trained maximum is not known separately.

use super::count;
use super::openai;
use super::ContextWindow;
use serde_json::Value;

/// `GET /v1/models` answered the way vLLM answers it: an entry owned by `vllm` that carries
/// `max_model_len`.
pub(super) fn parse_is_vllm(body: &Value) -> bool {
    openai::parse_model_entries(body).iter().any(|entry| {
        entry.get("owned_by").and_then(Value::as_str) == Some("vllm")
            && entry.get("max_model_len").and_then(count).is_some()
    })
}

/// `GET /v1/models`: the chosen model's `max_model_len`. LoRA adapters are listed with their
/// base model in `parent` and share its length.
pub(super) fn parse_context(body: &Value, model: &str) -> Option<ContextWindow> {
    let entries = openai::parse_model_entries(body);
    let entry = openai::pick_entry(entries, model)?;
    let tokens = entry.get("max_model_len").and_then(count).or_else(|| {
        let parent = entry.get("parent").and_then(Value::as_str)?;
        openai::pick_entry(entries, parent)?
            .get("max_model_len")
            .and_then(count)
    })?;
    Some(ContextWindow {
        tokens,
        model_max: None,
        source: "vLLM max_model_len".to_string(),
    })
}

/// `GET /version`.
pub(super) fn parse_version(body: &Value) -> Option<String> {
    body.get("version")
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A `ModelList` as vLLM serializes it (`protocol.py`).
    fn models_body() -> Value {
        json!({"object": "list", "data": [
            {"id": "Qwen/Qwen2.5-Coder-32B-Instruct", "object": "model", "created": 1735000000,
             "owned_by": "vllm", "root": "/models/Qwen2.5-Coder-32B-Instruct", "parent": null,
             "max_model_len": 32768,
             "permission": [{"id": "modelperm-1", "object": "model_permission",
                             "allow_sampling": true, "organization": "*", "group": null,
                             "is_blocking": false}]},
            {"id": "sql-lora", "object": "model", "owned_by": "vllm",
             "root": "/adapters/sql", "parent": "Qwen/Qwen2.5-Coder-32B-Instruct",
             "max_model_len": null}
        ]})
    }

    #[test]
    fn max_model_len_is_the_window() {
        let body = models_body();
        assert!(parse_is_vllm(&body));
        assert_eq!(
            parse_context(&body, "Qwen/Qwen2.5-Coder-32B-Instruct"),
            Some(ContextWindow {
                tokens: 32768,
                model_max: None,
                source: "vLLM max_model_len".into()
            })
        );
        assert_eq!(
            parse_context(&body, "sql-lora").map(|w| w.tokens),
            Some(32768)
        );
        assert_eq!(parse_context(&body, "unknown"), None);
    }

    #[test]
    fn version() {
        assert_eq!(
            parse_version(&json!({"version": "0.8.5"})).as_deref(),
            Some("0.8.5")
        );
        assert_eq!(parse_version(&json!({"detail": "Not Found"})), None);
    }

    #[test]
    fn other_servers_are_not_vllm() {
        let sglang = json!({"data": [{"id": "m", "owned_by": "sglang", "max_model_len": 4096}]});
        let ollama = json!({"data": [{"id": "m", "owned_by": "library"}]});
        assert!(!parse_is_vllm(&sglang));
        assert!(!parse_is_vllm(&ollama));
    }
}
