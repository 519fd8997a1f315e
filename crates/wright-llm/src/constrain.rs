//! Constrained decoding: asking the server's sampler to produce nothing but a tool call,
//! since every reply of wright's `run` loop is one (`finish` included).
//!
//! What each server takes, from its own documentation (the probe then checks what it
//! really enforces, since accepting a field is not enforcing it):
//! - llama.cpp's llama-server (`tools/server/README.md`, `docs/function-calling.md`):
//!   `tools` need `--jinja`; `tool_choice: "required"` makes its chat handler's grammar
//!   apply from the first token instead of after a trigger word; `response_format`
//!   `{"type": "json_schema", "json_schema": {"schema": …}}` (or `json_object` with
//!   `schema`) constrains the reply to a JSON schema. A grammar together with `tools`
//!   (and `tool_choice` other than `none`) is refused: HTTP 400 "Cannot use custom grammar
//!   constraints with tools." (500 in older builds).
//! - vLLM (`docs/features/tool_calling.md`): `tool_choice: "required"` (vLLM ≥ 0.8.3) and
//!   named function calling go through its structured-outputs backend, "guaranteed to
//!   generate one or more tool calls"; `auto` is constrained only for tools marked
//!   `strict: true`; `response_format` `json_schema` is structured output too.
//! - SGLang (`docs/advanced_features/tool_parser.md`, "Tool Choice Mode"):
//!   `tool_choice: "required"` and named tool choice are enforced with an EBNF grammar
//!   (fully with the default xgrammar backend); `response_format` `json_schema` is its
//!   structured output.
//! - LM Studio (`1_developer/3_openai-compat/structured-output.md`, `tools.md`):
//!   `response_format` `{"type": "json_schema", "json_schema": {…}}` (llama.cpp grammars
//!   for GGUF, Outlines for MLX); `tool_choice` is not among its documented parameters,
//!   so nothing is tried with native tools.
//! - Ollama (`docs/api.md`, "Generate a chat completion"): no `tool_choice`; `format`
//!   takes a JSON schema on its native `/api/chat`.
//!
//! Guarantees: the request field a constraint adds is the same on every request of a
//! conversation (built once, so the byte-prefix invariant holds); the schema asks for one
//! call of one of the tools offered (`oneOf`, one object per tool, its name a `const`),
//! with a short `reasoning` first when the model is small.

use crate::probe::ServerKind;
use serde::Deserialize;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Map;
use serde_json::Value;

/// How a reply is held to being a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Constraint {
    /// Native tool calling with `tool_choice: "required"`.
    ToolChoice,
    /// Text mode: `response_format` with a JSON schema over the calls.
    JsonSchema,
    /// Text mode on Ollama's native API: `format` with the same schema.
    OllamaFormat,
}

impl Constraint {
    /// The request field, as people read it in the header and in doctor.
    pub fn describe(self) -> &'static str {
        match self {
            Constraint::ToolChoice => "tool_choice \"required\"",
            Constraint::JsonSchema => "response_format json_schema",
            Constraint::OllamaFormat => "Ollama format (a JSON schema)",
        }
    }

    /// The request field it sets (a profile's `extra` setting it wins: nothing is tried).
    pub fn field(self) -> &'static str {
        match self {
            Constraint::ToolChoice => "tool_choice",
            Constraint::JsonSchema => "response_format",
            Constraint::OllamaFormat => "format",
        }
    }
}

/// The constraint worth trying on this server kind in this tool-calling mode, per its
/// documentation (see the module's list); `ollama_api`: the client talks to Ollama's
/// native `/api/chat`.
pub fn candidate(kind: ServerKind, native: bool, ollama_api: bool) -> Option<Constraint> {
    match (kind, native) {
        (ServerKind::LlamaCpp | ServerKind::Vllm | ServerKind::Sglang, true) => {
            Some(Constraint::ToolChoice)
        }
        // An unknown OpenAI-compatible server may honour the OpenAI field; the probe says.
        (ServerKind::Unknown, true) => Some(Constraint::ToolChoice),
        // The engine holds every reply with tools to a call with its own grammar.
        (ServerKind::Embedded, _) => Some(Constraint::ToolChoice),
        (ServerKind::LmStudio | ServerKind::Ollama, true) => None,
        (ServerKind::Ollama, false) if ollama_api => Some(Constraint::OllamaFormat),
        (
            ServerKind::LlamaCpp
            | ServerKind::Vllm
            | ServerKind::Sglang
            | ServerKind::LmStudio
            | ServerKind::Ollama
            | ServerKind::Unknown,
            false,
        ) => Some(Constraint::JsonSchema),
    }
}

/// The longest `reasoning` a small model may write before its call, in characters: room
/// for a thought, not for an essay that eats the reply's tokens.
pub const REASONING_CHARS: u32 = 400;

