//! The tool-calling mode (`auto`, `native` or `text`): how tool calls travel. `auto` asks the server with a
//! one-tool probe (a real model request, slow on a CPU) and remembers the answer in
//! `$XDG_CACHE_HOME/wright/tool-calling.json`, where `wright doctor`'s probe goes too, so
//! the run after a doctor pays nothing. An answer is reused only for the same server URL
//! and model, while the server still looks the same (its kind, version and the model's
//! window, read afresh by every run), and for at most `MAX_AGE`: a changed server is
//! probed again, never hidden behind an old answer.

use anyhow::bail;
use anyhow::Result;
use serde::Deserialize;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use std::time::SystemTime;
use wright_llm::probe::ServerInfo;
use wright_llm::Client;
use wright_protocol::ToolCalling;

/// How long a probe's answer is trusted.
pub const MAX_AGE: Duration = Duration::from_secs(24 * 3600);

/// wright's cache directory (`$XDG_CACHE_HOME/wright`).
pub fn cache_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"))
        .join("wright")
}

/// The tool-calling probes' answers, in the cache directory.
const CACHE_FILE: &str = "tool-calling.json";

/// One probe's answer, for one server URL and model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Probed {
    tool_calling: ToolCalling,
    /// What the server looked like (see `identity`).
    server: String,
    /// Seconds since the epoch.
    probed_at: u64,
    /// Who probed: `run` or `doctor`.
    by: String,
}

/// What the server looks like to a run: a different answer means another server (or
/// version, or model file) behind the same URL and name.
pub fn identity(info: &ServerInfo) -> String {
    format!(
        "{} {} window {}",
        info.kind.name(),
        info.version.as_deref().unwrap_or("(no version)"),
        info.context
            .as_ref()
            .map_or_else(|| "unknown".to_string(), |c| c.tokens.to_string())
    )
}

/// An age in the largest whole unit: "40 s", "12 min", "3 h".
pub(crate) fn shown_age(secs: u64) -> String {
    match secs {
        0..=119 => format!("{secs} s"),
        120..=7199 => format!("{} min", secs / 60),
        _ => format!("{} h", secs / 3600),
    }
}

pub(crate) fn key(client: &Client) -> String {
    format!("{} {}", client.config().base_url, client.config().model)
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn read_cache() -> BTreeMap<String, Probed> {
    crate::probe_cache::read(CACHE_FILE)
}

fn write_cache(cache: &BTreeMap<String, Probed>) {
    crate::probe_cache::write(CACHE_FILE, cache);
}

/// Records a probe's answer for `client`'s server and model (`by`: who probed).
pub fn remember(client: &Client, server: &str, mode: ToolCalling, by: &str) {
    let mut cache = read_cache();
    let stale = |p: &Probed| now().saturating_sub(p.probed_at) > MAX_AGE.as_secs();
    cache.retain(|_, probed| !stale(probed));
    cache.insert(
        key(client),
        Probed {
            tool_calling: mode,
            server: server.to_string(),
            probed_at: now(),
            by: by.to_string(),
        },
    );
    write_cache(&cache);
}

/// The mode to use and how it was decided, in words. `server` is the server's identity
/// as this run read it.
pub async fn decide(
    requested: &str,
    client: &Client,
    server: &str,
) -> Result<(ToolCalling, String)> {
    match requested {
        "native" => return Ok((ToolCalling::Native, "native (as asked)".into())),
        "text" => return Ok((ToolCalling::Text, "text (as asked)".into())),
        "auto" => {}
        other => bail!("unknown tool-calling mode '{other}'; choose auto, native or text"),
    }
    let cached = read_cache().remove(&key(client));
    if let Some(probed) = cached {
        let age = now().saturating_sub(probed.probed_at);
        if probed.server == server && age <= MAX_AGE.as_secs() {
            return Ok((
                probed.tool_calling,
                format!(
                    "{} (probed by {} {} ago)",
                    probed.tool_calling.as_str(),
                    probed.by,
                    shown_age(age)
                ),
            ));
        }
    }
    // The model server's error stays typed in the chain: the front end words its remedy.
    let native = client
        .probe_native_tool_calling()
        .await
        .map_err(|err| anyhow::Error::new(err).context("the tool-calling probe failed"))?;
    let mode = if native {
        ToolCalling::Native
    } else {
        ToolCalling::Text
    };
    remember(client, server, mode, "run");
    let why = if native {
        "native (the server returned a native tool call to the probe)"
    } else {
        "text (the model wrote its probe call as text: calls will be read from replies)"
    };
    Ok((mode, why.to_string()))
}
