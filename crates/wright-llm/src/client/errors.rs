//! A client's failures as `LlmError`s that name the server: a status and its body's
//! message, a stream cut or gone silent, and why a connection could not be made.

use super::Client;
use crate::accumulate::Accumulator;
use crate::error::LlmError;
use crate::error::Unreachable;
use serde_json::Value;

impl Client {
    pub(super) fn cut(&self, accumulator: &Accumulator) -> LlmError {
        LlmError::StreamCut {
            url: self.config.base_url.clone(),
            partial_tool_call: accumulator.has_tool_calls(),
        }
    }

    pub(super) fn idle_error(&self) -> LlmError {
        LlmError::IdleTimeout {
            url: self.config.base_url.clone(),
            secs: self.config.idle_timeout.as_secs(),
        }
    }

    pub(super) fn transport(&self, err: reqwest::Error) -> LlmError {
        LlmError::Unreachable {
            url: self.config.base_url.clone(),
            reason: unreachable_reason(&err),
        }
    }

    pub(super) fn status_error(&self, status: u16, body: &[u8]) -> LlmError {
        let message = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v.get("error").map(error_text))
            .unwrap_or_else(|| clip(&String::from_utf8_lossy(body), 300));
        let url = self.config.base_url.clone();
        match status {
            401 | 403 => LlmError::Unauthorized {
                url,
                status,
                message,
            },
            _ => LlmError::Http {
                url,
                status,
                message,
            },
        }
    }
}

pub(super) fn error_text(error: &Value) -> String {
    match error {
        Value::String(text) => text.clone(),
        other => other
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| other.to_string()),
    }
}

/// Why a request could not be made or answered, from the error's chain: the kinds of the
/// I/O errors in it first, then what hyper says of a connection closed mid-request.
fn unreachable_reason(err: &reqwest::Error) -> Unreachable {
    use std::io::ErrorKind;
    let mut io_kind = None;
    let mut chain = String::new();
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(error) = current {
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            io_kind = io_kind.or(Some(io.kind()));
        }
        chain.push_str(&format!("{error:?} "));
        current = error.source();
    }
    let closed = matches!(
        io_kind,
        Some(
            ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::BrokenPipe
                | ErrorKind::UnexpectedEof
        )
    ) || chain.contains("IncompleteMessage")
        || chain.contains("connection closed");
    if err.is_connect() {
        if io_kind == Some(ErrorKind::ConnectionRefused) || chain.contains("ConnectionRefused") {
            return Unreachable::Refused;
        }
        if err.is_timeout() || io_kind == Some(ErrorKind::TimedOut) {
            return Unreachable::ConnectTimeout;
        }
        return Unreachable::Connect(root_cause(err));
    }
    if closed {
        return Unreachable::Closed;
    }
    Unreachable::Other(root_cause(err))
}

fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut current = err;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

pub(super) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
