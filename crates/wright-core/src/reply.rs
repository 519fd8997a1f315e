//! Reading the model's reply: native tool calls as they are, calls written as text read
//! out of it (in text mode, or as a fallback when a native reply has none), and tool
//! arguments checked to be a JSON object.

use crate::agent::Conversation;
use serde_json::Value;
use wright_llm::constrain::read_constrained_call;
use wright_llm::textcall::parse_text_calls;
use wright_llm::textcall::Fix;
use wright_llm::Response;
use wright_llm::ToolCall;
use wright_protocol::ToolCalling;

/// A reply once tool calls written as text have been read out of it.
pub(crate) struct Reply {
    /// The text without the calls (what people see).
    pub text: String,
    pub reasoning: String,
    /// The reply as written, when calls were read from its text.
    pub raw: Option<String>,
    pub calls: Vec<ToolCall>,
    /// Calls the model attempted that could not be read.
    pub errors: Vec<String>,
    /// Calls that could be read only after a repair (by call id), to be told to the model.
    pub repaired: Vec<RepairedCall>,
    /// Calls written after the first one in text mode, which are not run: a small model
    /// writing a whole plan of calls has seen none of their results (one such plan here
    /// ended in `rm -rf` of the file it was meant to fix).
    pub dropped: usize,
}

/// A call read from text after a repair.
pub(crate) struct RepairedCall {
    pub call_id: String,
    pub name: String,
    pub fixes: Vec<Fix>,
}

impl RepairedCall {
    /// The note for the model and the user: what was repaired, what ran, and how to write
    /// it next time.
    pub fn note(&self, arguments: &str) -> String {
        let done: Vec<&str> = self.fixes.iter().map(|fix| fix.describe()).collect();
        let advice: Vec<&str> = self.fixes.iter().map(|fix| fix.advice()).collect();
        format!(
            "Your call to {} was not valid as written; it was repaired ({}) and ran with the arguments {}. Next time {}.",
            self.name,
            done.join(", "),
            arguments,
            advice.join("; ")
        )
    }
}

