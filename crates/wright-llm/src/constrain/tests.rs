use super::*;
use crate::probe::ServerKind;
use pretty_assertions::assert_eq;
use serde_json::json;

fn tools() -> Vec<Value> {
    vec![
        json!({"type": "function", "function": {"name": "terminal", "description": "Runs a command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}),
        json!({"type": "function", "function": {"name": "finish", "description": "Ends the task.",
            "parameters": {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}}}),
    ]
}

#[test]
fn what_each_server_kind_is_asked_per_its_documentation() {
    use Constraint::*;
    let table = [
        // (kind, native, on Ollama's own API) → candidate
        (ServerKind::LlamaCpp, true, false, Some(ToolChoice)),
        (ServerKind::LlamaCpp, false, false, Some(JsonSchema)),
        (ServerKind::Vllm, true, false, Some(ToolChoice)),
        (ServerKind::Vllm, false, false, Some(JsonSchema)),
        (ServerKind::Sglang, true, false, Some(ToolChoice)),
        (ServerKind::Sglang, false, false, Some(JsonSchema)),
        // LM Studio documents no tool_choice; its structured output is response_format.
        (ServerKind::LmStudio, true, false, None),
        (ServerKind::LmStudio, false, false, Some(JsonSchema)),
        // Ollama has no tool_choice; `format` on its own API, response_format on /v1.
        (ServerKind::Ollama, true, true, None),
        (ServerKind::Ollama, false, true, Some(OllamaFormat)),
        (ServerKind::Ollama, false, false, Some(JsonSchema)),
        (ServerKind::Unknown, true, false, Some(ToolChoice)),
        (ServerKind::Unknown, false, false, Some(JsonSchema)),
    ];
    for (kind, native, ollama_api, expected) in table {
        assert_eq!(
            candidate(kind, native, ollama_api),
            expected,
            "{kind:?} native={native}"
        );
    }
}

#[test]
fn the_schema_is_one_call_of_one_tool_reasoning_first() {
    let text = call_schema(&tools(), true);
    let schema: Value = serde_json::from_str(&text).expect("valid JSON");
    let branches = schema["oneOf"].as_array().expect("oneOf");
    assert_eq!(branches.len(), 2);
    assert_eq!(
        branches[0]["properties"]["name"],
        json!({"const": "terminal"})
    );
    assert_eq!(
        branches[0]["properties"]["arguments"],
        tools()[0]["function"]["parameters"]
    );
    assert_eq!(
        branches[1]["required"],
        json!(["reasoning", "name", "arguments"])
    );
    assert_eq!(
        branches[1]["properties"]["reasoning"],
        json!({"type": "string", "maxLength": REASONING_CHARS})
    );
    assert_eq!(branches[0]["additionalProperties"], json!(false));
    // The order the model writes the keys in is the order of `properties` in the text.
    let first = text.find("\"reasoning\"").expect("reasoning");
    let name = text.find("\"name\"").expect("name");
    let arguments = text.find("\"arguments\"").expect("arguments");
    assert!(first < name && name < arguments, "{text}");
}

#[test]
fn a_large_model_gets_no_reasoning_field() {
    let schema: Value = serde_json::from_str(&call_schema(&tools(), false)).expect("JSON");
    assert_eq!(schema["oneOf"][0]["required"], json!(["name", "arguments"]));
    assert_eq!(schema["oneOf"][0]["properties"].get("reasoning"), None);
}

#[test]
fn model_sizes_from_their_names() {
    for (name, small) in [
        ("qwen2.5-coder:1.5b", true),
        ("Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf", true),
        ("llama3.2:3b", true),
        ("/models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", true),
        ("qwen2.5-coder:14b", false),
        ("gpt-oss-20b", false),
        ("mixtral-8x7b", false),
        ("qwen3-30b-a3b", false),
        ("test-model", true),
        ("bge-m3", true),
    ] {
        assert_eq!(is_small_model(name), small, "{name}");
    }
}

#[test]
fn a_constrained_reply_is_read_whole_or_not_at_all() {
    let known = ["terminal", "finish"];
    assert_eq!(
        read_constrained_call(
            " {\"reasoning\": \"List the files first.\", \"name\": \"terminal\", \"arguments\": {\"command\": \"ls\"}}\n\n",
            &known
        ),
        Some(ConstrainedCall {
            reasoning: "List the files first.".into(),
            name: "terminal".into(),
            arguments: json!({"command": "ls"}),
        })
    );
    assert_eq!(
        read_constrained_call(
            "{\"name\": \"finish\", \"arguments\": {\"summary\": \"done\"}}",
            &known
        )
        .map(|call| call.name),
        Some("finish".to_string())
    );
    for other in [
        "Let me look: {\"name\": \"terminal\", \"arguments\": {}}",
        "{\"name\": \"rm_everything\", \"arguments\": {}}",
        "{\"name\": \"terminal\", \"arguments\": \"ls\"}",
        "{\"name\": \"terminal\", \"arguments\": {}, \"plan\": \"x\"}",
        "{\"reasoning\": 3, \"name\": \"terminal\", \"arguments\": {}}",
        "<tool_call>{\"name\": \"terminal\", \"arguments\": {}}</tool_call>",
        "{\"reasoning\": \"cut off",
    ] {
        assert_eq!(read_constrained_call(other, &known), None, "{other}");
    }
}

fn response(text: &str, calls: &[&str], finish: &str) -> crate::Response {
    crate::Response {
        text: text.into(),
        tool_calls: calls
            .iter()
            .map(|name| crate::ToolCall::function("c", *name, "{\"value\": 7}".into()))
            .collect(),
        finish_reason: Some(finish.into()),
        ..crate::Response::default()
    }
}

#[test]
fn a_probe_reply_in_words_is_a_constraint_ignored() {
    use Constraint::*;
    let cases = [
        (ToolChoice, response("", &["wright_probe"], "tool_calls"), Enforcement::Enforced),
        (ToolChoice, response("The sky is blue.", &[], "stop"), Enforcement::Ignored),
        // What llama.cpp without a tool-call grammar sent back in the issue's measurement.
        (
            ToolChoice,
            response("```json\n{\"name\": \"wright_probe\", \"arguments\": {\"value\": 7}}\n```\n\n\n", &[], "length"),
            Enforcement::Ignored,
        ),
        (
            JsonSchema,
            response("{\"reasoning\": \"Asked about the sky.\", \"name\": \"wright_probe\", \"arguments\": {\"value\": 7}}", &[], "stop"),
            Enforcement::Enforced,
        ),
        (
            JsonSchema,
            response("{ \"reasoning\": \"The question asks about the colour of the sky on a clear", &[], "length"),
            Enforcement::Enforced,
        ),
        (JsonSchema, response("The sky is blue.", &[], "stop"), Enforcement::Ignored),
        (
            OllamaFormat,
            response("{\"name\": \"wright_probe\", \"arguments\": {\"value\": 7}}", &[], "stop"),
            Enforcement::Enforced,
        ),
    ];
    for (kind, reply, expected) in cases {
        assert_eq!(judge(kind, &reply), expected, "{kind:?} {reply:?}");
    }
}

#[test]
fn the_constraint_is_in_every_request_and_the_prefix_holds() {
    use crate::ChatMessage;
    let bodies = |kind: Option<Constraint>, native: bool| {
        let mut config = crate::ClientConfig::new("http://127.0.0.1:1/v1", "m");
        config.constraint = kind.map(|kind| ActiveConstraint::new(kind, &tools(), true));
        let client = crate::Client::new(config).expect("client");
        let request_tools = if native { tools() } else { Vec::new() };
        let mut messages = vec![
            ChatMessage::System {
                content: "sys".into(),
            },
            ChatMessage::User {
                content: "task".into(),
            },
        ];
        let first = client.request_body(&messages, &request_tools);
        messages.push(ChatMessage::Assistant {
            content: "ok".into(),
            tool_calls: Vec::new(),
        });
        let second = client.request_body(&messages, &request_tools);
        (first, second)
    };
    for (kind, native, field) in [
        (Some(Constraint::ToolChoice), true, Some(json!("required"))),
        (
            Some(Constraint::JsonSchema),
            false,
            Some(
                json!({"type": "json_schema", "json_schema": {"name": "tool_call", "strict": true,
                "schema": serde_json::from_str::<Value>(&call_schema(&tools(), true)).expect("JSON")}}),
            ),
        ),
        (None, true, None),
    ] {
        let (first, second) = bodies(kind, native);
        // Request N without its closing `]}` is a byte prefix of request N+1.
        assert!(second.starts_with(&first[..first.len() - 2]), "{kind:?}");
        let body: Value = serde_json::from_slice(&first).expect("JSON");
        let key = if native {
            "tool_choice"
        } else {
            "response_format"
        };
        assert_eq!(body.get(key).cloned(), field, "{kind:?}");
    }
    // A summary request (no tools) never carries tool_choice.
    let mut config = crate::ClientConfig::new("http://127.0.0.1:1/v1", "m");
    config.constraint = Some(ActiveConstraint::new(
        Constraint::ToolChoice,
        &tools(),
        true,
    ));
    let client = crate::Client::new(config).expect("client");
    let body: Value = serde_json::from_slice(&client.request_body(&[], &[])).expect("JSON");
    assert_eq!(body.get("tool_choice"), None);
}

/// An in-process model that is never asked anything: the requests are only built.
struct Unasked;

impl crate::in_process::InProcessModel for Unasked {
    fn complete<'a>(
        &'a self,
        _body: &'a [u8],
        _on_delta: &'a mut (dyn FnMut(crate::StreamDelta) + Send),
    ) -> crate::in_process::Reply<'a> {
        Box::pin(async {
            Err(crate::LlmError::Engine {
                model: "m".into(),
                message: "not asked".into(),
            })
        })
    }

    fn info(&self) -> crate::probe::ServerInfo {
        crate::probe::ServerInfo {
            kind: ServerKind::Embedded,
            version: None,
            models: vec!["m".into()],
            context: None,
            processor: None,
            allocated_context: None,
        }
    }
}

#[test]
fn a_request_held_away_from_tools_names_the_others_only_on_the_embedded_engine() {
    use crate::ChatMessage;
    let messages = [ChatMessage::User {
        content: "task".into(),
    }];
    let constrained = |mut config: crate::ClientConfig| {
        config.constraint = Some(ActiveConstraint::new(
            Constraint::ToolChoice,
            &tools(),
            false,
        ));
        config
    };
    let engine = crate::Client::in_process(
        constrained(crate::ClientConfig::new("http://127.0.0.1:1/v1", "m")),
        std::sync::Arc::new(Unasked),
    );
    let narrowed = engine
        .narrowed_constraint(&["terminal"])
        .expect("the engine narrows tool_choice");
    let mut held = engine.clone();
    held.set_constraint(Some(narrowed));
    let body: Value = serde_json::from_slice(&held.request_body(&messages, &tools())).unwrap();
    assert_eq!(
        body["tool_choice"],
        json!({"type": "allowed_tools", "allowed_tools": {"mode": "required",
            "tools": [{"type": "function", "function": {"name": "finish"}}]}})
    );
    // The prompt is the same: every tool is still listed.
    let usual: Value = serde_json::from_slice(&engine.request_body(&messages, &tools())).unwrap();
    assert_eq!(body["tools"], usual["tools"]);
    assert_eq!(usual["tool_choice"], json!("required"));
    // Nothing is left: no narrowing.
    assert!(engine
        .narrowed_constraint(&["terminal", "finish"])
        .is_none());
    // A request that does not offer the allowed tool (a resumed conversation's tools)
    // names nothing it does not offer: plain "required".
    let only_terminal = [tools()[0].clone()];
    let body: Value =
        serde_json::from_slice(&held.request_body(&messages, &only_terminal)).unwrap();
    assert_eq!(body["tool_choice"], json!("required"));
    // A server is never sent the field: it might refuse it or read it as another prompt.
    let server = crate::Client::new(constrained(crate::ClientConfig::new(
        "http://127.0.0.1:1/v1",
        "m",
    )))
    .unwrap();
    assert!(server.narrowed_constraint(&["terminal"]).is_none());
}
