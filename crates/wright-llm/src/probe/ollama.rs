//! Ollama.
//!
//! Read against Ollama's API documentation, `docs/api.md` in https://github.com/ollama/ollama
//! ("Show Model Information", "List Running Models"), `docs/context-length.mdx`, and the
//! `ollama ps` table in `cmd/cmd.go` (`ListRunningHandler`):
//! - `GET /api/version` → `{"version": "0.6.2"}`.
//! - `POST /api/show {"model": NAME}` → `model_info["<arch>.context_length"]` where `<arch>` is
//!   `model_info["general.architecture"]` (the trained maximum), and `parameters`, a text blob of
//!   `name value` lines such as `num_ctx                        8192`.
//! - `GET /api/ps` → `models[]` with `name`, `model`, `size`, `size_vram` and, in recent
//!   releases, `context_length`: the context actually allocated for the loaded model.
//! - When nothing sets `num_ctx`, Ollama silently uses its default window: 4096 tokens
//!   (2048 in old releases; the newest pick it from VRAM: 4k below 24 GiB, 32k to 48 GiB,
//!   256k above, and `OLLAMA_CONTEXT_LENGTH` overrides it), and it clamps any request above the
//!   model's trained length down to it (`llm/server.go`, "requested context size too large
//!   for model"). That silent cut is the trap this module exists to expose.
//! - The CPU/GPU split is computed from `size` and `size_vram` the way `ollama ps` prints its
//!   PROCESSOR column.

use super::count;
use super::ContextWindow;
use serde_json::Value;

/// The window Ollama uses when no `num_ctx` is set, in the releases current when this was
/// written and on machines with less than 24 GiB of VRAM.
pub(super) const DEFAULT_NUM_CTX: u64 = 4096;

/// `GET /api/version`.
pub(super) fn parse_version(body: &Value) -> Option<String> {
    body.get("version")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// What `POST /api/show` says about the model's context.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct OllamaShow {
    /// `model_info["<arch>.context_length"]`: the trained maximum.
    pub model_max: Option<u64>,
    /// `num_ctx` from the model's `parameters`, when its Modelfile sets one.
    pub num_ctx: Option<u64>,
}

/// `POST /api/show`. `None` unless the body describes a model.
pub(super) fn parse_show(body: &Value) -> Option<OllamaShow> {
    let model_info = body.get("model_info").and_then(Value::as_object);
    let parameters = body.get("parameters").and_then(Value::as_str);
    if model_info.is_none() && parameters.is_none() && body.get("details").is_none() {
        return None;
    }
    let model_max = model_info.and_then(|info| {
        let by_arch = info
            .get("general.architecture")
            .and_then(Value::as_str)
            .and_then(|arch| info.get(&format!("{arch}.context_length")))
            .and_then(count);
        by_arch.or_else(|| {
            info.iter()
                .filter(|(key, _)| key.ends_with(".context_length"))
                .find_map(|(_, value)| count(value))
        })
    });
    Some(OllamaShow {
        model_max: model_max.filter(|n| *n > 0),
        num_ctx: parameters.and_then(parse_num_ctx),
    })
}

/// The last `num_ctx N` line of a `parameters` blob.
fn parse_num_ctx(parameters: &str) -> Option<u64> {
    parameters
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            match (words.next(), words.next()) {
                (Some("num_ctx"), Some(value)) => value.trim_matches('"').parse::<u64>().ok(),
                _ => None,
            }
        })
        .rfind(|n| *n > 0)
}

/// The chosen model as `/api/ps` lists it, when it is loaded.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct OllamaRunning {
    /// `context_length`: the allocated window (absent from older releases).
    pub context_length: Option<u64>,
    /// The CPU/GPU split, from `size` and `size_vram`.
    pub processor: Option<String>,
}

/// `GET /api/ps`: the entry for `model` (matched on `name` or `model`, `:latest` implied), if
/// that model is loaded.
pub(super) fn parse_ps(body: &Value, model: &str) -> Option<OllamaRunning> {
    let wanted = canonical_name(model);
    let entry = body
        .get("models")
        .and_then(Value::as_array)?
        .iter()
        .find(|entry| {
            ["name", "model"].iter().any(|key| {
                entry
                    .get(*key)
                    .and_then(Value::as_str)
                    .is_some_and(|name| canonical_name(name) == wanted)
            })
        })?;
    let processor = match (
        entry.get("size").and_then(count),
        entry.get("size_vram").and_then(count),
    ) {
        (Some(size), Some(size_vram)) => processor_split(size, size_vram),
        _ => None,
    };
    Some(OllamaRunning {
        context_length: entry
            .get("context_length")
            .and_then(count)
            .filter(|n| *n > 0),
        processor,
    })
}

