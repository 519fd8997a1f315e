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
    /// The tools this reply may call, when `tool_choice` names some (OpenAI's
    /// `allowed_tools`, or one function): the prompt still lists every tool, so the
    /// cached prefix holds, and only the grammar is narrowed.
    pub allowed_tools: Option<Vec<String>>,
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
    #[serde(default)]
    tool_choice: Value,
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
    let allowed_tools = allowed_tools(&body.tool_choice)?;
    if let Some(allowed) = &allowed_tools {
        let declared = |name: &String| body.tools.iter().any(|tool| tool_name(tool) == Some(name));
        if let Some(unknown) = allowed.iter().find(|name| !declared(name)) {
            return Err(EngineError::Request(format!(
                "tool_choice allows `{unknown}`, which is not among its tools"
            )));
        }
    }
    Ok(Request {
        messages: body.messages.into_iter().map(for_template).collect(),
        tools: body.tools,
        temperature: body.temperature.unwrap_or(DEFAULT_TEMPERATURE).max(0.0),
        max_tokens: body.max_tokens,
        seed: body.seed,
        allowed_tools,
    })
}

impl Request {
    /// The tools the reply's grammar admits: the declared ones, narrowed by `tool_choice`.
    pub fn callable_tools(&self) -> Vec<Value> {
        match &self.allowed_tools {
            None => self.tools.clone(),
            Some(allowed) => self
                .tools
                .iter()
                .filter(|tool| {
                    tool_name(tool).is_some_and(|name| allowed.contains(&name.to_string()))
                })
                .cloned()
                .collect(),
        }
    }
}

/// A declared tool's name (`{"type": "function", "function": {"name": …}}`).
fn tool_name(tool: &Value) -> Option<&str> {
    tool.pointer("/function/name").and_then(Value::as_str)
}

/// The tool names `tool_choice` restricts a reply to: OpenAI's `{"type": "allowed_tools",
/// "allowed_tools": {"tools": [{"type": "function", "function": {"name": …}}, …]}}` (each
/// tool also as the Responses API's `{"type": "function", "name": …}`), or one function,
/// `{"type": "function", "function": {"name": …}}`. The strings (`"auto"`, `"required"`,
/// `"none"`) restrict nothing: with tools, every reply is a call.
fn allowed_tools(choice: &Value) -> Result<Option<Vec<String>>, EngineError> {
    let named = |tool: &Value| -> Option<String> {
        tool.pointer("/function/name")
            .or_else(|| tool.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let unreadable = || {
        EngineError::Request(format!(
            "its tool_choice is not one this engine reads: {choice}"
        ))
    };
    match choice.get("type").and_then(Value::as_str) {
        None => Ok(None),
        Some("function") => named(choice)
            .map(|name| Some(vec![name]))
            .ok_or_else(unreadable),
        Some("allowed_tools") => {
            let tools = choice
                .pointer("/allowed_tools/tools")
                .and_then(Value::as_array)
                .ok_or_else(unreadable)?;
            let names: Option<Vec<String>> = tools.iter().map(named).collect();
            match names {
                Some(names) if !names.is_empty() => Ok(Some(names)),
                _ => Err(unreadable()),
            }
        }
        Some(_) => Err(unreadable()),
    }
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

    fn tools() -> Value {
        json!([
            {"type": "function", "function": {"name": "terminal", "parameters": {}}},
            {"type": "function", "function": {"name": "file_editor", "parameters": {}}},
            {"type": "function", "function": {"name": "finish", "parameters": {}}}
        ])
    }

    fn with_choice(choice: Value) -> Result<Request, EngineError> {
        let body = json!({"messages": [{"role": "user", "content": "hi"}],
                          "tools": tools(), "tool_choice": choice});
        parse(body.to_string().as_bytes())
    }

    fn callable(request: &Request) -> Vec<String> {
        request
            .callable_tools()
            .iter()
            .map(|tool| tool["function"]["name"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn tool_choice_narrows_the_callable_tools_not_the_declared_ones() {
        let all = with_choice(json!("required")).unwrap();
        assert_eq!(callable(&all), ["terminal", "file_editor", "finish"]);
        let allowed = with_choice(json!({"type": "allowed_tools", "allowed_tools": {
            "mode": "required",
            "tools": [{"type": "function", "function": {"name": "file_editor"}},
                      {"type": "function", "name": "finish"}]}}))
        .unwrap();
        assert_eq!(callable(&allowed), ["file_editor", "finish"]);
        assert_eq!(allowed.tools.len(), 3, "the prompt still lists every tool");
        let one =
            with_choice(json!({"type": "function", "function": {"name": "terminal"}})).unwrap();
        assert_eq!(callable(&one), ["terminal"]);
    }

    #[test]
    fn a_tool_choice_naming_no_declared_tool_or_unreadable_is_refused() {
        let unknown = with_choice(json!({"type": "function", "function": {"name": "browse"}}));
        assert!(
            matches!(&unknown, Err(EngineError::Request(why)) if why.contains("`browse`")),
            "{unknown:?}"
        );
        for odd in [
            json!({"type": "allowed_tools", "allowed_tools": {"tools": []}}),
            json!({"type": "allowed_tools"}),
            json!({"type": "custom", "name": "x"}),
        ] {
            assert!(with_choice(odd.clone()).is_err(), "{odd}");
        }
    }
}
