//! What the scripted server writes on the wire: a turn as OpenAI SSE chunks (text in
//! word pieces, arguments in small pieces, finish, usage, `[DONE]`), cut or paced like a
//! prefilling server when asked, or as one whole chat completion.

use super::error;
use axum::body::Body;
use axum::http::header;
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::json;
use serde_json::Value;

pub(super) fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0, "model": "test-model",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// The SSE chunks of a turn: text in word pieces, each call's arguments in small pieces,
/// then the finish reason, usage, and `[DONE]`.
pub(super) fn turn_chunks(
    reasoning: &str,
    text: &str,
    calls: &[(String, String)],
    style: &Style,
    prompt_tokens: u64,
) -> Vec<Value> {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    let reasoning_field = if style.ollama {
        "reasoning"
    } else {
        "reasoning_content"
    };
    for word in reasoning.split_inclusive(' ') {
        chunks.push(chunk(json!({ reasoning_field: word }), None));
    }
    for word in text.split_inclusive(' ') {
        chunks.push(chunk(json!({"content": word}), None));
    }
    if style.ollama {
        // Ollama sends each call whole, in one chunk, without `index`, and finishes with
        // "stop" even when it called tools.
        for (n, (name, arguments)) in calls.iter().enumerate() {
            chunks.push(chunk(
                json!({"tool_calls": [{"id": format!("call_ollama_{n}"), "type": "function",
                                       "function": {"name": name, "arguments": arguments}}]}),
                None,
            ));
        }
        chunks.push(chunk(json!({}), Some("stop")));
        chunks.push(usage_chunk(prompt_tokens, style));
        return chunks;
    }
    let piece = style.piece;
    for (index, (name, arguments)) in calls.iter().enumerate() {
        chunks.push(chunk(
            json!({"tool_calls": [{"index": index, "id": format!("call_{index}_{}", name), "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        let chars: Vec<char> = arguments.chars().collect();
        for part in chars.chunks(piece.max(1)) {
            let part: String = part.iter().collect();
            chunks.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}),
                None,
            ));
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    chunks.push(chunk(json!({}), Some(finish)));
    chunks.push(usage_chunk(prompt_tokens, style));
    chunks
}

/// The last chunk: usage, and llama.cpp's `timings` when emulating llama.cpp.
pub(super) fn usage_chunk(prompt_tokens: u64, style: &Style) -> Value {
    let mut last = json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 10, "total_tokens": prompt_tokens + 10,
                  "prompt_tokens_details": {"cached_tokens": prompt_tokens / 2}}});
    if style.llama_cpp {
        last["timings"] = json!({"prompt_n": prompt_tokens, "prompt_ms": 40.0, "predicted_n": 10, "predicted_ms": 200.0, "cache_n": prompt_tokens / 2});
    }
    last
}

/// How the emulated server writes its stream.
#[derive(Debug, Clone)]
pub(super) struct Style {
    /// Argument text is sent in pieces of this many characters.
    pub(super) piece: usize,
    pub(super) ollama: bool,
    pub(super) llama_cpp: bool,
}

pub(super) fn sse(chunks: Vec<Value>, cut: bool) -> Response {
    let mut frames: Vec<Result<Bytes, std::io::Error>> = chunks
        .into_iter()
        .map(|c| Ok(Bytes::from(format!("data: {c}\n\n"))))
        .collect();
    if !cut {
        frames.push(Ok(Bytes::from_static(b"data: [DONE]\n\n")));
    }
    let frames = futures_util::stream::iter(frames);
    // A cut comes after the frames went out, as when a server dies mid-reply.
    let tail = futures_util::stream::iter(cut.then_some(())).then(|()| async {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        Err(std::io::Error::other("connection cut by the test script"))
    });
    let body = Body::from_stream(frames.chain(tail));
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap_or_else(|_| error(500, "cannot build the SSE response"))
}

/// A stream that reads the prompt for `time` first: silent, or (llama.cpp asked for it)
/// with a `prompt_progress` chunk at each quarter of a `total`-token prompt.
pub(super) fn sse_after_prefill(
    time: std::time::Duration,
    total: Option<u64>,
    chunks: Vec<Value>,
) -> Response {
    let quarters: Vec<Option<Value>> = match total {
        Some(total) => (1..=4u64)
            .map(|k| {
                Some(json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": "test-model",
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": null}, "finish_reason": null}],
                    "prompt_progress": {"total": total, "cache": 0, "processed": total * k / 4, "time_ms": (time.as_millis() as u64) * k / 4}}))
            })
            .collect(),
        None => vec![None],
    };
    let pause = time / quarters.len() as u32;
    let reading = futures_util::stream::iter(quarters).then(move |progress| async move {
        tokio::time::sleep(pause).await;
        Ok::<Bytes, std::io::Error>(match progress {
            Some(chunk) => Bytes::from(format!("data: {chunk}\n\n")),
            None => Bytes::new(),
        })
    });
    let mut frames: Vec<Result<Bytes, std::io::Error>> = chunks
        .into_iter()
        .map(|c| Ok(Bytes::from(format!("data: {c}\n\n"))))
        .collect();
    frames.push(Ok(Bytes::from_static(b"data: [DONE]\n\n")));
    let body = Body::from_stream(reading.chain(futures_util::stream::iter(frames)));
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap_or_else(|_| error(500, "cannot build the SSE response"))
}

/// A stream whose every chunk waits `pause` first: a model writing slowly.
pub(super) fn sse_paced(pause: std::time::Duration, chunks: Vec<Value>) -> Response {
    let mut frames: Vec<Bytes> = chunks
        .into_iter()
        .map(|c| Bytes::from(format!("data: {c}\n\n")))
        .collect();
    frames.push(Bytes::from_static(b"data: [DONE]\n\n"));
    let body = Body::from_stream(futures_util::stream::iter(frames).then(
        move |frame| async move {
            tokio::time::sleep(pause).await;
            Ok::<Bytes, std::io::Error>(frame)
        },
    ));
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap_or_else(|_| error(500, "cannot build the SSE response"))
}

pub(super) fn whole_reply(text: &str, calls: &[(String, String)], prompt_tokens: u64) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(index, (name, arguments))| {
            json!({"id": format!("call_{index}_{name}"), "type": "function",
                   "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": text});
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    json!({"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "test-model",
           "choices": [{"index": 0, "message": message, "finish_reason": finish}],
           "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 10, "total_tokens": prompt_tokens + 10}})
}