/// `ollama ps`'s PROCESSOR column, worded for people: all in VRAM, none, or the split with the
/// CPU share rounded as Ollama rounds it. `None` when the sizes make no sense.
pub(super) fn processor_split(size: u64, size_vram: u64) -> Option<String> {
    if size_vram == 0 {
        return Some("CPU only".to_string());
    }
    if size_vram == size {
        return Some("100% GPU".to_string());
    }
    if size == 0 || size_vram > size {
        return None;
    }
    // Percentages of byte counts: f64 is exact enough, and both values are ≤ 100.
    let cpu = ((size - size_vram) as f64 / size as f64 * 100.0).round() as u64;
    Some(format!("{cpu}% CPU / {}% GPU", 100 - cpu.min(100)))
}

/// The window a request to Ollama must fit in: the allocated one when the model is loaded,
/// else the Modelfile's `num_ctx`, else Ollama's default, each clamped to the trained maximum
/// as Ollama clamps it.
pub(super) fn context(
    show: Option<&OllamaShow>,
    running: Option<&OllamaRunning>,
) -> Option<ContextWindow> {
    let model_max = show.and_then(|s| s.model_max);
    if let Some(tokens) = running.and_then(|r| r.context_length) {
        return Some(ContextWindow {
            tokens,
            model_max,
            source: "Ollama /api/ps context_length (model loaded)".to_string(),
        });
    }
    let show = show?;
    let clamp = |wanted: u64| match model_max {
        Some(max) if max < wanted => (max, true),
        _ => (wanted, false),
    };
    let (tokens, source) = match show.num_ctx {
        Some(num_ctx) => match clamp(num_ctx) {
            (tokens, true) => (
                tokens,
                format!(
                    "Ollama num_ctx parameter ({num_ctx}, clamped to the model's trained length)"
                ),
            ),
            (tokens, false) => (tokens, "Ollama num_ctx parameter".to_string()),
        },
        None => (
            clamp(DEFAULT_NUM_CTX).0,
            format!(
                "Ollama default (no num_ctx set; {DEFAULT_NUM_CTX} assumed while the model is not \
                 loaded, unless OLLAMA_CONTEXT_LENGTH or a large GPU raises it)"
            ),
        ),
    };
    Some(ContextWindow {
        tokens,
        model_max,
        source,
    })
}