/// Models above this many billion parameters reason well enough without room for it.
const SMALL_MODEL_BILLIONS: f64 = 8.0;

/// Whether `model` (its name) is small enough to be given room for a short reasoning
/// before its call: a size in its name (`qwen2.5-coder:1.5b`, `Qwen2.5-7B-Instruct`,
/// `gpt-oss-20b`) up to 8B; a name without a size counts as small, as most local models
/// are.
pub fn is_small_model(model: &str) -> bool {
    model_billions(model).is_none_or(|size| size <= SMALL_MODEL_BILLIONS)
}

/// Whether `model`'s name says it has 8B parameters or fewer; `None` when it names no
/// size (unlike `is_small_model`, which counts those as small).
pub fn size_says_small(model: &str) -> Option<bool> {
    model_billions(model).map(|size| size <= SMALL_MODEL_BILLIONS)
}

/// Whether `model`'s name says it has 8B parameters or less (`qwen2.5-coder-1.5b`); a
/// name without a size is not known to be small.
pub fn is_known_small_model(model: &str) -> bool {
    size_says_small(model) == Some(true)
}

/// The parameter count in a model name, in billions (`1.5b` → 1.5; `8x7b` → 56).
fn model_billions(model: &str) -> Option<f64> {
    let lower = model.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut best = None;
    for (at, _) in lower.match_indices('b') {
        // The size is a number right before the `b`, not part of a longer word after it.
        if bytes.get(at + 1).is_some_and(u8::is_ascii_alphanumeric) {
            continue;
        }
        let start = lower[..at]
            .rfind(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'x'))
            .map_or(0, |i| i + 1);
        let digits = &lower[start..at];
        if digits.is_empty() || start > 0 && bytes[start - 1].is_ascii_alphabetic() {
            continue;
        }
        let size = digits
            .split('x')
            .map(|part| part.parse::<f64>().ok())
            .try_fold(1.0, |acc, part| part.map(|p| acc * p));
        if let Some(size) = size.filter(|s| *s > 0.0) {
            best = Some(size);
        }
    }
    best
}

/// The JSON schema of one call of one of `tools` (OpenAI function schemas), as text with
/// its keys in the order the model must write them: `reasoning` (when asked for), then
/// `name`, then `arguments`. Grammar builders follow the order of `properties`, and
/// serde_json's maps would sort it.
pub fn call_schema(tools: &[Value], reasoning: bool) -> String {
    call_schema_of(&CallShape::of_tools(tools), reasoning)
}

/// One shape a call may take: a tool's name and the schema of its arguments, as JSON
/// text (so its keys keep the order they should be written in). A tool with several
/// commands may have one shape per command, each requiring what that command needs.
#[derive(Debug, Clone, PartialEq)]
pub struct CallShape {
    pub name: String,
    pub arguments: String,
}

impl CallShape {
    /// One shape per tool, its arguments' schema as the tool declares it.
    pub fn of_tools(tools: &[Value]) -> Vec<CallShape> {
        tools
            .iter()
            .filter_map(|tool| {
                let function = tool.get("function")?;
                let name = function.get("name")?.as_str()?;
                let parameters = function
                    .get("parameters")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new()));
                Some(CallShape {
                    name: name.to_string(),
                    arguments: parameters.to_string(),
                })
            })
            .collect()
    }
}

/// `call_schema` over explicit shapes: one branch of the `oneOf` per shape.
pub fn call_schema_of(shapes: &[CallShape], reasoning: bool) -> String {
    let branches: Vec<String> = shapes
        .iter()
        .map(|shape| {
            let parameters = &shape.arguments;
            let name = Value::String(shape.name.clone());
            let (reasoning_property, required) = if reasoning {
                (
                    format!(
                        "\"reasoning\":{{\"type\":\"string\",\"maxLength\":{REASONING_CHARS}}},"
                    ),
                    "[\"reasoning\",\"name\",\"arguments\"]",
                )
            } else {
                (String::new(), "[\"name\",\"arguments\"]")
            };
            format!(
                "{{\"type\":\"object\",\"properties\":{{{reasoning_property}\"name\":{{\"const\":{name}}},\"arguments\":{parameters}}},\"required\":{required},\"additionalProperties\":false}}"
            )
        })
        .collect();
    format!("{{\"oneOf\":[{}]}}", branches.join(","))
}

/// A constraint ready to go into requests: what it is, and the schema text for the
/// kinds that carry one, built once per conversation.
#[derive(Debug, Clone)]
pub struct ActiveConstraint {
    pub kind: Constraint,
    schema: Option<Box<RawValue>>,
    reasoning: bool,
    /// The calls the schema allows, to narrow it for one request (see `without`).
    shapes: Vec<CallShape>,
    /// `tool_choice` narrowed to these tools for one request (see `only_tools`).
    allowed: Option<Vec<String>>,
}

