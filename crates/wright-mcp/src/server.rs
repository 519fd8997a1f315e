//! One MCP server, connected: started (a program on pipes, or an HTTP endpoint), its
//! tools listed, then called. Every step has a deadline, and a server that exits, hangs
//! or answers garbage becomes an error in a sentence — never a hung run, never a panic.

use crate::config::ServerConfig;
use crate::config::START_TIMEOUT;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::RoleClient;
use rmcp::ServiceExt;
use serde_json::Value;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// What a server's process printed on stderr, its last bytes (for the sentence that
/// says why it failed): a Node.js stack trace with its cause fits.
const STDERR_TAIL: usize = 4096;
/// Of which at most this many last lines are shown.
const STDERR_LINES: usize = 20;

/// How a handshake ended: in time or not, then connected or not.
type Handshake<E> = Result<Result<RunningService<RoleClient, ()>, E>, tokio::time::error::Elapsed>;

/// A tool as the server listed it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    pub name: String,
    pub description: String,
    /// Its JSON Schema for the arguments.
    pub input_schema: Value,
}

/// A server wright talks to.
pub struct Server {
    pub name: String,
    pub call_timeout: Duration,
    running: tokio::sync::Mutex<Option<RunningService<RoleClient, ()>>>,
    peer: rmcp::Peer<RoleClient>,
    /// Set once it stopped answering for good: why.
    gone: Mutex<Option<String>>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

/// Why a server could not be used, in a sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ServerError(pub String);

impl Server {
    /// Starts `command` (already wrapped in the sandbox by the caller, its environment
    /// set) and speaks MCP over its stdin and stdout; lists its tools.
    pub async fn start_stdio(
        config: &ServerConfig,
        command: tokio::process::Command,
    ) -> Result<(Arc<Server>, Vec<ListedTool>), ServerError> {
        let (process, stderr) = rmcp::transport::TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|err| ServerError(format!("cannot start it: {err}")))?;
        let tail = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut stderr) = stderr {
            let tail = tail.clone();
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                while let Ok(read) = stderr.read(&mut buffer).await {
                    if read == 0 {
                        break;
                    }
                    let mut kept = tail.lock().unwrap_or_else(|p| p.into_inner());
                    kept.extend_from_slice(&buffer[..read]);
                    let excess = kept.len().saturating_sub(STDERR_TAIL);
                    kept.drain(..excess);
                }
            });
        }
        let handshake = tokio::time::timeout(START_TIMEOUT, ().serve(process)).await;
        Self::finish_start(config, handshake, tail).await
    }

    /// Connects to a streamable HTTP endpoint with `headers` on every request; lists its
    /// tools. Whether the URL may be reached at all is the caller's decision.
    pub async fn connect_http(
        config: &ServerConfig,
        url: &str,
        headers: &std::collections::BTreeMap<String, String>,
    ) -> Result<(Arc<Server>, Vec<ListedTool>), ServerError> {
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        use rmcp::transport::StreamableHttpClientTransport;
        // reqwest 0.13 without a provider of its own: ring's, as the model client uses.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut custom = std::collections::HashMap::new();
        let mut auth = None;
        for (key, value) in headers {
            if key.eq_ignore_ascii_case("authorization") {
                auth = Some(value.clone());
                continue;
            }
            let name = http::HeaderName::from_bytes(key.as_bytes())
                .map_err(|_| ServerError(format!("the header name {key:?} is not valid")))?;
            let value = http::HeaderValue::from_str(value)
                .map_err(|_| ServerError(format!("the value of header {key} is not valid")))?;
            custom.insert(name, value);
        }
        let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
        transport_config.custom_headers = custom;
        transport_config.auth_header = auth;
        let transport = StreamableHttpClientTransport::from_config(transport_config);
        let handshake = tokio::time::timeout(START_TIMEOUT, ().serve(transport)).await;
        Self::finish_start(config, handshake, Arc::new(Mutex::new(Vec::new()))).await
    }

    async fn finish_start<E: std::fmt::Display>(
        config: &ServerConfig,
        handshake: Handshake<E>,
        stderr: Arc<Mutex<Vec<u8>>>,
    ) -> Result<(Arc<Server>, Vec<ListedTool>), ServerError> {
        let said = |stderr: &Arc<Mutex<Vec<u8>>>| stderr_tail(stderr);
        let running = match handshake {
            Err(_) => {
                return Err(ServerError(format!(
                    "it did not answer within {} s{}",
                    START_TIMEOUT.as_secs(),
                    said(&stderr)
                )))
            }
            Ok(Err(err)) => {
                // The process may still be writing why it died.
                tokio::time::sleep(Duration::from_millis(100)).await;
                return Err(ServerError(format!(
                    "it did not start MCP: {}{}",
                    one_line(&err.to_string()),
                    said(&stderr)
                )));
            }
            Ok(Ok(running)) => running,
        };
        let peer = running.peer().clone();
        let listed = tokio::time::timeout(START_TIMEOUT, peer.list_all_tools()).await;
        let tools = match listed {
            Err(_) => Err(format!(
                "it did not list its tools within {} s",
                START_TIMEOUT.as_secs()
            )),
            Ok(Err(err)) => Err(format!(
                "it did not list its tools: {}",
                one_line(&err.to_string())
            )),
            Ok(Ok(tools)) => Ok(tools),
        };
        let server = Arc::new(Server {
            name: config.name.clone(),
            call_timeout: config.call_timeout,
            running: tokio::sync::Mutex::new(Some(running)),
            peer,
            gone: Mutex::new(None),
            stderr,
        });
        let tools = match tools {
            Ok(tools) => tools,
            Err(why) => {
                server.stop().await;
                return Err(ServerError(why));
            }
        };
        let listed = tools
            .into_iter()
            .map(|tool| ListedTool {
                name: tool.name.to_string(),
                description: tool.description.as_deref().unwrap_or("").to_string(),
                input_schema: Value::Object((*tool.input_schema).clone()),
            })
            .collect();
        Ok((server, listed))
    }

    /// Calls the server's tool `tool` with `arguments` within the call's deadline: the
    /// result as the server sent it (the spec's JSON), or why there is none.
    pub async fn call(&self, tool: &str, arguments: &Value) -> Result<Value, ServerError> {
        if let Some(why) = self.gone() {
            return Err(ServerError(why));
        }
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = match arguments {
            Value::Object(map) => Some(map.clone()),
            Value::Null => None,
            other => {
                return Err(ServerError(format!(
                    "the arguments must be a JSON object, not {other}"
                )))
            }
        };
        match tokio::time::timeout(self.call_timeout, self.peer.call_tool(params)).await {
            Err(_) => Err(ServerError(format!(
                "the MCP server '{}' did not answer within {} s; the call was abandoned",
                self.name,
                self.call_timeout.as_secs_f64()
            ))),
            Ok(Ok(result)) => serde_json::to_value(&result)
                .map_err(|err| ServerError(format!("its result cannot be read: {err}"))),
            Ok(Err(err)) => {
                let closed = matches!(err, rmcp::ServiceError::TransportClosed)
                    || self.peer.is_transport_closed();
                if closed {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    let why = format!(
                        "the MCP server '{}' stopped (its connection closed); its tools cannot be used any more in this run{}",
                        self.name,
                        stderr_tail(&self.stderr)
                    );
                    *self.gone.lock().unwrap_or_else(|p| p.into_inner()) = Some(why.clone());
                    return Err(ServerError(why));
                }
                Err(ServerError(format!(
                    "the MCP server '{}' answered with an error: {}",
                    self.name,
                    one_line(&err.to_string())
                )))
            }
        }
    }

    /// Why it cannot be used any more, once it stopped.
    pub fn gone(&self) -> Option<String> {
        self.gone.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Ends the connection (and the process of a stdio server).
    pub async fn stop(&self) {
        if let Some(running) = self.running.lock().await.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), running.cancel()).await;
        }
    }
}

