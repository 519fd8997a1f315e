//! llama.cpp's llama-server.
//!
//! Read against the server's own documentation, `tools/server/README.md` in
//! https://github.com/ggml-org/llama.cpp ("GET `/props`", "GET `/v1/models`", "Using multiple
//! models"), and the `/props` handler in `tools/server/server-context.cpp`:
//! - `GET /props` → `default_generation_settings.n_ctx` is `slots[0].n_ctx`, the context of ONE
//!   slot: with `-np N` and no unified KV cache that is already `-c` ÷ N; with `--kv-unified`
//!   every slot may use all of `-c`. Either way it is what one request must fit in, so it is
//!   used as is and never divided again. `total_slots` is the `--parallel` count; `build_info`
//!   is `"b<build>-<commit>"`; `model_path` is the `-m` file.
//! - Some builds and forks also put the whole `n_ctx` at the top level. Only when the per-slot
//!   figure is missing is that total used, divided by `total_slots` (the split the README
//!   describes for `--ctx-size` with `--parallel`), so the estimate errs small.
//! - `GET /v1/models` → `data[].meta.n_ctx_train`, the context the model was trained with
//!   (`meta` is `null` while the model loads).
//! - In router mode (several models) `GET /props?model=NAME` addresses one model.

use super::count;
use super::openai;
use super::ContextWindow;
use serde_json::Value;

/// What `/props` says, when the body is llama-server's.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct LlamaProps {
    /// `default_generation_settings.n_ctx`: one slot's context.
    pub slot_n_ctx: Option<u64>,
    /// A top-level `n_ctx` (the whole context, shared by the slots), when sent.
    pub total_n_ctx: Option<u64>,
    pub total_slots: Option<u64>,
    pub build_info: Option<String>,
    pub model_path: Option<String>,
}

