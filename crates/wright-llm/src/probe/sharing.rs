//! What a server does with a prefix several conversations share (`wright run
//! --parallel`): N agents on one task send the same system prompt, tools and task, and a
//! local server can prefill that once — if it keeps it. llama-server with one slot runs
//! one request at a time and each agent's prefix evicts the last one's; with several
//! slots (`--parallel N`) each slot caches its own, in its share of the context, unless
//! the cache is unified (`--kv-unified`), where one prefix serves them all. Read from
//! llama-server's `GET /props` (`total_slots`, and `kv_unified` where a build reports it)
//! and `GET /slots` (one entry per slot); other servers do not say.

use super::fetch_json;
use super::server_root;
use serde_json::Value;

/// How the server holds a shared prefix, as far as it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixSharing {
    /// llama-server with one slot: the agents take turns and evict each other's prefix.
    OneSlot,
    /// Several slots, each with its own part of the context and its own cache.
    Split { slots: u64 },
    /// Several slots over one unified cache: a shared prefix is kept once.
    Unified { slots: u64 },
    /// Several slots; whether the cache is unified is not reported.
    Slots { slots: u64 },
    /// The server does not say (not llama-server, or it did not answer).
    Unknown,
}

impl PrefixSharing {
    /// What it means for `agents` conversations at once, in a sentence.
    pub fn describe(self, agents: u64) -> String {
        match self {
            PrefixSharing::OneSlot if agents < 2 => "llama-server with one slot (one run on it: nothing to share)".to_string(),
            PrefixSharing::OneSlot => format!("llama-server with one slot: the {agents} runs on it take turns and evict each other's cached prefix (start it with --parallel {agents} --kv-unified to share it)"),
            PrefixSharing::Split { slots } => format!("llama-server with {slots} slots, each caching its own prefix in its share of the context (--kv-unified would keep one shared prefix)"),
            PrefixSharing::Unified { slots } => format!("llama-server with {slots} slots over one unified cache: the shared prefix is kept once"),
            PrefixSharing::Slots { slots } => format!("llama-server with {slots} slots (it does not say whether its cache is unified)"),
            PrefixSharing::Unknown => "the server does not say how it caches shared prefixes".to_string(),
        }
    }
}

/// Asks the server at `base_url` (ending in `/v1`); never fails.
pub async fn prefix_sharing(
    http: &reqwest::Client,
    base_url: &str,
    api_key: Option<&str>,
) -> PrefixSharing {
    let base = base_url.trim().trim_end_matches('/');
    let root = server_root(base);
    let (props, slots) = tokio::join!(
        fetch_json(http, format!("{root}/props"), api_key, None),
        fetch_json(http, format!("{root}/slots"), api_key, None),
    );
    read(props.as_ref(), slots.as_ref())
}

/// What `/props` and `/slots` say.
fn read(props: Option<&Value>, slots: Option<&Value>) -> PrefixSharing {
    let Some(props) = props.filter(|p| super::llamacpp::parse_props(p).is_some()) else {
        return PrefixSharing::Unknown;
    };
    let counted = props
        .get("total_slots")
        .and_then(super::count)
        .or_else(|| slots.and_then(Value::as_array).map(|s| s.len() as u64))
        .filter(|n| *n > 0)
        .unwrap_or(1);
    let unified = props
        .get("kv_unified")
        .or_else(|| props["default_generation_settings"].get("kv_unified"))
        .and_then(Value::as_bool);
    match (counted, unified) {
        (1, _) => PrefixSharing::OneSlot,
        (slots, Some(true)) => PrefixSharing::Unified { slots },
        (slots, Some(false)) => PrefixSharing::Split { slots },
        (slots, None) => PrefixSharing::Slots { slots },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn slots_and_the_unified_cache_are_read() {
        let props = |extra: Value| {
            let mut body = json!({"default_generation_settings": {"n_ctx": 8192}});
            if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
                body.extend(extra.clone());
            }
            body
        };
        assert_eq!(read(None, None), PrefixSharing::Unknown);
        assert_eq!(read(Some(&json!({"x": 1})), None), PrefixSharing::Unknown);
        assert_eq!(
            read(Some(&props(json!({"total_slots": 1}))), None),
            PrefixSharing::OneSlot
        );
        assert_eq!(
            read(
                Some(&props(json!({"total_slots": 4, "kv_unified": true}))),
                None
            ),
            PrefixSharing::Unified { slots: 4 }
        );
        assert_eq!(
            read(
                Some(&props(json!({"total_slots": 2, "kv_unified": false}))),
                None
            ),
            PrefixSharing::Split { slots: 2 }
        );
        assert_eq!(
            read(
                Some(&props(json!({}))),
                Some(&json!([{"id": 0}, {"id": 1}, {"id": 2}]))
            ),
            PrefixSharing::Slots { slots: 3 }
        );
    }
}
