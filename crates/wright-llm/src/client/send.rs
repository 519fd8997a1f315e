//! Sending a request: the whole reply read from the stream (or from the model in this
//! process), transient failures retried with backoff and jitter, a cut stream never
//! returned as a reply, every failure an `LlmError` that names the server and the fix.

use super::errors::clip;
use super::errors::error_text;
use super::Client;
use crate::accumulate::Accumulator;
use crate::accumulate::Chunk;
use crate::error::LlmError;
use crate::sse::SseDecoder;
use crate::types::ChatMessage;
use crate::types::Response;
use crate::types::StreamDelta;
use futures_util::StreamExt;
use serde_json::Value;
use std::time::Duration;
use std::time::Instant;

impl Client {
    /// Sends the history and returns the whole reply, streaming pieces to `on_delta`.
    /// Transient failures are retried; a cut stream is never returned as a reply.
    pub async fn complete(
        &self,
        messages: &[ChatMessage],
        tools: &[Value],
        step_tag: &str,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Response, LlmError> {
        let body = self.request_body(messages, tools);
        self.complete_body(body, step_tag, on_delta).await
    }

    /// Like `complete`, with the body already built by `request_body` (so a caller can
    /// look at its size first without serializing twice).
    pub async fn complete_body(
        &self,
        body: Vec<u8>,
        step_tag: &str,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Response, LlmError> {
        if let Some(model) = &self.local {
            return model.complete(&body, on_delta).await;
        }
        let body = bytes::Bytes::from(body);
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            match self.attempt(body.clone(), step_tag, on_delta).await {
                Ok(response) => return Ok(response),
                Err(err) if err.is_transient() && attempt < self.config.max_retries => {
                    attempt += 1;
                    on_delta(StreamDelta::Retrying {
                        attempt,
                        reason: err.to_string(),
                    });
                    tokio::time::sleep(backoff(attempt)).await;
                }
                // After retries, the error says how many tries and how long in all.
                Err(err) if attempt > 0 => {
                    return Err(LlmError::GaveUp {
                        last: Box::new(self.refine(err).await),
                        attempts: attempt + 1,
                        elapsed: started.elapsed(),
                    })
                }
                Err(err) => return Err(self.refine(err).await),
            }
        }
    }

    /// A 404 on the chat endpoint is usually an unknown model: say which ones exist.
    async fn refine(&self, err: LlmError) -> LlmError {
        match &err {
            LlmError::Http {
                status: 400 | 404,
                message,
                ..
            } if message.to_lowercase().contains("model") => match self.list_models().await {
                Ok(available) if !available.iter().any(|m| m == &self.config.model) => {
                    self.model_not_found(available)
                }
                _ => err,
            },
            _ => err,
        }
    }

    async fn attempt(
        &self,
        body: bytes::Bytes,
        step_tag: &str,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Response, LlmError> {
        let native = self.config.ollama_num_ctx.is_some();
        let url = if native {
            format!(
                "{}/api/chat",
                crate::probe::server_root(&self.config.base_url)
            )
        } else {
            format!("{}/chat/completions", self.config.base_url)
        };
        let mut request = self
            .http
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key);
        }
        let started = Instant::now();
        let idle = self.config.idle_timeout;
        let response = tokio::time::timeout(idle, request.send())
            .await
            .map_err(|_| self.idle_error())?
            .map_err(|err| self.transport(err))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.bytes().await.unwrap_or_default();
            return Err(self.status_error(status.as_u16(), &body));
        }
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"));
        let mut accumulator = Accumulator::new();
        let mut first_byte: Option<Instant> = None;
        if native {
            // Newline-delimited objects, streamed or not (then there is one).
            let mut reader = crate::ollama_chat::NativeReader::default();
            let mut pending: Vec<u8> = Vec::new();
            let mut stream = response.bytes_stream();
            loop {
                let next = tokio::time::timeout(idle, stream.next())
                    .await
                    .map_err(|_| self.idle_error())?;
                let ended = match next {
                    Some(Ok(bytes)) => {
                        first_byte.get_or_insert_with(Instant::now);
                        pending.extend_from_slice(&bytes);
                        false
                    }
                    Some(Err(_)) => return Err(self.cut(&accumulator)),
                    None => true,
                };
                while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=end).collect();
                    self.push_native_line(&mut reader, &line, &mut accumulator, on_delta)?;
                }
                if ended {
                    let rest = std::mem::take(&mut pending);
                    self.push_native_line(&mut reader, &rest, &mut accumulator, on_delta)?;
                    break;
                }
            }
            if !accumulator.saw_finish() {
                return Err(self.cut(&accumulator));
            }
        } else if is_sse {
            let mut decoder = SseDecoder::new();
            let mut stream = response.bytes_stream();
            let mut done = false;
            while !done {
                let next = tokio::time::timeout(idle, stream.next())
                    .await
                    .map_err(|_| self.idle_error())?;
                let payloads = match next {
                    Some(Ok(bytes)) => {
                        first_byte.get_or_insert_with(Instant::now);
                        decoder.push(&bytes)
                    }
                    Some(Err(_)) => return Err(self.cut(&accumulator)),
                    None => {
                        done = true;
                        decoder.finish().into_iter().collect()
                    }
                };
                for payload in payloads {
                    if payload.trim() == "[DONE]" {
                        done = true;
                        break;
                    }
                    let chunk = self.parse_chunk(&payload)?;
                    accumulator.push_chunk(chunk, on_delta);
                }
            }
            if !accumulator.saw_finish() {
                return Err(self.cut(&accumulator));
            }
        } else {
            let bytes = tokio::time::timeout(idle, response.bytes())
                .await
                .map_err(|_| self.idle_error())?
                .map_err(|_| self.cut(&accumulator))?;
            first_byte = Some(Instant::now());
            let chunk = self.parse_chunk(&String::from_utf8_lossy(&bytes))?;
            accumulator.push_chunk(chunk, on_delta);
        }
        let end = Instant::now();
        let first = first_byte.unwrap_or(end);
        let mut response = accumulator.finish(step_tag);
        // `{"choices": []}` and the like: not an answer, whatever the status said.
        if response.text.is_empty()
            && response.reasoning.is_empty()
            && response.tool_calls.is_empty()
            && response.finish_reason.is_none()
        {
            return Err(LlmError::EmptyReply {
                url: self.config.base_url.clone(),
            });
        }
        response.first_byte_ms = first.duration_since(started).as_secs_f64() * 1000.0;
        response.generation_ms = end.duration_since(first).as_secs_f64() * 1000.0;
        Ok(response)
    }

    fn push_native_line(
        &self,
        reader: &mut crate::ollama_chat::NativeReader,
        line: &[u8],
        accumulator: &mut Accumulator,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<(), LlmError> {
        let line = String::from_utf8_lossy(line);
        if line.trim().is_empty() {
            return Ok(());
        }
        let chunk = reader.chunk(line.trim()).map_err(|err| match err {
            crate::ollama_chat::NativeError::Server(message) => LlmError::Http {
                url: self.config.base_url.clone(),
                status: 500,
                message: clip(&message, 300),
            },
            crate::ollama_chat::NativeError::Malformed(message) => LlmError::Malformed {
                url: self.config.base_url.clone(),
                message: clip(&message, 300),
            },
        })?;
        accumulator.push_chunk(chunk, on_delta);
        Ok(())
    }

    fn parse_chunk(&self, payload: &str) -> Result<Chunk, LlmError> {
        if let Ok(value) = serde_json::from_str::<Value>(payload) {
            if let Some(error) = value.get("error") {
                return Err(LlmError::Http {
                    url: self.config.base_url.clone(),
                    status: 500,
                    message: error_text(error),
                });
            }
            if let Ok(chunk) = serde_json::from_value(value) {
                return Ok(chunk);
            }
        }
        Err(LlmError::Malformed {
            url: self.config.base_url.clone(),
            message: format!("not a chat completion: {}", clip(payload, 200)),
        })
    }
}

/// 0.5 s, 1 s, 2 s … capped at 8 s, each with up to 25 % jitter so retries from several
/// agents do not hit a recovering server in lockstep.
fn backoff(attempt: u32) -> Duration {
    let base_ms = 500u64
        .saturating_mul(1 << attempt.saturating_sub(1).min(4))
        .min(8000);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = u64::from(nanos) % (base_ms / 4 + 1);
    Duration::from_millis(base_ms + jitter)
}
