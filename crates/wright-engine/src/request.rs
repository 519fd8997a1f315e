//! The `/chat/completions` body the client built, read back into what the engine needs:
//! the messages in the shape chat templates expect (tool-call arguments as objects, as
//! Hugging Face and llama.cpp hand them to templates), the tools, and the sampling
//! settings. Fields the engine does not use are ignored, as a server ignores them.

use crate::error::EngineError;
use serde::Deserialize;
use serde_json::Value;

/// One request, ready for the template and the sampler.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub messages: Vec<Value>,
    pub tools: Vec<Value>,
    pub temperature: f32,
    pub max_tokens: Option<u32>,
    pub seed: Option<u32>,
}

#[derive(Deserialize)]
struct Body {
    #[serde(default)]
    messages: Vec<Value>,
    #[serde(default)]
    tools: Vec<Value>,
    temperature: Option<f32>,
    max_tokens: Option<u32>,
    seed: Option<u32>,
}

/// The sampling temperature when the request names none (llama-server's default).
const DEFAULT_TEMPERATURE: f32 = 0.8;

/// Reads a request body.
pub fn parse(body: &[u8]) -> Result<Request, EngineError> {
    let body: Body =
        serde_json::from_slice(body).map_err(|err| EngineError::Request(err.to_string()))?;
    if body.messages.is_empty() {
        return Err(EngineError::Request("it has no messages".into()));
    }
    Ok(Request {
        messages: body.messages.into_iter().map(for_template).collect(),
        tools: body.tools,
        temperature: body.temperature.unwrap_or(DEFAULT_TEMPERATURE).max(0.0),
        max_tokens: body.max_tokens,
        seed: body.seed,
    })
}

/// A message as templates take it: each tool call's `arguments` parsed into an object
/// (templates print it with `tojson`); text that is not JSON stays text.
fn for_template(mut message: Value) -> Value {
    if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for call in calls {
            if let Some(arguments) = call.pointer_mut("/function/arguments") {
                if let Some(parsed) = arguments
                    .as_str()
                    .and_then(|text| serde_json::from_str::<Value>(text).ok())
                {
                    *arguments = parsed;
                }
            }
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_become_objects_and_defaults_hold() {
        let body = json!({"model": "m", "stream": true, "messages": [
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "t", "arguments": "{\"x\": 1}"}},
                {"id": "b", "type": "function", "function": {"name": "t", "arguments": "not json"}}
            ]}
        ]});
        let request = parse(body.to_string().as_bytes()).unwrap();
        assert_eq!(
            request.messages[0]["tool_calls"][0]["function"]["arguments"],
            json!({"x": 1})
        );
        assert_eq!(
            request.messages[0]["tool_calls"][1]["function"]["arguments"],
            json!("not json")
        );
        assert_eq!(request.temperature, DEFAULT_TEMPERATURE);
        assert!(request.tools.is_empty());
    }

    #[test]
    fn a_body_without_messages_is_refused() {
        assert!(parse(b"{\"model\": \"m\", \"messages\": []}").is_err());
        assert!(parse(b"not json").is_err());
    }
}
