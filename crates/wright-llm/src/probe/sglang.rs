//! SGLang.
//!
//! Read against SGLang's documentation ("SGLang Native APIs", `docs/basic_usage/native_api`
//! in https://github.com/sgl-project/sglang: `/get_model_info` → `model_path`,
//! `tokenizer_path`, `is_generation`, …; `/get_server_info` → server arguments, token limits and
//! memory pool sizes) and source (`sglang/srt/entrypoints/http_server.py`: `get_server_info`
//! returns the `ServerArgs` fields, including `context_length` (null unless
//! `--context-length` was given), merged with the scheduler's `max_total_num_tokens` and
//! `max_req_input_len`, plus `"version"`; `sglang/srt/entrypoints/openai/protocol.py`
//! `ModelCard`: `owned_by = "sglang"`, `max_model_len` = the model config's `context_len`).
//! - The window is `max_model_len` from `/v1/models`; failing that, the `--context-length`
//!   server argument. When the KV cache holds fewer tokens than that, the scheduler caps a
//!   request's input at `max_req_input_len`, which then is the real limit.

use super::count;
use super::openai;
use super::ContextWindow;
use serde_json::Value;

/// `GET /get_model_info`: the served model path, when the body is SGLang's.
pub(super) fn parse_model_info(body: &Value) -> Option<String> {
    body.get("model_path")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
}

/// What `GET /get_server_info` says.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct SglangServerInfo {
    pub version: Option<String>,
    /// The `--context-length` server argument, when one was given.
    pub context_length: Option<u64>,
    /// The longest input the scheduler accepts in one request.
    pub max_req_input_len: Option<u64>,
}

/// `GET /get_server_info`.
pub(super) fn parse_server_info(body: &Value) -> Option<SglangServerInfo> {
    if !body.is_object() {
        return None;
    }
    let positive = |key: &str| body.get(key).and_then(count).filter(|n| *n > 0);
    Some(SglangServerInfo {
        version: body
            .get("version")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string),
        context_length: positive("context_length"),
        max_req_input_len: positive("max_req_input_len"),
    })
}

/// The chosen model's window from `/v1/models` and `/get_server_info`.
pub(super) fn parse_context(
    models: Option<&Value>,
    server_info: Option<&SglangServerInfo>,
    model: &str,
) -> Option<ContextWindow> {
    let from_models = models
        .and_then(|body| openai::pick_entry(openai::parse_model_entries(body), model))
        .and_then(|entry| entry.get("max_model_len"))
        .and_then(count)
        .filter(|n| *n > 0)
        .map(|n| (n, "SGLang max_model_len"));
    let from_args = server_info
        .and_then(|info| info.context_length)
        .map(|n| (n, "SGLang --context-length"));
    let (tokens, source) = from_models.or(from_args)?;
    let input_cap = server_info
        .and_then(|info| info.max_req_input_len)
        .map(|n| n.saturating_add(1));
    Some(match input_cap {
        Some(cap) if cap < tokens => ContextWindow {
            tokens: cap,
            model_max: Some(tokens),
            source:
                "SGLang max_req_input_len (the KV cache holds fewer tokens than the context length)"
                    .to_string(),
        },
        _ => ContextWindow {
            tokens,
            model_max: None,
            source: source.to_string(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The keys the native-API docs assert for `/get_model_info`.
    fn model_info_body() -> Value {
        json!({"model_path": "qwen/qwen2.5-0.5b-instruct", "is_generation": true,
               "tokenizer_path": "qwen/qwen2.5-0.5b-instruct",
               "preferred_sampling_params": null, "weight_version": "default"})
    }

    /// A trimmed `/get_server_info`: server args + scheduler info + version.
    fn server_info_body(context_length: Value, max_req_input_len: u64) -> Value {
        json!({"model_path": "qwen/qwen2.5-0.5b-instruct", "host": "0.0.0.0", "port": 30000,
               "context_length": context_length, "mem_fraction_static": 0.88,
               "max_running_requests": null, "chunked_prefill_size": 8192,
               "max_total_num_tokens": 1_000_000, "max_req_input_len": max_req_input_len,
               "status": "ready", "internal_states": [{"last_gen_throughput": 0.0}],
               "version": "0.4.6.post1"})
    }

    fn models_body() -> Value {
        json!({"object": "list", "data": [{"id": "qwen/qwen2.5-0.5b-instruct",
               "object": "model", "created": 1735000000, "owned_by": "sglang",
               "root": "qwen/qwen2.5-0.5b-instruct", "max_model_len": 32768}]})
    }

    #[test]
    fn detection_and_version() {
        assert_eq!(
            parse_model_info(&model_info_body()).as_deref(),
            Some("qwen/qwen2.5-0.5b-instruct")
        );
        assert_eq!(parse_model_info(&json!({"detail": "Not Found"})), None);
        let info = parse_server_info(&server_info_body(json!(null), 32767)).expect("object");
        assert_eq!(info.version.as_deref(), Some("0.4.6.post1"));
        assert_eq!(info.context_length, None);
    }

    #[test]
    fn max_model_len_is_the_window() {
        let info = parse_server_info(&server_info_body(json!(null), 32767)).expect("object");
        assert_eq!(
            parse_context(
                Some(&models_body()),
                Some(&info),
                "qwen/qwen2.5-0.5b-instruct"
            ),
            Some(ContextWindow {
                tokens: 32768,
                model_max: None,
                source: "SGLang max_model_len".into()
            })
        );
    }

    #[test]
    fn the_context_length_argument_when_the_model_list_is_silent() {
        let info = parse_server_info(&server_info_body(json!(16384), 16383)).expect("object");
        assert_eq!(
            parse_context(None, Some(&info), "m"),
            Some(ContextWindow {
                tokens: 16384,
                model_max: None,
                source: "SGLang --context-length".into()
            })
        );
    }

    #[test]
    fn a_small_kv_cache_caps_the_input() {
        let info = parse_server_info(&server_info_body(json!(null), 8191)).expect("object");
        let window = parse_context(Some(&models_body()), Some(&info), "any").expect("window");
        assert_eq!(window.tokens, 8192);
        assert_eq!(window.model_max, Some(32768));
    }

    #[test]
    fn nothing_known_is_no_window() {
        assert_eq!(parse_context(None, None, "m"), None);
        assert_eq!(parse_server_info(&json!("x")), None);
    }
}
