//! The OpenAI-compatible model list every server answers: `GET {base_url}/models`.
//!
//! Shape per the OpenAI API reference (https://platform.openai.com/docs/api-reference/models/list):
//! `{"object":"list","data":[{"id":…,"object":"model","created":…,"owned_by":…}]}`.
//! Servers add their own fields to each entry; the ones read here:
//! - vLLM and SGLang: `max_model_len` (vLLM `vllm/entrypoints/openai/protocol.py` `ModelCard`,
//!   SGLang `sglang/srt/entrypoints/openai/protocol.py` `ModelCard`);
//! - `owned_by` is `"vllm"`, `"sglang"` or `"llamacpp"` on those servers (their `ModelCard`
//!   defaults; llama.cpp `tools/server/README.md`, `GET /v1/models` example);
//! - llama.cpp: `meta.n_ctx_train` (same README example).

use super::count;
use super::ContextWindow;
use serde_json::Value;

/// The entries of a model list (`data[]`), empty when the body is not one.
pub(super) fn parse_model_entries(body: &Value) -> &[Value] {
    body.get("data")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The model ids of a model list (`data[].id`), in the server's order.
pub(super) fn parse_model_ids(body: &Value) -> Vec<String> {
    parse_model_entries(body)
        .iter()
        .filter_map(|entry| entry.get("id").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// Who the server says owns its models (`data[].owned_by` of the first entry that has one).
pub(super) fn parse_owned_by(body: &Value) -> Option<String> {
    parse_model_entries(body)
        .iter()
        .find_map(|entry| entry.get("owned_by").and_then(Value::as_str))
        .map(str::to_string)
}

/// Whether any entry carries vLLM's `max_model_len` extension.
pub(super) fn parse_has_max_model_len(body: &Value) -> bool {
    parse_model_entries(body)
        .iter()
        .any(|entry| entry.get("max_model_len").and_then(count).is_some())
}

/// The entry for `model`: an exact id match, else a case-insensitive one, else the only
/// entry (single-model servers such as llama-server answer to any model name).
pub(super) fn pick_entry<'a>(entries: &'a [Value], model: &str) -> Option<&'a Value> {
    let id = |entry: &Value| entry.get("id").and_then(Value::as_str).map(str::to_string);
    entries
        .iter()
        .find(|entry| id(entry).as_deref() == Some(model))
        .or_else(|| {
            entries
                .iter()
                .find(|entry| id(entry).is_some_and(|name| name.eq_ignore_ascii_case(model)))
        })
        .or(match entries {
            [only] => Some(only),
            _ => None,
        })
}

/// For a server of unknown kind: a window from the chosen model's entry, when it carries a
/// field that some OpenAI-compatible servers use for it (`max_model_len`, `context_length`,
/// `context_window`). What the server says, nothing guessed.
pub(super) fn parse_generic_context(body: &Value, model: &str) -> Option<ContextWindow> {
    let entry = pick_entry(parse_model_entries(body), model)?;
    ["max_model_len", "context_length", "context_window"]
        .iter()
        .find_map(|field| {
            entry
                .get(*field)
                .and_then(count)
                .map(|tokens| ContextWindow {
                    tokens,
                    model_max: None,
                    source: format!("/v1/models {field}"),
                })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_ids_in_order() {
        let body = json!({"object": "list", "data": [
            {"id": "qwen2.5-coder:7b", "object": "model", "owned_by": "library"},
            {"id": "llama3.2:latest", "object": "model", "owned_by": "library"}
        ]});
        assert_eq!(
            parse_model_ids(&body),
            vec!["qwen2.5-coder:7b", "llama3.2:latest"]
        );
        assert_eq!(parse_owned_by(&body).as_deref(), Some("library"));
        assert!(!parse_has_max_model_len(&body));
    }

    #[test]
    fn anything_else_is_an_empty_list() {
        for body in [
            json!(null),
            json!([]),
            json!({"data": "x"}),
            json!({"data": [1, {"id": 2}]}),
        ] {
            assert!(parse_model_ids(&body).is_empty(), "{body}");
        }
    }

    #[test]
    fn picks_exact_then_case_insensitive_then_only() {
        let entries = vec![json!({"id": "A"}), json!({"id": "b"})];
        assert_eq!(pick_entry(&entries, "b"), Some(&entries[1]));
        assert_eq!(pick_entry(&entries, "a"), Some(&entries[0]));
        assert_eq!(pick_entry(&entries, "c"), None);
        let single = vec![json!({"id": "/models/x.gguf"})];
        assert_eq!(pick_entry(&single, "whatever"), Some(&single[0]));
    }

    #[test]
    fn generic_window_only_from_a_field_the_server_sent() {
        let body = json!({"data": [{"id": "m", "context_length": 65536}]});
        assert_eq!(
            parse_generic_context(&body, "m"),
            Some(ContextWindow {
                tokens: 65536,
                model_max: None,
                source: "/v1/models context_length".into()
            })
        );
        assert_eq!(
            parse_generic_context(&json!({"data": [{"id": "m"}]}), "m"),
            None
        );
    }
}
