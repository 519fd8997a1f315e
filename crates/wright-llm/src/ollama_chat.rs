//! Ollama's native chat API (`POST /api/chat`), used instead of its OpenAI-compatible
//! endpoint for one reason: the context window. Ollama's `/v1/chat/completions` ignores
//! `num_ctx` (and a request there reloads the model with Ollama's default window, 4096
//! tokens in most setups, cutting longer prompts silently); `/api/chat` takes it in
//! `options`. Read against Ollama's `docs/api.md` ("Generate a chat completion"):
//!
//! - request: `model`, `stream`, `options` (`num_ctx`, `temperature`, `num_predict`),
//!   `tools` (the same function schemas), `messages` (last, so each request's body is a
//!   byte prefix of the next, as with the OpenAI wire); assistant tool calls carry
//!   `function.arguments` as an object, tool results `tool_name`;
//! - reply: newline-delimited JSON objects, each with `message` (`content`, `thinking`,
//!   whole `tool_calls`) and `done`; the last has `done_reason`, `prompt_eval_count`,
//!   `eval_count` and the durations in nanoseconds. Not streamed: one such object.
//!
//! Each reply object is turned into the OpenAI chunk it stands for and folded by the same
//! `Accumulator`, so both wires give the same `Response` and the same live deltas.

use crate::accumulate::Chunk;
use crate::types::ChatMessage;
use serde::Serialize;
use serde_json::json;
use serde_json::Map;
use serde_json::Value;
use std::collections::HashMap;

#[derive(Serialize)]
struct NativeRequest<'a> {
    model: &'a str,
    stream: bool,
    options: Map<String, Value>,
    #[serde(flatten)]
    extra: Map<String, Value>,
    /// The JSON schema over the calls, when text-mode calls are constrained.
    #[serde(skip_serializing_if = "Option::is_none")]
    format: Option<&'a serde_json::value::RawValue>,
    #[serde(skip_serializing_if = "<[Value]>::is_empty")]
    tools: &'a [Value],
    messages: Vec<Value>,
}

/// The settings a native request is made with.
pub(crate) struct Native<'a> {
    pub model: &'a str,
    pub stream: bool,
    pub num_ctx: u64,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
    pub extra: &'a Map<String, Value>,
    /// `format`: the schema every reply must follow (`constrain`).
    pub format: Option<&'a serde_json::value::RawValue>,
}

/// The body of `POST /api/chat` for this history.
pub(crate) fn request_body(
    native: &Native<'_>,
    messages: &[ChatMessage],
    tools: &[Value],
) -> Vec<u8> {
    // Tool results name their tool in Ollama's format; the history knows it by call id.
    let mut names: HashMap<&str, &str> = HashMap::new();
    for message in messages {
        if let ChatMessage::Assistant { tool_calls, .. } = message {
            for call in tool_calls {
                names.insert(&call.id, &call.function.name);
            }
        }
    }
    let messages = messages
        .iter()
        .map(|message| match message {
            ChatMessage::System { content } => json!({"role": "system", "content": content}),
            ChatMessage::User { content } => json!({"role": "user", "content": content}),
            ChatMessage::Assistant {
                content,
                tool_calls,
            } if tool_calls.is_empty() => json!({"role": "assistant", "content": content}),
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        // An object, as Ollama wants; text that is no JSON stays text.
                        let arguments = serde_json::from_str::<Value>(&call.function.arguments)
                            .ok()
                            .filter(Value::is_object)
                            .unwrap_or_else(|| Value::String(call.function.arguments.clone()));
                        json!({"function": {"name": call.function.name, "arguments": arguments}})
                    })
                    .collect();
                json!({"role": "assistant", "content": content, "tool_calls": calls})
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
            } => match names.get(tool_call_id.as_str()) {
                Some(name) => json!({"role": "tool", "content": content, "tool_name": name}),
                None => json!({"role": "tool", "content": content}),
            },
        })
        .collect();
    // wright's options, then the profile's own `extra.options` (never over wright's).
    let mut options = Map::new();
    options.insert("num_ctx".into(), json!(native.num_ctx));
    if let Some(temperature) = native.temperature {
        options.insert("temperature".into(), json!(temperature));
    }
    if let Some(max_tokens) = native.max_tokens {
        options.insert("num_predict".into(), json!(max_tokens));
    }
    let mut extra = native.extra.clone();
    if let Some(Value::Object(theirs)) = extra.remove("options") {
        for (key, value) in theirs {
            options.entry(key).or_insert(value);
        }
    }
    let request = NativeRequest {
        model: native.model,
        stream: native.stream,
        options,
        extra,
        format: native.format,
        tools,
        messages,
    };
    serde_json::to_vec(&request).unwrap_or_default()
}

/// A reply object that is not a reply.
#[derive(Debug, PartialEq)]
pub(crate) enum NativeError {
    /// Ollama's own error message, sent in the stream.
    Server(String),
    /// Not an Ollama reply at all.
    Malformed(String),
}

/// Turns reply objects into OpenAI chunks, numbering tool calls across the whole reply.
#[derive(Debug, Default)]
pub(crate) struct NativeReader {
    calls: usize,
}