impl ActiveConstraint {
    /// `tools`: the schemas of every tool the model may call; `reasoning`: leave room
    /// for a short reasoning before the call (see `is_small_model`).
    pub fn new(kind: Constraint, tools: &[Value], reasoning: bool) -> Self {
        Self::of_shapes(kind, &CallShape::of_tools(tools), reasoning)
    }

    /// As `new`, over explicit call shapes (see `CallShape`).
    pub fn of_shapes(kind: Constraint, shapes: &[CallShape], reasoning: bool) -> Self {
        let schema = match kind {
            Constraint::ToolChoice => None,
            Constraint::JsonSchema | Constraint::OllamaFormat => {
                RawValue::from_string(call_schema_of(shapes, reasoning)).ok()
            }
        };
        Self {
            kind,
            schema,
            reasoning: reasoning && kind != Constraint::ToolChoice,
            shapes: shapes.to_vec(),
            allowed: None,
        }
    }

    /// The same constraint, allowing no call of the tools `left_out`: for one request whose
    /// reply must be something else. Only a schema can say that without changing the
    /// prompt (the tools a request lists are part of the cached prefix), so `None` for
    /// `tool_choice`, and when nothing would be left.
    pub fn without(&self, left_out: &[&str]) -> Option<Self> {
        let shapes: Vec<CallShape> = self
            .shapes
            .iter()
            .filter(|shape| !left_out.contains(&shape.name.as_str()))
            .cloned()
            .collect();
        if self.schema.is_none() || shapes.is_empty() || shapes.len() == self.shapes.len() {
            return None;
        }
        Some(Self::of_shapes(self.kind, &shapes, self.reasoning))
    }

    /// `tool_choice` allowing no call of the tools `left_out`, by naming the others
    /// (OpenAI's `allowed_tools`): the prompt keeps every tool. Only for a back end known
    /// to honour it without re-reading the prompt — wright's embedded engine, which
    /// narrows only its grammar; a server might refuse the field, or treat it as another
    /// prompt. `None` unless this is `tool_choice`, or when nothing would be left.
    pub fn only_tools(&self, left_out: &[&str]) -> Option<Self> {
        if self.kind != Constraint::ToolChoice {
            return None;
        }
        let mut names: Vec<String> = Vec::new();
        for shape in &self.shapes {
            if !left_out.contains(&shape.name.as_str()) && !names.contains(&shape.name) {
                names.push(shape.name.clone());
            }
        }
        let all = self
            .shapes
            .iter()
            .filter(|s| !names.contains(&s.name))
            .count()
            == 0;
        if names.is_empty() || all {
            return None;
        }
        Some(Self {
            allowed: Some(names),
            ..self.clone()
        })
    }

    /// The `tool_choice` field of a request offering `tools`: `"required"`, or the tools
    /// this request may call among those offered. A name the request does not offer (a
    /// resumed conversation's tools may differ from today's toolbox) is left out, and
    /// when that leaves none, or all, the field is plain `"required"`.
    pub(crate) fn tool_choice(&self, tools: &[Value]) -> Value {
        let offered = |name: &String| {
            tools
                .iter()
                .any(|tool| tool.pointer("/function/name").and_then(Value::as_str) == Some(name))
        };
        let allowed: Vec<&String> = self
            .allowed
            .iter()
            .flatten()
            .filter(|name| offered(name))
            .collect();
        if allowed.is_empty() || allowed.len() == tools.len() {
            return Value::String("required".into());
        }
        let named: Vec<Value> = allowed
            .iter()
            .map(|name| serde_json::json!({"type": "function", "function": {"name": name}}))
            .collect();
        serde_json::json!({
            "type": "allowed_tools",
            "allowed_tools": {"mode": "required", "tools": named}
        })
    }

    /// Whether replies are a bare JSON object (`reasoning`?, `name`, `arguments`) rather
    /// than the model's own call format: what the prompt must then show.
    pub fn bare_json(&self) -> bool {
        self.schema.is_some()
    }

    /// Whether that object starts with a `reasoning` string.
    pub fn reasoning(&self) -> bool {
        self.reasoning
    }

    pub(crate) fn schema(&self) -> Option<&RawValue> {
        self.schema.as_deref()
    }
}

/// `response_format` as OpenAI's structured outputs spell it (what llama.cpp, vLLM,
/// SGLang, LM Studio and Ollama's OpenAI endpoint read).
#[derive(Debug, Clone, Serialize)]
pub struct ResponseFormat<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub json_schema: JsonSchemaFormat<'a>,
}

