//! The generated text read back as a reply: the call the grammar held it to (its name, its
//! arguments as the exact JSON text generated, the reasoning before it), or plain text when
//! no tools were offered or the reply was cut short.

use crate::grammar::CallFormat;
use crate::template::to_python_json;
use serde_json::Value;
use wright_llm::Response;
use wright_llm::ToolCall;

/// Why generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The model ended its turn (after the call, when a grammar held it).
    Stop,
    /// The reply reached its token cap.
    Length,
}

/// The reply for `text`; `format` is the call's framing when tools were offered.
pub fn read(text: &str, format: Option<CallFormat>, ending: Ending, call_id: &str) -> Response {
    let call = format.and_then(|format| match format {
        CallFormat::Hermes => hermes(text),
        CallFormat::Json => json_object(text),
    });
    match call {
        Some(call) => Response {
            text: call.text,
            reasoning: call.reasoning,
            tool_calls: vec![ToolCall::function(call_id, call.name, call.arguments)],
            finish_reason: Some("tool_calls".into()),
            ..Response::default()
        },
        None => Response {
            text: text.trim().to_string(),
            finish_reason: Some(
                match ending {
                    Ending::Stop => "stop",
                    Ending::Length => "length",
                }
                .into(),
            ),
            ..Response::default()
        },
    }
}

struct Call {
    text: String,
    reasoning: String,
    name: String,
    arguments: String,
}

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

fn hermes(text: &str) -> Option<Call> {
    let (before, rest) = text.split_once(OPEN)?;
    let body = rest.split_once(CLOSE).map_or(rest, |(body, _)| body);
    let object: Value = serde_json::from_str(body.trim()).ok()?;
    let (name, arguments) = name_and_arguments(&object)?;
    Some(Call {
        text: before.trim().to_string(),
        reasoning: String::new(),
        name,
        arguments,
    })
}

fn json_object(text: &str) -> Option<Call> {
    let object: Value = serde_json::from_str(text.trim()).ok()?;
    let (name, arguments) = name_and_arguments(&object)?;
    Some(Call {
        text: String::new(),
        reasoning: object
            .get("reasoning")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        name,
        arguments,
    })
}

/// The name and the arguments, spelled as the grammar spells them (so the same text).
fn name_and_arguments(object: &Value) -> Option<(String, String)> {
    let name = object.get("name")?.as_str()?.to_string();
    let arguments = object
        .get("arguments")
        .map_or_else(|| "{}".to_string(), to_python_json);
    Some((name, arguments))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hermes_call_keeps_its_text_and_exact_arguments() {
        let text = "Let me look.<tool_call>\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"ls -la\", \"timeout\": 5}}\n</tool_call>";
        let reply = read(text, Some(CallFormat::Hermes), Ending::Stop, "call_1");
        assert_eq!(reply.text, "Let me look.");
        assert_eq!(reply.tool_calls[0].function.name, "terminal");
        assert_eq!(
            reply.tool_calls[0].function.arguments,
            "{\"command\": \"ls -la\", \"timeout\": 5}"
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn a_json_call_gives_its_reasoning() {
        let text = "{\"reasoning\": \"tests first\", \"name\": \"finish\", \"arguments\": {\"message\": \"done\"}}";
        let reply = read(text, Some(CallFormat::Json), Ending::Stop, "c");
        assert_eq!(reply.reasoning, "tests first");
        assert_eq!(reply.tool_calls[0].function.name, "finish");
    }

    #[test]
    fn a_cut_reply_is_text_with_its_reason() {
        let reply = read(
            "<tool_call>\n{\"name\": \"term",
            Some(CallFormat::Hermes),
            Ending::Length,
            "c",
        );
        assert!(reply.tool_calls.is_empty());
        assert_eq!(reply.finish_reason.as_deref(), Some("length"));
        let free = read("hello", None, Ending::Stop, "c");
        assert_eq!(
            (free.text.as_str(), free.finish_reason.as_deref()),
            ("hello", Some("stop"))
        );
    }
}