/// `name:tag` in lower case, with the `latest` tag Ollama implies when none is given.
fn canonical_name(name: &str) -> String {
    let name = name.trim().to_lowercase();
    let last_segment = name.rsplit('/').next().unwrap_or_default();
    if last_segment.contains(':') {
        name
    } else {
        format!("{name}:latest")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Shaped like the "Show Model Information" response in `docs/api.md`.
    fn show_body(parameters: &str) -> Value {
        json!({
            "modelfile": "# Modelfile generated by \"ollama show\"\nFROM /root/.ollama/models/blobs/sha256-aaaa",
            "parameters": parameters,
            "template": "{{ .Prompt }}",
            "details": {"parent_model": "", "format": "gguf", "family": "qwen2",
                        "families": ["qwen2"], "parameter_size": "7.6B",
                        "quantization_level": "Q4_K_M"},
            "model_info": {
                "general.architecture": "qwen2",
                "general.parameter_count": 7615616512_u64,
                "qwen2.block_count": 28,
                "qwen2.context_length": 32768,
                "qwen2.embedding_length": 3584,
                "tokenizer.ggml.model": "gpt2"
            }
        })
    }

    /// Shaped like the "List Running Models" response in `docs/api.md`, plus the
    /// `context_length` field recent releases add (printed as CONTEXT by `ollama ps`).
    fn ps_body(size: u64, size_vram: u64, context_length: Option<u64>) -> Value {
        let mut entry = json!({
            "name": "qwen2.5-coder:7b",
            "model": "qwen2.5-coder:7b",
            "size": size,
            "digest": "2ae6f6dd7a3dd734790bbbf58b8909a606e0e7e97e94b7604e0aa7ae4490e6d8",
            "details": {"format": "gguf", "family": "qwen2", "parameter_size": "7.6B",
                        "quantization_level": "Q4_K_M"},
            "expires_at": "2025-06-04T14:38:31.83753-07:00",
            "size_vram": size_vram
        });
        if let Some(n) = context_length {
            entry["context_length"] = json!(n);
        }
        json!({"models": [entry]})
    }

    #[test]
    fn version() {
        assert_eq!(
            parse_version(&json!({"version": "0.6.2"})).as_deref(),
            Some("0.6.2")
        );
        assert_eq!(parse_version(&json!({"version": ""})), None);
        assert_eq!(parse_version(&json!({"status": "ok"})), None);
    }

    #[test]
    fn without_num_ctx_the_default_is_the_window() {
        let show = parse_show(&show_body(
            "stop                           \"<|im_start|>\"\nstop                           \"<|im_end|>\"",
        ))
        .expect("a model");
        assert_eq!(
            show,
            OllamaShow {
                model_max: Some(32768),
                num_ctx: None
            }
        );
        let window = context(Some(&show), None).expect("window");
        assert_eq!(window.tokens, 4096);
        assert_eq!(window.model_max, Some(32768));
        assert!(
            window.source.starts_with("Ollama default (no num_ctx set"),
            "{}",
            window.source
        );
    }

    #[test]
    fn num_ctx_from_parameters() {
        let show = parse_show(&show_body(
            "num_ctx                        16384\nstop                           \"<|im_end|>\"",
        ))
        .expect("a model");
        assert_eq!(show.num_ctx, Some(16384));
        assert_eq!(
            context(Some(&show), None),
            Some(ContextWindow {
                tokens: 16384,
                model_max: Some(32768),
                source: "Ollama num_ctx parameter".into()
            })
        );
    }

    #[test]
    fn num_ctx_above_the_trained_length_is_clamped() {
        let show = parse_show(&show_body("num_ctx 65536")).expect("a model");
        let window = context(Some(&show), None).expect("window");
        assert_eq!(window.tokens, 32768);
        assert!(window.source.contains("clamped"), "{}", window.source);
    }

    #[test]
    fn a_loaded_model_reports_its_allocated_window_and_split() {
        let show = parse_show(&show_body("")).expect("a model");
        let running = parse_ps(
            &ps_body(6_654_289_920, 6_654_289_920, Some(8192)),
            "qwen2.5-coder:7b",
        )
        .expect("loaded");
        assert_eq!(running.processor.as_deref(), Some("100% GPU"));
        assert_eq!(
            context(Some(&show), Some(&running)),
            Some(ContextWindow {
                tokens: 8192,
                model_max: Some(32768),
                source: "Ollama /api/ps context_length (model loaded)".into()
            })
        );
    }

    #[test]
    fn a_partly_offloaded_model() {
        // 10 GB model, 5.2 GB of it in VRAM: `ollama ps` prints "48%/52% CPU/GPU".
        let running = parse_ps(
            &ps_body(10_000_000_000, 5_200_000_000, None),
            "qwen2.5-coder:7b",
        )
        .expect("loaded");
        assert_eq!(running.processor.as_deref(), Some("48% CPU / 52% GPU"));
        // Older releases send no context_length: the Modelfile/default rule applies.
        assert_eq!(running.context_length, None);
        let show = parse_show(&show_body("num_ctx 8192")).expect("a model");
        assert_eq!(
            context(Some(&show), Some(&running)).map(|w| w.tokens),
            Some(8192)
        );
    }

    #[test]
    fn processor_wording() {
        assert_eq!(processor_split(5, 0).as_deref(), Some("CPU only"));
        assert_eq!(processor_split(5, 5).as_deref(), Some("100% GPU"));
        assert_eq!(
            processor_split(1000, 1).as_deref(),
            Some("100% CPU / 0% GPU")
        );
        assert_eq!(processor_split(0, 0).as_deref(), Some("CPU only"));
        assert_eq!(processor_split(5, 6), None);
    }

    #[test]
    fn ps_matches_names_with_the_implied_latest_tag() {
        let body = json!({"models": [{"name": "llama3.2:latest", "model": "llama3.2:latest",
                                      "size": 10, "size_vram": 0, "context_length": 4096}]});
        let running = parse_ps(&body, "llama3.2").expect("loaded");
        assert_eq!(running.context_length, Some(4096));
        assert_eq!(running.processor.as_deref(), Some("CPU only"));
        assert_eq!(parse_ps(&body, "llama3.2:1b"), None);
        assert_eq!(parse_ps(&json!({"models": []}), "llama3.2"), None);
        assert_eq!(parse_ps(&json!({"error": "x"}), "llama3.2"), None);
        let hub = json!({"models": [{"name": "hf.co/org/repo:Q4_K_M", "size": 1, "size_vram": 1}]});
        assert!(parse_ps(&hub, "HF.co/org/repo:Q4_K_M").is_some());
    }

    #[test]
    fn context_length_key_found_without_the_architecture() {
        let body = json!({"model_info": {"llama.context_length": 131072}, "parameters": ""});
        assert_eq!(parse_show(&body).and_then(|s| s.model_max), Some(131072));
    }

    #[test]
    fn errors_are_not_models() {
        assert_eq!(parse_show(&json!({"error": "model 'x' not found"})), None);
        assert_eq!(context(None, None), None);
    }
}
