//! `fetch`: a web page as readable text for the model. It runs outside the sandbox, so it
//! goes by the sandbox's network rules, never around them: only with the network on for
//! the run (`--network`: public hosts; `--allow-host`: the allowed hosts and ports), each
//! hop of a redirect decided anew, names resolved and checked by wright (never a
//! loopback, link-local or private address unless the user allowed that exact name) and
//! the connection pinned to the addresses checked. Every connection is logged. The page is
//! its main content rendered as text (`page_text`: navigation, sidebars, footers, forms,
//! scripts and styles dropped), capped, and marked untrusted: the loop wraps it as data,
//! not instructions.

use crate::args;
use crate::Tool;
use crate::ToolError;
use crate::ToolOutput;
use serde_json::json;
use serde_json::Value;
use std::time::Duration;
use wright_protocol::NetConnection;
use wright_protocol::NetRefusal;
use wright_protocol::NetVerdict;
use wright_protocol::NetVia;
use wright_protocol::Provenance;
use wright_sandbox::egress::AllowList;

/// The most of a page read, whatever its length.
const MAX_BODY: usize = 4 << 20;
/// Characters shown when the call does not say.
const DEFAULT_CHARS: usize = 12_000;
const MAX_CHARS: usize = 100_000;
const MAX_REDIRECTS: usize = 5;
const TIMEOUT: Duration = Duration::from_secs(30);

pub struct FetchTool {
    allow: AllowList,
}

impl FetchTool {
    /// A fetch that reaches what `allow` allows (the run's `--network` or `--allow-host`).
    pub fn new(allow: AllowList) -> Self {
        Self { allow }
    }
}