/// `; its stderr ended with:` and the last lines the process wrote there (at most
/// `STDERR_LINES`, from the last `STDERR_TAIL` bytes), each on its own indented line and
/// made printable (no escapes reach a terminal); empty if it wrote nothing.
fn stderr_tail(stderr: &Arc<Mutex<Vec<u8>>>) -> String {
    let kept = stderr.lock().unwrap_or_else(|p| p.into_inner()).clone();
    tail_of(&kept)
}

fn tail_of(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<String> = text
        .lines()
        .map(printable)
        .filter(|line| !line.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let shown = &lines[lines.len().saturating_sub(STDERR_LINES)..];
    let mut said = String::from("; its stderr ended with:");
    for line in shown {
        said.push_str("\n    ");
        said.push_str(line.trim_end());
    }
    said
}

/// A line with its control characters (escape sequences, carriage returns) shown as
/// `\u{..}` instead of acted on, and tabs as spaces.
fn printable(line: &str) -> String {
    line.chars()
        .map(|c| match c {
            '\t' => "  ".to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// An error's text on one line, bounded.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() > 300 {
        format!("{}…", joined.chars().take(300).collect::<String>())
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stderr_tail_is_the_last_lines_made_printable() {
        assert_eq!(tail_of(b""), "");
        assert_eq!(tail_of(b"\n  \n"), "");
        let mut written = String::new();
        for n in 1..=30 {
            written.push_str(&format!("line {n}\n"));
        }
        written.push_str("\x1b[31mred\x1b[0m\rback\tend\n");
        let tail = tail_of(written.as_bytes());
        assert!(
            tail.starts_with("; its stderr ended with:\n    line 12\n"),
            "{tail}"
        );
        assert!(!tail.contains("line 11\n"), "{tail}");
        assert!(
            tail.ends_with("\n    \\u{1b}[31mred\\u{1b}[0m\\u{d}back  end"),
            "{tail}"
        );
        assert!(!tail.contains('\x1b') && !tail.contains('\r'));
    }
}