/// `GET /props`. `None` unless the body looks like llama-server's (it carries
/// `default_generation_settings` or an `n_ctx`).
pub(super) fn parse_props(body: &Value) -> Option<LlamaProps> {
    let settings = body
        .get("default_generation_settings")
        .filter(|v| v.is_object());
    let total_n_ctx = body.get("n_ctx").and_then(count).filter(|n| *n > 0);
    if settings.is_none() && total_n_ctx.is_none() {
        return None;
    }
    let text = |key: &str| {
        body.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Some(LlamaProps {
        slot_n_ctx: settings
            .and_then(|s| s.get("n_ctx"))
            .and_then(count)
            .filter(|n| *n > 0),
        total_n_ctx,
        total_slots: body.get("total_slots").and_then(count).filter(|n| *n > 0),
        build_info: text("build_info"),
        model_path: text("model_path"),
    })
}

/// `GET /v1/models`: the chosen model's `meta.n_ctx_train`.
pub(super) fn parse_n_ctx_train(body: &Value, model: &str) -> Option<u64> {
    openai::pick_entry(openai::parse_model_entries(body), model)?
        .get("meta")?
        .get("n_ctx_train")
        .and_then(count)
        .filter(|n| *n > 0)
}

/// The window one request gets, from `/props` (and the trained maximum from `/v1/models`).
pub(super) fn context(props: &LlamaProps, n_ctx_train: Option<u64>) -> Option<ContextWindow> {
    let slots = props.total_slots.unwrap_or(1);
    let (tokens, source) = match (props.slot_n_ctx, props.total_n_ctx) {
        (Some(n_ctx), _) if slots > 1 => (
            n_ctx,
            format!("llama.cpp /props n_ctx (per slot, {slots} parallel slots)"),
        ),
        (Some(n_ctx), _) => (n_ctx, "llama.cpp /props n_ctx".to_string()),
        (None, Some(total)) if slots > 1 => (
            total / slots,
            format!("llama.cpp /props n_ctx {total} / total_slots {slots}"),
        ),
        (None, Some(total)) => (total, "llama.cpp /props n_ctx".to_string()),
        (None, None) => return None,
    };
    Some(ContextWindow {
        tokens,
        model_max: n_ctx_train,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Trimmed from the `GET /props` response format in `tools/server/README.md`.
    fn props_body(n_ctx: u64, total_slots: u64) -> Value {
        json!({
            "default_generation_settings": {
                "id": 0, "id_task": -1, "n_ctx": n_ctx, "speculative": false,
                "is_processing": false,
                "params": {"n_predict": -1, "temperature": 0.8, "top_k": 40},
                "prompt": "",
                "next_token": {"has_next_token": true, "n_remain": -1, "n_decoded": 0}
            },
            "total_slots": total_slots,
            "model_path": "../models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf",
            "chat_template": "...",
            "modalities": {"vision": false},
            "build_info": "b4800-1a2b3c4d",
            "is_sleeping": false
        })
    }

    /// The `GET /v1/models` example in the same README.
    fn models_body() -> Value {
        json!({"object": "list", "data": [{
            "id": "../models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf",
            "object": "model", "created": 1735142223, "owned_by": "llamacpp",
            "meta": {"vocab_type": 2, "n_vocab": 128256, "n_ctx_train": 131072,
                     "n_embd": 4096, "n_params": 8030261312_u64, "size": 4912898304_u64}
        }]})
    }

    #[test]
    fn single_slot_window_and_trained_max() {
        let props = parse_props(&props_body(8192, 1)).expect("llama.cpp props");
        assert_eq!(props.build_info.as_deref(), Some("b4800-1a2b3c4d"));
        assert_eq!(
            props.model_path.as_deref(),
            Some("../models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf")
        );
        let n_ctx_train = parse_n_ctx_train(&models_body(), "anything");
        assert_eq!(n_ctx_train, Some(131072));
        assert_eq!(
            context(&props, n_ctx_train),
            Some(ContextWindow {
                tokens: 8192,
                model_max: Some(131072),
                source: "llama.cpp /props n_ctx".into()
            })
        );
    }

    #[test]
    fn several_slots_use_the_per_slot_figure_as_is() {
        // `-c 32768 -np 4` without a unified KV cache: each slot reports 8192.
        let props = parse_props(&props_body(8192, 4)).expect("llama.cpp props");
        let window = context(&props, None).expect("window");
        assert_eq!(window.tokens, 8192);
        assert_eq!(
            window.source,
            "llama.cpp /props n_ctx (per slot, 4 parallel slots)"
        );
    }

    #[test]
    fn a_top_level_total_is_divided_by_the_slots() {
        let body = json!({"n_ctx": 32768, "total_slots": 4, "build_info": "b1"});
        let props = parse_props(&body).expect("llama.cpp props");
        let window = context(&props, Some(131072)).expect("window");
        assert_eq!(window.tokens, 8192);
        assert_eq!(
            window.source,
            "llama.cpp /props n_ctx 32768 / total_slots 4"
        );
        // The per-slot figure wins when both are sent.
        let mut both = props_body(16384, 2);
        both["n_ctx"] = json!(32768);
        let props = parse_props(&both).expect("llama.cpp props");
        assert_eq!(context(&props, None).map(|w| w.tokens), Some(16384));
    }

    #[test]
    fn other_bodies_are_not_llama_cpp() {
        for body in [
            json!({}),
            json!({"error": {"code": 503, "message": "Loading model"}}),
            json!({"default_generation_settings": null}),
            json!({"n_ctx": "lots"}),
            json!([1, 2]),
        ] {
            assert_eq!(parse_props(&body), None, "{body}");
        }
    }

    #[test]
    fn meta_null_while_loading_gives_no_trained_max() {
        let body = json!({"data": [{"id": "m", "owned_by": "llamacpp", "meta": null}]});
        assert_eq!(parse_n_ctx_train(&body, "m"), None);
    }

    #[test]
    fn router_mode_picks_the_named_model() {
        let body = json!({"data": [
            {"id": "a", "meta": {"n_ctx_train": 4096}},
            {"id": "b", "meta": {"n_ctx_train": 32768}}
        ]});
        assert_eq!(parse_n_ctx_train(&body, "b"), Some(32768));
        assert_eq!(parse_n_ctx_train(&body, "c"), None);
    }
}
