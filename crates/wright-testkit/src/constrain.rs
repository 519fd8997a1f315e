//! How the emulated server treats a constrained request (`tool_choice: "required"`,
//! `response_format` with a JSON schema, Ollama's `format`): enforce it, take it and
//! ignore it (the default, as a server that does not know the field), or refuse it with
//! HTTP 400 as llama.cpp refuses a grammar together with tools. wright's constraint probe
//! (its one tool `wright_probe`, a prompt that asks for plain words) is answered the way
//! such a server would answer it; the script answers everything else.

use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::Json;
use serde_json::json;
use serde_json::Value;

/// What the emulated server does with one kind of constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Enforce {
    /// Takes the field and lets the model write what it likes.
    #[default]
    Ignores,
    /// Holds the model to it.
    Enforces,
    /// Answers HTTP 400 to any request that carries it.
    Refuses,
}

/// The emulated server's way with each constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Constraints {
    /// `tool_choice: "required"` with tools.
    pub tool_choice: Enforce,
    /// `response_format` `json_schema`, and Ollama's `format` on its own API.
    pub json_schema: Enforce,
}

impl Constraints {
    /// llama.cpp's llama-server with `--jinja`: both enforced.
    pub fn llama_cpp() -> Self {
        Self {
            tool_choice: Enforce::Enforces,
            json_schema: Enforce::Enforces,
        }
    }
}

/// Which constraints a request carries.
fn asked(request: &Value) -> (bool, bool) {
    let tool_choice = request["tool_choice"] == "required";
    let schema = request["response_format"]["type"] == "json_schema"
        || request.get("format").is_some_and(Value::is_object);
    (tool_choice, schema)
}

/// The 400 a request gets when it carries a constraint the server refuses.
pub(crate) fn refusal(constraints: &Constraints, request: &Value) -> Option<Response> {
    let (tool_choice, schema) = asked(request);
    let message = if tool_choice && constraints.tool_choice == Enforce::Refuses {
        "tool_choice \"required\" is not supported by this server"
    } else if schema && constraints.json_schema == Enforce::Refuses {
        "Cannot use custom grammar constraints with this request"
    } else {
        return None;
    };
    let body = json!({"error": {"code": 400, "message": message, "type": "invalid_request_error"}});
    Some((StatusCode::BAD_REQUEST, Json(body)).into_response())
}

/// wright's constraint probe: the probe tool with `tool_choice`, or a schema naming it.
pub(crate) fn is_probe(request: &Value) -> bool {
    let (tool_choice, schema) = asked(request);
    let schema_text = request
        .get("response_format")
        .or_else(|| request.get("format"))
        .map(Value::to_string)
        .unwrap_or_default();
    (tool_choice && crate::server::is_probe(request))
        || (schema && schema_text.contains("wright_probe"))
}

/// What the emulated model writes to the probe: text, and native calls (name, arguments).
pub(crate) fn probe_answer(
    constraints: &Constraints,
    request: &Value,
) -> (String, Vec<(String, String)>) {
    let (tool_choice, _) = asked(request);
    let words = ("The sky is blue on a clear day.".to_string(), Vec::new());
    let arguments = json!({"value": 7});
    if tool_choice {
        return match constraints.tool_choice {
            Enforce::Enforces => (
                String::new(),
                vec![("wright_probe".into(), arguments.to_string())],
            ),
            Enforce::Ignores | Enforce::Refuses => words,
        };
    }
    match constraints.json_schema {
        Enforce::Enforces => {
            let schema = request
                .get("response_format")
                .or_else(|| request.get("format"))
                .map(Value::to_string)
                .unwrap_or_default();
            let text = if schema.contains("\"reasoning\"") {
                json!({"reasoning": "The question asks for words; the schema asks for the call.",
                       "name": "wright_probe", "arguments": arguments})
            } else {
                json!({"name": "wright_probe", "arguments": arguments})
            };
            (text.to_string(), Vec::new())
        }
        Enforce::Ignores | Enforce::Refuses => words,
    }
}
