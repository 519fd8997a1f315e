//! Folds streamed chat-completion chunks (or one non-streamed reply) into a `Response`.
//!
//! Tool calls are keyed by their `index`: the `id` and name arrive in the first delta of a
//! call, argument text arrives in pieces. Servers that omit `index` (or send each call
//! whole, as Ollama does) are handled by the id: a new id opens a new call, a delta with
//! neither continues the last one. Reasoning arrives as `reasoning_content` (llama.cpp,
//! vLLM) or `reasoning` (Ollama); both are kept apart from the answer text.

use crate::types::PromptProgress;
use crate::types::Response;
use crate::types::StreamDelta;
use crate::types::TokenUsage;
use crate::types::ToolCall;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub(crate) struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    timings: Option<Timings>,
    /// llama.cpp, asked with `return_progress`: how far it has read the prompt.
    #[serde(default)]
    prompt_progress: Option<WirePromptProgress>,
}

#[derive(Debug, Deserialize)]
struct WirePromptProgress {
    #[serde(default)]
    total: u64,
    #[serde(default)]
    cache: u64,
    #[serde(default)]
    processed: u64,
}

#[derive(Debug, Deserialize)]
struct Choice {
    /// Streamed replies carry `delta`, whole ones `message`; both have the same shape.
    #[serde(default, alias = "message")]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
}

#[derive(Debug, Deserialize)]
struct CallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    /// A string on the wire; a few servers send an object when the reply is not streamed.
    #[serde(default)]
    arguments: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Debug, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct Timings {
    #[serde(default)]
    prompt_ms: Option<f64>,
    #[serde(default)]
    predicted_ms: Option<f64>,
    #[serde(default)]
    cache_n: Option<u64>,
}

#[derive(Debug, Default)]
struct PartialCall {
    index: Option<usize>,
    id: String,
    name: String,
    arguments: String,
}

/// Collects one reply.
#[derive(Debug, Default)]
pub struct Accumulator {
    response: Response,
    calls: Vec<PartialCall>,
    cache_n: Option<u64>,
    saw_finish: bool,
}

impl Accumulator {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether a `finish_reason` arrived: without it a stream that ended was cut.
    pub fn saw_finish(&self) -> bool {
        self.saw_finish
    }

    /// Whether a tool call was begun (so a cut now would leave a partial call).
    pub fn has_tool_calls(&self) -> bool {
        !self.calls.is_empty()
    }

    pub(crate) fn push_chunk(&mut self, chunk: Chunk, on_delta: &mut dyn FnMut(StreamDelta)) {
        if let Some(progress) = chunk.prompt_progress {
            on_delta(StreamDelta::PromptProgress(PromptProgress {
                total: progress.total,
                cached: progress.cache,
                processed: progress.processed,
            }));
        }
        if let Some(usage) = chunk.usage {
            let cached = usage.prompt_tokens_details.and_then(|d| d.cached_tokens);
            let entry = self.response.usage.get_or_insert_with(TokenUsage::default);
            entry.prompt_tokens = usage.prompt_tokens;
            entry.completion_tokens = usage.completion_tokens;
            entry.cached_tokens = cached.or(entry.cached_tokens);
        }
        if let Some(timings) = chunk.timings {
            let entry = self.response.usage.get_or_insert_with(TokenUsage::default);
            entry.prompt_ms = timings.prompt_ms;
            entry.predicted_ms = timings.predicted_ms;
            self.cache_n = timings.cache_n.or(self.cache_n);
        }
        // Only the first choice matters: wright never asks for n > 1.
        let Some(choice) = chunk.choices.into_iter().next() else {
            return;
        };
        if let Some(reason) = choice.finish_reason {
            self.saw_finish = true;
            self.response.finish_reason = Some(reason);
        }
        let Some(delta) = choice.delta else {
            return;
        };
        if let Some(reasoning) = delta.reasoning_content.or(delta.reasoning) {
            if !reasoning.is_empty() {
                self.response.reasoning.push_str(&reasoning);
                on_delta(StreamDelta::Reasoning(reasoning));
            }
        }
        if let Some(text) = delta.content {
            if !text.is_empty() {
                self.response.text.push_str(&text);
                on_delta(StreamDelta::Text(text));
            }
        }
        for call in delta.tool_calls.unwrap_or_default() {
            self.push_call(call, on_delta);
        }
    }

