//! `--tool-calling auto|native|text`: how tool calls travel. `auto` asks the server once
//! per (server, model) with a one-tool probe and remembers the answer in
//! `$XDG_CACHE_HOME/wright/tool-calling.json`, so later runs pay nothing.

use anyhow::bail;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::PathBuf;
use wright_llm::Client;
use wright_protocol::ToolCalling;

/// wright's cache directory (`$XDG_CACHE_HOME/wright`).
pub fn cache_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"))
        .join("wright")
}

fn cache_path() -> PathBuf {
    cache_dir().join("tool-calling.json")
}

fn read_cache() -> BTreeMap<String, String> {
    std::fs::read(cache_path())
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

fn write_cache(cache: &BTreeMap<String, String>) {
    let path = cache_path();
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(bytes) = serde_json::to_vec_pretty(cache) {
        // Losing the cache only costs one more probe next time.
        let _ = std::fs::write(path, bytes);
    }
}

/// The mode to use and how it was decided, in words.
pub async fn decide(requested: &str, client: &Client) -> Result<(ToolCalling, String)> {
    match requested {
        "native" => return Ok((ToolCalling::Native, "native (as asked)".into())),
        "text" => return Ok((ToolCalling::Text, "text (as asked)".into())),
        "auto" => {}
        other => bail!("unknown --tool-calling '{other}'; choose auto, native or text"),
    }
    let key = format!("{} {}", client.config().base_url, client.config().model);
    let mut cache = read_cache();
    if let Some(known) = cache.get(&key) {
        let mode = if known == "text" {
            ToolCalling::Text
        } else {
            ToolCalling::Native
        };
        return Ok((mode, format!("{} (probed earlier)", mode.as_str())));
    }
    let native = client.probe_native_tool_calling().await?;
    let mode = if native {
        ToolCalling::Native
    } else {
        ToolCalling::Text
    };
    cache.insert(key, mode.as_str().to_string());
    write_cache(&cache);
    let why = if native {
        "native (the server returned a native tool call to the probe)"
    } else {
        "text (the model wrote its probe call as text: calls will be read from replies)"
    };
    Ok((mode, why.to_string()))
}