#[async_trait::async_trait]
impl Tool for FetchTool {
    fn name(&self) -> &'static str {
        "fetch"
    }

    fn schema(&self) -> Value {
        json!({"type": "function", "function": {
            "name": "fetch",
            "description": "Read a web page (http/https) as text. Only hosts the user allowed.",
            "parameters": {"type": "object", "properties": {
                "url": {"type": "string"},
                "max_chars": {"type": "integer", "description": "Most characters returned (default 12000)."}
            }, "required": ["url"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let url = args::required_str(arguments, "url")?;
        let max_chars = args::optional_number(arguments, "max_chars")?
            .map_or(DEFAULT_CHARS, |n| n.max(100.0) as usize)
            .min(MAX_CHARS);
        let mut url = reqwest::Url::parse(url)
            .map_err(|e| ToolError::Model(format!("not a URL ({e}): {url}")))?;
        let mut network = Vec::new();
        for _ in 0..=MAX_REDIRECTS {
            let (outcome, connection) = self.hop(&url).await;
            network.push(connection);
            match outcome {
                Err(message) => {
                    return Ok(ToolOutput {
                        text: message,
                        is_error: true,
                        network,
                        ..ToolOutput::default()
                    })
                }
                Ok(Hop::Redirect(next)) => url = next,
                Ok(Hop::Page(text)) => {
                    return Ok(ToolOutput {
                        text: cap(&text, max_chars),
                        untrusted: Some(Provenance::Web {
                            url: url.to_string(),
                        }),
                        network,
                        ..ToolOutput::default()
                    })
                }
            }
        }
        Ok(ToolOutput {
            text: format!("more than {MAX_REDIRECTS} redirects; stopped at {url}"),
            is_error: true,
            network,
            ..ToolOutput::default()
        })
    }
}

enum Hop {
    Redirect(reqwest::Url),
    Page(String),
}

impl FetchTool {
    /// One request, decided and logged on its own.
    async fn hop(&self, url: &reqwest::Url) -> (Result<Hop, String>, NetConnection) {
        let host = url.host_str().unwrap_or_default().to_string();
        let port = url.port_or_known_default().unwrap_or(0);
        let mut record = NetConnection {
            via: NetVia::Fetch,
            host: host.clone(),
            port,
            verdict: NetVerdict::Allowed,
            bytes_sent: 0,
            bytes_received: 0,
        };
        let refuse = |mut record: NetConnection, reason: NetRefusal| {
            record.verdict = NetVerdict::Refused { reason };
            let words = match reason {
                NetRefusal::BadRequest => {
                    format!("fetch reads http and https URLs without user names; not {url}")
                }
                _ => wright_sandbox::egress::refusal_words(&record.host, record.port, reason)
                    .replace("wright's network proxy", "fetch"),
            };
            (Err(words), record)
        };
        if !matches!(url.scheme(), "http" | "https")
            || host.is_empty()
            || !url.username().is_empty()
            || url.password().is_some()
        {
            return refuse(record, NetRefusal::BadRequest);
        }
        let Some(grant) = self.allow.decide(&host, port) else {
            return refuse(record, NetRefusal::NotAllowed);
        };
        let (name, port_copy) = (host.clone(), port);
        let resolved = tokio::task::spawn_blocking(move || {
            wright_sandbox::egress::resolve(&name, port_copy, grant)
        })
        .await
        .unwrap_or(Err(NetRefusal::Unresolved));
        let addresses = match resolved {
            Ok(addresses) => addresses,
            Err(reason) => return refuse(record, reason),
        };
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .resolve_to_addrs(&host, &addresses)
            .timeout(TIMEOUT)
            .user_agent(concat!("wright/", env!("CARGO_PKG_VERSION")))
            .build();
        let Ok(client) = client else {
            return refuse(record, NetRefusal::Unreachable);
        };
        let request = client
            .get(url.clone())
            .header("Accept", "text/html, text/plain;q=0.9, */*;q=0.5");
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(_) => return refuse(record, NetRefusal::Unreachable),
        };
        record.bytes_sent = url.as_str().len() as u64;
        let status = response.status();
        if status.is_redirection() {
            let next = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| url.join(l).ok());
            return match next {
                Some(next) => (Ok(Hop::Redirect(next)), record),
                None => (
                    Err(format!("{url} answered {status} without a usable Location")),
                    record,
                ),
            };
        }
        let kind = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let mut body = Vec::new();
        while body.len() < MAX_BODY {
            match response.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                Ok(None) => break,
                Err(_) => break,
            }
        }
        record.bytes_received = body.len() as u64;
        body.truncate(MAX_BODY);
        if !status.is_success() {
            let text = readable(&kind, &body).unwrap_or_default();
            return (
                Err(format!("{url} answered {status}\n{}", cap(&text, 2000))),
                record,
            );
        }
        match readable(&kind, &body) {
            Some(text) => (Ok(Hop::Page(text)), record),
            None => (
                Err(format!(
                    "{url} is not text ({kind}); fetch reads web pages and text"
                )),
                record,
            ),
        }
    }
}

/// The body as text: HTML rendered, text and JSON as they are, anything else `None`.
fn readable(kind: &str, body: &[u8]) -> Option<String> {
    let looks_html = kind.contains("html")
        || (kind.is_empty()
            && String::from_utf8_lossy(&body[..body.len().min(512)])
                .to_ascii_lowercase()
                .contains("<html"));
    if looks_html {
        return crate::page_text::main_text(body, 100);
    }
    let textual = kind.is_empty()
        || kind.starts_with("text/")
        || kind.contains("json")
        || kind.contains("xml")
        || kind.contains("javascript")
        || kind.contains("yaml")
        || kind.contains("toml");
    textual.then(|| String::from_utf8_lossy(body).into_owned())
}

/// At most `max` characters, with a note of what was left out.
fn cap(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max).collect();
    format!(
        "{kept}\n[… {} more characters not shown; pass a larger max_chars to read more]",
        count - max
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_rendered_and_scripts_dropped() {
        let page = b"<html><head><style>p{}</style><script>alert('x')</script></head><body><h1>Title</h1><p>Some <b>text</b>.</p></body></html>";
        let text = readable("text/html; charset=utf-8", page).unwrap();
        assert!(
            text.contains("Title") && text.contains("Some **text**."),
            "{text}"
        );
        assert!(!text.contains("alert") && !text.contains("p{}"), "{text}");
        assert_eq!(readable("image/png", b"\x89PNG"), None);
        assert_eq!(
            cap("abcdef", 3),
            "abc\n[… 3 more characters not shown; pass a larger max_chars to read more]"
        );
    }
}