    fn push_call(&mut self, call: CallDelta, on_delta: &mut dyn FnMut(StreamDelta)) {
        let position = match (call.index, &call.id) {
            (Some(index), _) => self.calls.iter().position(|c| c.index == Some(index)),
            (None, Some(id)) => self.calls.iter().position(|c| &c.id == id),
            (None, None) => self.calls.len().checked_sub(1),
        };
        let position = match position {
            Some(position) => position,
            None => {
                self.calls.push(PartialCall {
                    index: call.index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let partial = &mut self.calls[position];
        if let Some(id) = call.id.filter(|id| !id.is_empty()) {
            partial.id = id;
        }
        if let Some(function) = call.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                if partial.name.is_empty() {
                    on_delta(StreamDelta::ToolCallStarted { name: name.clone() });
                }
                partial.name.push_str(&name);
            }
            let piece = match function.arguments {
                Some(serde_json::Value::String(piece)) => piece,
                Some(serde_json::Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            if !piece.is_empty() {
                partial.arguments.push_str(&piece);
                on_delta(StreamDelta::ToolCallArguments(piece));
            }
        }
    }

    /// The finished reply. Calls without an id get a stable one derived from their place.
    pub fn finish(mut self, step_tag: &str) -> Response {
        if let (Some(usage), Some(cache_n)) = (self.response.usage.as_mut(), self.cache_n) {
            usage.cached_tokens = usage.cached_tokens.or(Some(cache_n));
        }
        self.response.tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(n, call)| {
                let id = if call.id.is_empty() {
                    format!("call_{step_tag}_{n}")
                } else {
                    call.id
                };
                let arguments = if call.arguments.trim().is_empty() {
                    "{}".to_string()
                } else {
                    call.arguments
                };
                ToolCall::function(id, call.name, arguments)
            })
            .collect();
        self.response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn feed(chunks: Vec<serde_json::Value>) -> (Response, Vec<StreamDelta>) {
        let mut acc = Accumulator::new();
        let mut deltas = Vec::new();
        for chunk in chunks {
            let chunk: Chunk = serde_json::from_value(chunk).unwrap();
            acc.push_chunk(chunk, &mut |d| deltas.push(d));
        }
        (acc.finish("1"), deltas)
    }

    #[test]
    fn arguments_split_across_deltas_are_joined_by_index() {
        let (response, deltas) = feed(vec![
            json!({"choices":[{"delta":{"role":"assistant","content":"Let me look."}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"terminal","arguments":""}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"comm"}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"think","arguments":"{}"}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"and\":\"ls\"}"}}]}}]}),
            json!({"choices":[{"delta":{},"finish_reason":"tool_calls"}]}),
            json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":8}}}),
        ]);
        assert_eq!(response.text, "Let me look.");
        assert_eq!(
            response.tool_calls,
            vec![
                ToolCall::function("a", "terminal", "{\"command\":\"ls\"}".into()),
                ToolCall::function("b", "think", "{}".into()),
            ]
        );
        assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(response.usage.unwrap().cached_tokens, Some(8));
        assert_eq!(
            deltas,
            vec![
                StreamDelta::Text("Let me look.".into()),
                StreamDelta::ToolCallStarted {
                    name: "terminal".into()
                },
                StreamDelta::ToolCallArguments("{\"comm".into()),
                StreamDelta::ToolCallStarted {
                    name: "think".into()
                },
                StreamDelta::ToolCallArguments("{}".into()),
                StreamDelta::ToolCallArguments("and\":\"ls\"}".into()),
            ]
        );
    }

    /// llama.cpp's progress chunks (`return_progress`), as in its server's README: they
    /// carry no answer, only how far the prompt is read.
    #[test]
    fn prompt_progress_is_passed_on() {
        let (response, deltas) = feed(vec![
            json!({"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk","prompt_progress":{"total":36,"cache":4,"processed":20,"time_ms":512}}),
            json!({"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}),
        ]);
        assert_eq!(response.text, "ok");
        assert_eq!(
            deltas,
            vec![
                StreamDelta::PromptProgress(PromptProgress {
                    total: 36,
                    cached: 4,
                    processed: 20
                }),
                StreamDelta::Text("ok".into()),
            ]
        );
    }

    #[test]
    fn whole_calls_without_index_are_told_apart_by_id() {
        let (response, _) = feed(vec![
            json!({"choices":[{"delta":{"tool_calls":[{"id":"x","function":{"name":"a","arguments":"{\"n\":1}"}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"id":"y","function":{"name":"b","arguments":{"n":2}}}]}}]}),
            json!({"choices":[{"delta":{},"finish_reason":"stop"}]}),
        ]);
        assert_eq!(
            response.tool_calls,
            vec![
                ToolCall::function("x", "a", "{\"n\":1}".into()),
                ToolCall::function("y", "b", "{\"n\":2}".into()),
            ]
        );
    }

    #[test]
    fn reasoning_is_kept_apart() {
        let (response, _) = feed(vec![
            json!({"choices":[{"delta":{"reasoning_content":"hmm"}}]}),
            json!({"choices":[{"delta":{"reasoning":" ok"}}]}),
            json!({"choices":[{"delta":{"content":"done"},"finish_reason":"stop"}]}),
        ]);
        assert_eq!(response.reasoning, "hmm ok");
        assert_eq!(response.text, "done");
    }
}
