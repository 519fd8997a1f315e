//! The `mcpServers` JSON shape Claude Desktop, Cursor and Goose share: each server by
//! name, started as a program (`command`, `args`, `env`) or reached at a URL (`url`,
//! `headers`). Read strictly enough that a file meaning something else is an error that
//! names the server and the key, and loosely enough that the files people have work:
//! unknown keys are ignored, `disabled` servers skipped.

use serde_json::Map;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// How long a tool call may take unless the server's entry says otherwise (`timeout`,
/// in seconds).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a server may take to start and list its tools.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// One server of a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Its name in the file (tools are named `NAME__TOOL` after it).
    pub name: String,
    pub transport: Transport,
    /// How long one tool call may take.
    pub call_timeout: Duration,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A program wright starts and talks to over its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// A streamable HTTP endpoint.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

/// A configuration file that is not the `mcpServers` shape, said in a sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {reason}")]
pub struct ConfigError {
    pub file: String,
    pub reason: String,
}

/// The servers of the file `file` (named in errors) with content `text`, in the order
/// written; `disabled` ones are left out.
pub fn parse(text: &str, file: &str) -> Result<Vec<ServerConfig>, ConfigError> {
    let fail = |reason: String| ConfigError {
        file: file.to_string(),
        reason,
    };
    let value: Value =
        serde_json::from_str(text).map_err(|err| fail(format!("not valid JSON: {err}")))?;
    let Some(root) = value.as_object() else {
        return Err(fail("not a JSON object".into()));
    };
    let servers = match root.get("mcpServers") {
        None => return Ok(Vec::new()),
        Some(Value::Object(servers)) => servers,
        Some(_) => {
            return Err(fail(
                "`mcpServers` must be an object of servers by name".into(),
            ))
        }
    };
    let mut parsed = Vec::new();
    for (name, entry) in servers {
        let Some(entry) = entry.as_object() else {
            return Err(fail(format!("server `{name}` must be an object")));
        };
        if entry.get("disabled").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        parsed.push(
            server(name, entry).map_err(|reason| fail(format!("server `{name}`: {reason}")))?,
        );
    }
    Ok(parsed)
}

fn server(name: &str, entry: &Map<String, Value>) -> Result<ServerConfig, String> {
    if name.is_empty() || name.contains("__") {
        return Err(
            "a server's name must not be empty nor hold `__` (tools are named SERVER__TOOL)".into(),
        );
    }
    let kind = entry.get("type").and_then(Value::as_str);
    let transport = match (entry.get("command"), entry.get("url"), kind) {
        (_, _, Some("sse")) => {
            return Err("the old HTTP+SSE transport is not supported: use the server's streamable HTTP endpoint (`type`: `http`)".into())
        }
        (Some(_), Some(_), _) => return Err("give `command` or `url`, not both".into()),
        (Some(command), None, _) => Transport::Stdio {
            command: command
                .as_str()
                .filter(|c| !c.trim().is_empty())
                .ok_or("`command` must be a program's name or path")?
                .to_string(),
            args: strings(entry.get("args"), "args")?,
            env: string_map(entry.get("env"), "env")?,
        },
        (None, Some(url), _) => {
            let url = url.as_str().ok_or("`url` must be a string")?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!("`url` must be an http:// or https:// URL, not {url:?}"));
            }
            Transport::Http {
                url: url.to_string(),
                headers: string_map(entry.get("headers"), "headers")?,
            }
        }
        (None, None, _) => return Err("needs `command` (a program) or `url` (an HTTP endpoint)".into()),
    };
    let call_timeout = match entry.get("timeout") {
        None | Some(Value::Null) => DEFAULT_CALL_TIMEOUT,
        Some(value) => match value.as_f64() {
            Some(seconds) if seconds > 0.0 && seconds <= 86_400.0 => {
                Duration::from_secs_f64(seconds)
            }
            _ => return Err("`timeout` must be a number of seconds".into()),
        },
    };
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        call_timeout,
    })
}

fn strings(value: Option<&Value>, key: &str) -> Result<Vec<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("`{key}` must be a list of strings"))
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be a list of strings")),
    }
}

fn string_map(value: Option<&Value>, key: &str) -> Result<BTreeMap<String, String>, String> {
    match value {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(text) => Ok((k.clone(), text.clone())),
                Value::Number(n) => Ok((k.clone(), n.to_string())),
                Value::Bool(b) => Ok((k.clone(), b.to_string())),
                _ => Err(format!("`{key}.{k}` must be a string")),
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be an object of strings")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn reads_the_shared_shape() {
        let text = r#"{"mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "server-filesystem", "."], "env": {"DEBUG": 1}},
            "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}, "timeout": 5},
            "off": {"command": "x", "disabled": true}
        }, "other": 1}"#;
        let servers = parse(text, ".mcp.json").unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(
            servers[0].transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "server-filesystem".into(), ".".into()],
                env: BTreeMap::from([("DEBUG".into(), "1".into())]),
            }
        );
        assert_eq!(servers[0].call_timeout, DEFAULT_CALL_TIMEOUT);
        assert_eq!(servers[1].call_timeout, Duration::from_secs(5));
        assert!(
            matches!(&servers[1].transport, Transport::Http { url, headers }
            if url == "https://example.com/mcp" && headers["Authorization"] == "Bearer x")
        );
        assert_eq!(parse("{}", "f").unwrap(), vec![]);
    }

    #[test]
    fn says_what_is_wrong_and_where() {
        for (text, says) in [
            ("[", "f: not valid JSON"),
            (r#"{"mcpServers": []}"#, "must be an object of servers"),
            (
                r#"{"mcpServers": {"a": {}}}"#,
                "server `a`: needs `command`",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#,
                "not both",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "ftp://h"}}}"#,
                "http:// or https://",
            ),
            (
                r#"{"mcpServers": {"a": {"type": "sse", "url": "http://h/sse"}}}"#,
                "not supported",
            ),
            (r#"{"mcpServers": {"a__b": {"command": "x"}}}"#, "`__`"),
            (
                r#"{"mcpServers": {"a": {"command": "x", "args": "y"}}}"#,
                "`args` must be a list",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "timeout": -1}}}"#,
                "`timeout`",
            ),
        ] {
            let err = parse(text, "f").unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