impl Conversation {
    /// Native calls are taken as they are. In text mode — or in native mode when a reply
    /// has no native call but its text holds one — calls are read from the text.
    pub(crate) fn read_calls(&self, response: Response, step: u32) -> Reply {
        let text = response.text.trim().to_string();
        let native = Reply {
            text: text.clone(),
            reasoning: response.reasoning.clone(),
            raw: None,
            calls: response.tool_calls.clone(),
            errors: Vec::new(),
            repaired: Vec::new(),
            dropped: 0,
        };
        if self.calling.mode() == ToolCalling::Native && !response.tool_calls.is_empty() {
            return native;
        }
        let known = self.tools.all_names();
        if self.calling.mode() == ToolCalling::Text {
            // What a reply under the JSON-schema constraint is: one call, its reasoning
            // in front of it.
            if let Some(call) = read_constrained_call(&response.text, &known) {
                let mut reasoning = response.reasoning;
                if !call.reasoning.is_empty() {
                    if !reasoning.is_empty() {
                        reasoning.push('\n');
                    }
                    reasoning.push_str(&call.reasoning);
                }
                return Reply {
                    text: String::new(),
                    reasoning,
                    raw: Some(response.text),
                    calls: vec![ToolCall::function(
                        format!("call_{step}_0"),
                        call.name,
                        call.arguments.to_string(),
                    )],
                    errors: Vec::new(),
                    repaired: Vec::new(),
                    dropped: 0,
                };
            }
        }
        let mut parsed = parse_text_calls(&response.text, &known);
        if self.calling.mode() == ToolCalling::Text
            && parsed.calls.is_empty()
            && parsed.errors.is_empty()
        {
            // A command in a ```bash block is how many small models say "run this".
            if let Some(command) = first_shell_block(&response.text) {
                parsed.calls.push(wright_llm::textcall::TextCall {
                    name: "terminal".into(),
                    arguments: serde_json::json!({ "command": command }),
                    repairs: Vec::new(),
                });
            }
        }
        if parsed.calls.is_empty()
            && parsed.errors.is_empty()
            && self.calling.mode() == ToolCalling::Native
        {
            return native;
        }
        let mut reasoning = response.reasoning;
        if !parsed.reasoning.is_empty() {
            if !reasoning.is_empty() {
                reasoning.push('\n');
            }
            reasoning.push_str(&parsed.reasoning);
        }
        // Brackets left open are closed only when the model stopped on its own: a reply
        // cut at the token limit may have been cut before the rest of the arguments.
        if response.finish_reason.as_deref() == Some("length") {
            let (cut, whole): (Vec<_>, Vec<_>) = parsed
                .calls
                .into_iter()
                .partition(|call| call.repairs.contains(&Fix::UnclosedBrackets));
            parsed.calls = whole;
            for call in cut {
                parsed.errors.push(format!(
                    "the reply reached the token limit before the call to `{}` was finished (its brackets were never closed), so it was not run: write a shorter call",
                    call.name
                ));
            }
        }
        let mut repaired = Vec::new();
        let calls = parsed
            .calls
            .into_iter()
            .enumerate()
            .map(|(n, call)| {
                let id = format!("call_{step}_{n}");
                if !call.repairs.is_empty() {
                    repaired.push(RepairedCall {
                        call_id: id.clone(),
                        name: call.name.clone(),
                        fixes: call.repairs,
                    });
                }
                ToolCall::function(id, call.name, call.arguments.to_string())
            })
            .collect();
        let raw = (parsed.content != text || self.calling.mode() == ToolCalling::Text)
            .then(|| response.text.clone());
        let mut calls: Vec<ToolCall> = calls;
        let dropped = match self.calling.mode() {
            ToolCalling::Text if calls.len() > 1 => {
                let extra = calls.len() - 1;
                calls.truncate(1);
                extra
            }
            ToolCalling::Text | ToolCalling::Native => 0,
        };
        repaired.retain(|one| calls.iter().any(|call| call.id == one.call_id));
        Reply {
            text: parsed.content,
            reasoning,
            raw,
            calls,
            errors: parsed.errors,
            repaired,
            dropped,
        }
    }
}

/// The first ```bash / ```sh / ```shell / ```console block's text.
fn first_shell_block(text: &str) -> Option<String> {
    let mut rest = text;
    while let Some(at) = rest.find("```") {
        let after = &rest[at + 3..];
        let (lang, body) = after.split_once('\n')?;
        let end = body.find("```")?;
        if matches!(lang.trim(), "bash" | "sh" | "shell" | "console" | "zsh") {
            let command = body[..end].trim();
            let command = command.strip_prefix("$ ").unwrap_or(command);
            if !command.is_empty() {
                return Some(command.to_string());
            }
        }
        rest = &body[end + 3..];
    }
    None
}

/// Tool arguments as a JSON object. Models sometimes send the object encoded twice (a JSON
/// string holding JSON); that is accepted. Anything else is an error the model can fix.
pub(crate) fn parse_arguments(raw: &str) -> Result<Value, String> {
    let value: Value = serde_json::from_str(raw).map_err(|err| {
        format!("the arguments are not valid JSON ({err}); send one JSON object, e.g. {{\"command\": \"ls\"}}")
    })?;
    match value {
        Value::Object(_) => Ok(value),
        Value::String(inner) => match serde_json::from_str::<Value>(&inner) {
            Ok(object @ Value::Object(_)) => Ok(object),
            _ => Err("the arguments must be a JSON object of parameter names and values".into()),
        },
        _ => Err("the arguments must be a JSON object of parameter names and values".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_must_be_an_object() {
        assert!(parse_arguments("{\"a\":1}").is_ok());
        assert!(parse_arguments("\"{\\\"a\\\":1}\"").is_ok());
        assert!(parse_arguments("[1]").is_err());
        assert!(parse_arguments("{\"a\":")
            .unwrap_err()
            .contains("not valid JSON"));
    }
}
