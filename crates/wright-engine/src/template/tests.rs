use super::*;
use serde_json::json;

const TEMPLATE: &str = "{% for m in messages %}<|{{ m.role }}|>{{ m.content | trim }}\n{% if m.tool_calls %}{% for c in m.tool_calls %}{{ c.function.arguments | tojson }}\n{% endfor %}{% endif %}{% endfor %}{% if tools %}{{ tools[0] | tojson }}\n{% endif %}{% if add_generation_prompt %}<|assistant|>{% endif %}";

#[test]
fn renders_calls_and_tools_as_python_json() {
    let template = ChatTemplate::new(TEMPLATE, "<s>", "</s>").unwrap();
    let messages = [
        json!({"role": "user", "content": "  hi  "}),
        json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "t", "arguments": {"b": 1, "a": "x\n\"é\u{1}"}}}
        ]}),
    ];
    let tools = [json!({"type": "function", "function": {"name": "t"}})];
    let text = template.render(&messages, &tools).unwrap();
    assert_eq!(
        text,
        "<|user|>hi\n<|assistant|>\n{\"b\": 1, \"a\": \"x\\n\\\"é\\u0001\"}\n{\"type\": \"function\", \"function\": {\"name\": \"t\"}}\n<|assistant|>"
    );
}

#[test]
fn indent_is_python_s() {
    let value = json!({"a": [1, {"b": null}], "c": {}});
    assert_eq!(
        python_json::indented(&value, 2),
        "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {}\n}"
    );
}

#[test]
fn raise_exception_is_an_error_that_says_why() {
    let template = ChatTemplate::new("{{ raise_exception('no system role') }}", "", "").unwrap();
    let err = template.render(&[], &[]).unwrap_err().to_string();
    assert!(err.contains("no system role"), "{err}");
}

#[test]
fn a_broken_template_is_refused_when_loaded() {
    assert!(ChatTemplate::new("{% for %}", "", "").is_err());
}

#[test]
fn dates_are_civil() {
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    assert_eq!(civil_from_days(20_454), (2026, 1, 1));
    assert_eq!(civil_from_days(19_782), (2024, 2, 29));
}

#[test]
fn floats_are_spelled_as_python_spells_them() {
    // The grammar makes the model write floats this way; re-rendering its call must give
    // the same text, or the next step's prompt would not start with the cached tokens.
    let value = serde_json::json!({"x": 1e16, "y": 0.00001, "z": 100.0, "n": 7, "m": -0.5});
    assert_eq!(
        to_python_json(&value),
        r#"{"x": 1e+16, "y": 1e-05, "z": 100.0, "n": 7, "m": -0.5}"#
    );
}