impl NativeReader {
    /// The chunk one reply object stands for.
    pub(crate) fn chunk(&mut self, line: &str) -> Result<Chunk, NativeError> {
        let value: Value = serde_json::from_str(line)
            .map_err(|_| NativeError::Malformed(format!("not an Ollama chat reply: {line}")))?;
        if let Some(error) = value.get("error") {
            return Err(NativeError::Server(
                error
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| error.to_string()),
            ));
        }
        let message = &value["message"];
        let mut delta = Map::new();
        if let Some(text) = message["content"].as_str() {
            delta.insert("content".into(), json!(text));
        }
        if let Some(thinking) = message["thinking"].as_str() {
            delta.insert("reasoning".into(), json!(thinking));
        }
        if let Some(calls) = message["tool_calls"].as_array() {
            let calls: Vec<Value> = calls
                .iter()
                .map(|call| {
                    let index = self.calls;
                    self.calls += 1;
                    // No id unless Ollama gives one: the accumulator then makes one
                    // unique to the step, as tool results must be told apart by it.
                    json!({
                        "index": index,
                        "id": call.get("id").cloned().unwrap_or(Value::Null),
                        "function": {
                            "name": call["function"]["name"],
                            "arguments": call["function"]["arguments"],
                        }
                    })
                })
                .collect();
            delta.insert("tool_calls".into(), Value::Array(calls));
        }
        let done = value["done"].as_bool().unwrap_or(false);
        let mut chunk = json!({"choices": [{
            "delta": delta,
            "finish_reason": if done { value.get("done_reason").cloned().unwrap_or_else(|| json!("stop")) } else { Value::Null },
        }]});
        if done {
            let count = |key: &str| value[key].as_u64().unwrap_or(0);
            let ms = |key: &str| value[key].as_f64().map(|ns| ns / 1e6);
            chunk["usage"] = json!({
                "prompt_tokens": count("prompt_eval_count"),
                "completion_tokens": count("eval_count"),
            });
            chunk["timings"] = json!({
                "prompt_ms": ms("prompt_eval_duration"),
                "predicted_ms": ms("eval_duration"),
            });
        }
        serde_json::from_value(chunk).map_err(|err| NativeError::Malformed(err.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulate::Accumulator;
    use crate::types::ToolCall;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_history_in_ollamas_shape_with_the_window_in_options() {
        let extra = Map::new();
        let native = Native {
            model: "qwen2.5-coder:1.5b",
            stream: true,
            num_ctx: 32768,
            temperature: Some(0.0),
            max_tokens: Some(512),
            extra: &extra,
            format: None,
        };
        let messages = [
            ChatMessage::System {
                content: "sys".into(),
            },
            ChatMessage::User {
                content: "fix it".into(),
            },
            ChatMessage::Assistant {
                content: String::new(),
                tool_calls: vec![ToolCall::function(
                    "c1",
                    "terminal",
                    "{\"command\":\"ls\"}".into(),
                )],
            },
            ChatMessage::Tool {
                tool_call_id: "c1".into(),
                content: "a.py".into(),
            },
        ];
        let body: Value = serde_json::from_slice(&request_body(&native, &messages, &[])).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "qwen2.5-coder:1.5b",
                "stream": true,
                "options": {"num_ctx": 32768, "temperature": 0.0, "num_predict": 512},
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "fix it"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"function": {"name": "terminal", "arguments": {"command": "ls"}}}
                    ]},
                    {"role": "tool", "content": "a.py", "tool_name": "terminal"}
                ]
            })
        );
        // `messages` last: the next request's body starts with this one's bytes.
        let short = request_body(&native, &messages[..2], &[]);
        let long = request_body(&native, &messages, &[]);
        assert!(long.starts_with(&short[..short.len() - 2]));
    }

    #[test]
    fn reply_lines_fold_into_one_response() {
        let lines = [
            r#"{"model":"m","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":"Looking."},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"terminal","arguments":{"command":"ls"}}}]},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":120,"eval_count":9,"prompt_eval_duration":40000000,"eval_duration":90000000}"#,
        ];
        let mut reader = NativeReader::default();
        let mut acc = Accumulator::new();
        let mut deltas = 0;
        for line in lines {
            acc.push_chunk(reader.chunk(line).unwrap(), &mut |_| deltas += 1);
        }
        assert!(acc.saw_finish());
        let response = acc.finish("3");
        assert_eq!(response.text, "Looking.");
        assert_eq!(response.reasoning, "hmm");
        assert_eq!(
            response.tool_calls,
            vec![ToolCall::function(
                "call_3_0",
                "terminal",
                "{\"command\":\"ls\"}".into()
            )]
        );
        let usage = response.usage.unwrap();
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (120, 9));
        assert_eq!(usage.prompt_ms, Some(40.0));
        // Reasoning, text, the call's name, its arguments.
        assert_eq!(deltas, 4);
        assert_eq!(
            NativeReader::default()
                .chunk(r#"{"error":"model 'x' not found"}"#)
                .unwrap_err(),
            NativeError::Server("model 'x' not found".into())
        );
    }
}
