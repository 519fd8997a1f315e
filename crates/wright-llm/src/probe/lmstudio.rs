//! LM Studio.
//!
//! Read against LM Studio's developer documentation, https://github.com/lmstudio-ai/docs
//! `1_developer/2_rest/endpoints.md` ("REST API v0": `GET /api/v0/models` → `data[]` with `id`,
//! `type`, `state` = `"loaded"` / `"not-loaded"`, `max_context_length`) and
//! `1_developer/2_rest/list.md` (v1: `GET /api/v1/models` → `models[]` with `key`,
//! `max_context_length`, `loaded_instances[].id` and `loaded_instances[].config.context_length`).
//! - A loaded model's v0 entry also carries `loaded_context_length`, the window it was loaded
//!   with. The v0 page's examples show only unloaded models, so that field is known from
//!   clients that read it, not from the page; the v1 `loaded_instances[].config.context_length`
//!   is the documented equivalent and is read too.
//! - A model that is not loaded gets loaded on first use with settings this API does not show,
//!   so no window is claimed for it.

use super::count;
use super::openai;
use super::ContextWindow;
use serde_json::Value;

/// `GET /api/v0/models` answered the way LM Studio answers it.
pub(super) fn parse_is_v0_models(body: &Value) -> bool {
    let Some(entries) = body.get("data").and_then(Value::as_array) else {
        return false;
    };
    entries.is_empty()
        || entries.iter().any(|entry| {
            entry.get("state").and_then(Value::as_str).is_some()
                || entry.get("max_context_length").is_some()
        })
}

/// `GET /api/v1/models` answered the way LM Studio answers it.
pub(super) fn parse_is_v1_models(body: &Value) -> bool {
    body.get("models")
        .and_then(Value::as_array)
        .is_some_and(|models| {
            models.iter().any(|model| {
                model.get("key").and_then(Value::as_str).is_some()
                    && model.get("loaded_instances").is_some_and(Value::is_array)
            })
        })
}

/// `GET /api/v0/models`: the chosen model's window, when it is loaded.
pub(super) fn parse_v0_context(body: &Value, model: &str) -> Option<ContextWindow> {
    let entry = openai::pick_entry(openai::parse_model_entries(body), model)?;
    if entry.get("state").and_then(Value::as_str) != Some("loaded") {
        return None;
    }
    let tokens = entry.get("loaded_context_length").and_then(count)?;
    Some(ContextWindow {
        tokens,
        model_max: entry.get("max_context_length").and_then(count),
        source: "LM Studio loaded_context_length".to_string(),
    })
}

/// `GET /api/v1/models`: the chosen model's window, when an instance of it is loaded.
/// Matched on `key` or on a loaded instance's `id` (the identifier requests name).
pub(super) fn parse_v1_context(body: &Value, model: &str) -> Option<ContextWindow> {
    let models = body.get("models").and_then(Value::as_array)?;
    let instances = |m: &'_ Value| -> Vec<Value> {
        m.get("loaded_instances")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let names_match = |name: Option<&str>| name.is_some_and(|n| n.eq_ignore_ascii_case(model));
    let (entry, instance) = models.iter().find_map(|m| {
        let loaded = instances(m);
        let by_id = loaded
            .iter()
            .find(|i| names_match(i.get("id").and_then(Value::as_str)))
            .cloned();
        match by_id {
            Some(instance) => Some((m, instance)),
            None if names_match(m.get("key").and_then(Value::as_str)) => {
                loaded.first().cloned().map(|instance| (m, instance))
            }
            None => None,
        }
    })?;
    let tokens = instance
        .get("config")?
        .get("context_length")
        .and_then(count)?;
    Some(ContextWindow {
        tokens,
        model_max: entry.get("max_context_length").and_then(count),
        source: "LM Studio loaded context_length".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// From the `GET /api/v0/models` response format in `endpoints.md`, with the first model
    /// loaded (which adds `loaded_context_length`).
    fn v0_body() -> Value {
        json!({"object": "list", "data": [
            {"id": "qwen2.5-coder-14b-instruct", "object": "model", "type": "llm",
             "publisher": "lmstudio-community", "arch": "qwen2", "compatibility_type": "gguf",
             "quantization": "Q4_K_M", "state": "loaded",
             "max_context_length": 32768, "loaded_context_length": 4096},
            {"id": "meta-llama-3.1-8b-instruct", "object": "model", "type": "llm",
             "publisher": "lmstudio-community", "arch": "llama", "compatibility_type": "gguf",
             "quantization": "Q4_K_M", "state": "not-loaded", "max_context_length": 131072},
            {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model",
             "type": "embeddings", "publisher": "nomic-ai", "arch": "nomic-bert",
             "compatibility_type": "gguf", "quantization": "Q4_0", "state": "not-loaded",
             "max_context_length": 2048}
        ]})
    }

    /// The `GET /api/v1/models` response example in `list.md`.
    fn v1_body() -> Value {
        json!({"models": [
            {"type": "llm", "publisher": "lmstudio-community", "key": "gemma-3-270m-it-qat",
             "display_name": "Gemma 3 270m Instruct Qat", "architecture": "gemma3",
             "quantization": {"name": "Q4_0", "bits_per_weight": 4},
             "size_bytes": 241410208, "params_string": "270M",
             "loaded_instances": [{"id": "gemma-3-270m-it-qat", "config": {"context_length": 4096}}],
             "max_context_length": 32768, "format": "gguf",
             "capabilities": {"vision": false, "trained_for_tool_use": false},
             "description": null},
            {"type": "embedding", "publisher": "gaianet",
             "key": "text-embedding-nomic-embed-text-v1.5-embedding",
             "display_name": "Nomic Embed Text v1.5",
             "quantization": {"name": "F16", "bits_per_weight": 16}, "size_bytes": 274290560,
             "params_string": null, "loaded_instances": [], "max_context_length": 2048,
             "format": "gguf"}
        ]})
    }

    #[test]
    fn loaded_model_window_and_max() {
        let body = v0_body();
        assert!(parse_is_v0_models(&body));
        assert_eq!(
            parse_v0_context(&body, "qwen2.5-coder-14b-instruct"),
            Some(ContextWindow {
                tokens: 4096,
                model_max: Some(32768),
                source: "LM Studio loaded_context_length".into()
            })
        );
    }

    #[test]
    fn a_model_not_loaded_claims_no_window() {
        assert_eq!(
            parse_v0_context(&v0_body(), "meta-llama-3.1-8b-instruct"),
            None
        );
        assert_eq!(parse_v0_context(&v0_body(), "missing"), None);
    }

    #[test]
    fn v1_loaded_instance() {
        let body = v1_body();
        assert!(parse_is_v1_models(&body));
        assert_eq!(
            parse_v1_context(&body, "gemma-3-270m-it-qat"),
            Some(ContextWindow {
                tokens: 4096,
                model_max: Some(32768),
                source: "LM Studio loaded context_length".into()
            })
        );
        assert_eq!(
            parse_v1_context(&body, "text-embedding-nomic-embed-text-v1.5-embedding"),
            None
        );
    }

    #[test]
    fn other_bodies_are_not_lm_studio() {
        for body in [
            json!({"error": "Unexpected endpoint or method. (GET /api/v0/models)"}),
            json!({"data": [{"id": "m", "owned_by": "vllm"}]}),
            json!({"models": [{"name": "llama3.2"}]}),
            json!(null),
        ] {
            assert!(!parse_is_v0_models(&body), "{body}");
            assert!(!parse_is_v1_models(&body), "{body}");
        }
        assert!(parse_is_v0_models(&json!({"object": "list", "data": []})));
    }
}