#[derive(Debug, Clone, Serialize)]
pub struct JsonSchemaFormat<'a> {
    pub name: &'static str,
    pub strict: bool,
    pub schema: &'a RawValue,
}

impl<'a> ResponseFormat<'a> {
    pub(crate) fn of(schema: &'a RawValue) -> Self {
        Self {
            kind: "json_schema",
            json_schema: JsonSchemaFormat {
                name: "tool_call",
                strict: true,
                schema,
            },
        }
    }
}

/// One call read from a reply written under the JSON-schema constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstrainedCall {
    pub reasoning: String,
    pub name: String,
    pub arguments: Value,
}

/// The reply when it is exactly what the schema asks for: one JSON object with `name` (a
/// tool in `known`), an `arguments` object and an optional `reasoning` string, nothing
/// else around it but whitespace. Anything else is for the text-call reader.
pub fn read_constrained_call(text: &str, known: &[&str]) -> Option<ConstrainedCall> {
    let trimmed = text.trim();
    if !trimmed.starts_with('{') {
        return None;
    }
    let Value::Object(map) = serde_json::from_str::<Value>(trimmed).ok()? else {
        return None;
    };
    if map
        .keys()
        .any(|key| !matches!(key.as_str(), "reasoning" | "name" | "arguments"))
    {
        return None;
    }
    let name = map.get("name")?.as_str()?;
    if !known.contains(&name) {
        return None;
    }
    let arguments = match map.get("arguments")? {
        object @ Value::Object(_) => object.clone(),
        _ => return None,
    };
    let reasoning = match map.get("reasoning") {
        None => String::new(),
        Some(Value::String(text)) => text.trim().to_string(),
        Some(_) => return None,
    };
    Some(ConstrainedCall {
        reasoning,
        name: name.to_string(),
        arguments,
    })
}

/// What a constraint probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enforcement {
    /// The reply held to the constraint although the prompt asked for plain words.
    Enforced,
    /// The server took the field and the model wrote what it liked.
    Ignored,
    /// The server refused the request (its message).
    Refused(String),
}

impl crate::Client {
    /// Whether the server enforces `kind`: one small request whose prompt asks for plain
    /// words, sent with the constraint over a one-tool set. Only a server that holds the
    /// sampler to the constraint answers with the call; one that takes the field and
    /// ignores it answers in words; one that does not take it refuses the request.
    pub async fn probe_constraint(
        &self,
        kind: Constraint,
        reasoning: bool,
    ) -> Result<Enforcement, crate::LlmError> {
        let tools = [serde_json::json!({"type": "function", "function": {
            "name": crate::PROBE_TOOL,
            "description": "Records a number.",
            "parameters": {"type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"]}
        }})];
        let mut config = self.config().clone();
        config.stream = false;
        config.temperature = Some(0.0);
        // Room for the reasoning before the call, so a cut is not taken for words.
        config.max_tokens = Some(160);
        config.constraint = Some(ActiveConstraint::new(kind, &tools, reasoning));
        let probe = self.with_config(config);
        let messages = [
            crate::ChatMessage::System {
                content: "You answer questions in plain words.".into(),
            },
            crate::ChatMessage::User {
                content: "Do not call a tool and do not write JSON: answer in one sentence, what colour is the sky on a clear day?".into(),
            },
        ];
        let request_tools: &[Value] = match kind {
            Constraint::ToolChoice => &tools,
            Constraint::JsonSchema | Constraint::OllamaFormat => &[],
        };
        match probe
            .complete(&messages, request_tools, "constraint-probe", &mut |_| {})
            .await
        {
            Ok(response) => Ok(judge(kind, &response)),
            Err(err) => match err.refusal() {
                Some(message) => Ok(Enforcement::Refused(message.to_string())),
                None => Err(err),
            },
        }
    }
}

/// What a probe's reply says of the constraint.
fn judge(kind: Constraint, response: &crate::Response) -> Enforcement {
    let held = match kind {
        Constraint::ToolChoice => response
            .tool_calls
            .iter()
            .any(|call| call.function.name == crate::PROBE_TOOL),
        Constraint::JsonSchema | Constraint::OllamaFormat => {
            read_constrained_call(&response.text, &[crate::PROBE_TOOL]).is_some()
                || (response.finish_reason.as_deref() == Some("length")
                    && starts_like_the_schema(&response.text))
        }
    };
    match held {
        true => Enforcement::Enforced,
        false => Enforcement::Ignored,
    }
}

/// A reply cut by the token cap while still in the schema's first key: words would not
/// start so.
fn starts_like_the_schema(text: &str) -> bool {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    compact.starts_with("{\"reasoning\":\"") || compact.starts_with("{\"name\":\"")
}

#[cfg(test)]
mod tests;
