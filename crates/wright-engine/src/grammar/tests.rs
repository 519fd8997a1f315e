//! The grammars are checked by parsing them with a small GBNF reader written here (it accepts
//! only what the module promises to emit: one rule per line, literals, character classes, rule
//! references and `|`) and running a memoizing matcher over candidate replies.

use serde_json::{json, Value};

use super::*;
use crate::template::py_float;

mod containers;
mod gbnf;
mod numbers;
mod strings;

use gbnf::{parse, Grammar};

const LIMITS: Limits = Limits {
    reasoning_chars: 0,
    string_chars: 64,
    array_items: 8,
    depth: 4,
};

// ---------------------------------------------------------------- helpers

fn tool(name: &str, parameters: Value) -> Value {
    json!({"type": "function", "function": {"name": name, "description": "d", "parameters": parameters}})
}

/// The tool set of a coding agent, as the engine will see it.
fn coding_tools() -> Vec<Value> {
    vec![
        tool(
            "terminal",
            json!({"type": "object", "properties": {
                "command": {"type": "string"}, "timeout": {"type": "integer"}},
                "required": ["command"]}),
        ),
        tool(
            "file_editor",
            json!({"type": "object", "properties": {
                "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert"]},
                "path": {"type": "string"},
                "file_text": {"type": "string"},
                "old_str": {"type": "string"},
                "new_str": {"type": "string"},
                "insert_line": {"type": "integer"},
                "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}},
                "required": ["command", "path"]}),
        ),
        tool(
            "finish",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
        ),
        tool(
            "grep",
            json!({"type": "object", "properties": {
                "pattern": {"type": "string"}, "path": {"type": "string"}, "include": {"type": "string"}},
                "required": ["pattern"]}),
        ),
    ]
}

fn build(tools: &[Value], format: CallFormat, limits: &Limits) -> Grammar {
    let text = tool_call_grammar(tools, format, limits).expect("a grammar");
    let grammar = parse(&text);
    assert_eq!(
        grammar.unreachable_rules(),
        Vec::<&str>::new(),
        "in:\n{text}"
    );
    grammar
}

fn hermes(name: &str, arguments: &str) -> String {
    format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {arguments}}}\n</tool_call>")
}

/// A grammar for one tool `t` with a single property `v` of the given schema, and how a call
/// with `v` set to a raw JSON text reads.
fn one_value(schema: Value, required: bool, limits: &Limits) -> Grammar {
    let required = if required { json!(["v"]) } else { json!([]) };
    let parameters = json!({"type": "object", "properties": {"v": schema}, "required": required});
    build(&[tool("t", parameters)], CallFormat::Hermes, limits)
}

fn with_v(raw: &str) -> String {
    hermes("t", &format!("{{\"v\": {raw}}}"))
}

fn quoted(body: &str) -> String {
    with_v(&format!("\"{body}\""))
}

// ---------------------------------------------------------------- the realistic tool set

#[test]
fn coding_tools_accept_canonical_calls() {
    let grammar = build(&coding_tools(), CallFormat::Hermes, &LIMITS);
    for (name, arguments) in [
        ("terminal", r#"{"command": "ls -la"}"#),
        ("terminal", r#"{"command": "sleep 5", "timeout": 30}"#),
        (
            "file_editor",
            r#"{"command": "view", "path": "src/main.rs"}"#,
        ),
        (
            "file_editor",
            r#"{"command": "view", "path": "a.rs", "view_range": [1, -1]}"#,
        ),
        (
            "file_editor",
            r#"{"command": "str_replace", "path": "a", "old_str": "x", "new_str": "y"}"#,
        ),
        (
            "file_editor",
            r#"{"command": "create", "path": "a", "file_text": "fn main() {}\n"}"#,
        ),
        (
            "file_editor",
            r#"{"command": "insert", "path": "a", "new_str": "z", "insert_line": 3}"#,
        ),
        ("finish", r#"{"message": "done"}"#),
        ("grep", r#"{"pattern": "fn \\w+", "include": "*.rs"}"#),
        (
            "grep",
            r#"{"pattern": "x", "path": ".", "include": "*.rs"}"#,
        ),
    ] {
        assert!(
            grammar.accepts(&hermes(name, arguments)),
            "{name} {arguments}"
        );
    }
}

#[test]
fn coding_tools_reject_anything_but_one_canonical_call() {
    let grammar = build(&coding_tools(), CallFormat::Hermes, &LIMITS);
    for (name, arguments) in [
        // whitespace other than Python's separators
        ("terminal", r#"{"command":"ls"}"#),
        ("terminal", r#"{ "command": "ls"}"#),
        ("terminal", r#"{"command": "ls" }"#),
        ("terminal", r#"{"command" : "ls"}"#),
        ("terminal", "{\"command\": \"ls\",\n\"timeout\": 3}"),
        // members out of the declared order, missing, unknown or repeated
        ("terminal", r#"{"timeout": 3, "command": "ls"}"#),
        ("terminal", r#"{"timeout": 3}"#),
        ("terminal", r#"{}"#),
        ("terminal", r#"{"command": "ls", "cwd": "/"}"#),
        ("terminal", r#"{"command": "ls", "command": "ls"}"#),
        ("file_editor", r#"{"path": "a", "command": "view"}"#),
        // wrong types and values
        ("terminal", r#"{"command": 5}"#),
        ("terminal", r#"{"command": "ls", "timeout": "3"}"#),
        ("terminal", r#"{"command": "ls", "timeout": 3.5}"#),
        ("file_editor", r#"{"command": "delete", "path": "a"}"#),
        (
            "file_editor",
            r#"{"command": "view", "path": "a", "view_range": [1]}"#,
        ),
        (
            "file_editor",
            r#"{"command": "view", "path": "a", "view_range": [1, 2, 3]}"#,
        ),
        // unknown tool
        ("shell", r#"{"command": "ls"}"#),
    ] {
        assert!(
            !grammar.accepts(&hermes(name, arguments)),
            "{name} {arguments}"
        );
    }
    let call = hermes("finish", r#"{"message": "done"}"#);
    assert!(grammar.accepts(&call));
    for wrong in [
        format!("{call}\n"),
        format!("{call}{call}"),
        format!("ok {call}"),
        call.replace("<tool_call>\n", "<tool_call>"),
        call.replace("\"name\": ", "\"name\":"),
    ] {
        assert!(!grammar.accepts(&wrong), "{wrong:?}");
    }
}

#[test]
fn json_format_frames_the_call_with_a_reasoning_member() {
    let limits = Limits {
        reasoning_chars: 40,
        ..LIMITS
    };
    let grammar = build(&coding_tools(), CallFormat::Json, &limits);
    let call = r#""name": "finish", "arguments": {"message": "done"}"#;
    assert!(grammar.accepts(&format!(r#"{{"reasoning": "all tests pass", {call}}}"#)));
    assert!(grammar.accepts(&format!(r#"{{"reasoning": "", {call}}}"#)));
    assert!(grammar.accepts(&format!(r#"{{"reasoning": "line\none \"q\"", {call}}}"#)));
    assert!(
        !grammar.accepts(&format!("{{{call}}}")),
        "the reasoning member is required"
    );
    let long = "x".repeat(41);
    assert!(!grammar.accepts(&format!(r#"{{"reasoning": "{long}", {call}}}"#)));

    let grammar = build(&coding_tools(), CallFormat::Json, &LIMITS);
    assert!(grammar.accepts(&format!("{{{call}}}")));
    assert!(!grammar.accepts(&format!(r#"{{"reasoning": "", {call}}}"#)));
}

#[test]
fn hermes_reasoning_is_bounded_and_free_of_angle_brackets() {
    let limits = Limits {
        reasoning_chars: 50,
        ..LIMITS
    };
    let grammar = build(&coding_tools(), CallFormat::Hermes, &limits);
    let call = hermes("finish", r#"{"message": "done"}"#);
    assert!(grammar.accepts(&call));
    assert!(grammar.accepts(&format!("Everything passes, so I finish.\n{call}")));
    assert!(grammar.accepts(&format!("{}{call}", "é".repeat(50))));
    assert!(!grammar.accepts(&format!("{}{call}", "é".repeat(51))));
    assert!(!grammar.accepts(&format!("a < b\n{call}")));

    let grammar = build(&coding_tools(), CallFormat::Hermes, &LIMITS);
    assert!(
        !grammar.accepts(&format!("x{call}")),
        "reasoning_chars 0 allows no reasoning"
    );
}

// ---------------------------------------------------------------- strings
// ---------------------------------------------------------------- limits and failures

#[test]
fn parts_beyond_the_limits_fall_back_or_fail() {
    let limits = Limits {
        depth: 2,
        string_chars: 10,
        ..LIMITS
    };
    // v is level 2, v.x would be level 3: as an optional member it is left out.
    let inner = json!({"type": "object", "properties": {"y": {"type": "integer"}}});
    let grammar = one_value(json!({"properties": {"x": inner}}), true, &limits);
    assert!(grammar.accepts(&with_v("{}")));
    assert!(!grammar.accepts(&with_v(r#"{"x": {}}"#)));
    assert!(!grammar.accepts(&with_v(r#"{"x": {"y": 1}}"#)));
    // As a required one it is an error that names the place.
    let schema = json!({"properties": {"x": {"type": "array"}}, "required": ["x"]});
    let parameters = json!({"properties": {"v": schema}, "required": ["v"]});
    match tool_call_grammar(&[tool("t", parameters)], CallFormat::Hermes, &limits) {
        Err(GrammarError::TooDeep { tool, path, depth }) => {
            assert_eq!(
                (tool.as_str(), path.as_str(), depth),
                ("t", "arguments.v.x", 2)
            );
        }
        other => panic!("{other:?}"),
    }
    // A minimum length above the bound: optional is left out, required is an error.
    let grammar = one_value(json!({"type": "string", "minLength": 11}), false, &limits);
    assert!(grammar.accepts(&hermes("t", "{}")));
    assert!(!grammar.accepts(&quoted(&"a".repeat(11))));
    let parameters =
        json!({"properties": {"v": {"type": "string", "minLength": 11}}, "required": ["v"]});
    let error = tool_call_grammar(&[tool("t", parameters)], CallFormat::Json, &limits);
    assert!(
        matches!(error, Err(GrammarError::Unsatisfiable { ref path, .. }) if path == "arguments.v"),
        "{error:?}"
    );
    // An anyOf keeps the branches that fit; an array whose items cannot fit stays empty.
    let schema = json!({"anyOf": [{"type": "string", "minLength": 11}, {"type": "integer"}]});
    let grammar = one_value(schema, true, &limits);
    assert!(grammar.accepts(&with_v("3")));
    assert!(!grammar.accepts(&quoted("")));
    let schema = json!({"type": "array", "items": {"type": "string", "minLength": 11}});
    let grammar = one_value(schema, true, &limits);
    assert!(grammar.accepts(&with_v("[]")));
    assert!(!grammar.accepts(&with_v(r#"[""]"#)));
}

#[test]
fn invalid_input_is_a_typed_error() {
    let good = tool("t", json!({}));
    let run =
        |tools: &[Value], limits: &Limits| tool_call_grammar(tools, CallFormat::Hermes, limits);
    assert_eq!(run(&[], &LIMITS), Err(GrammarError::NoTools));
    let zero = Limits { depth: 0, ..LIMITS };
    assert!(matches!(
        run(std::slice::from_ref(&good), &zero),
        Err(GrammarError::InvalidLimits(_))
    ));
    let huge = Limits {
        depth: MAX_DEPTH + 1,
        ..LIMITS
    };
    assert!(matches!(
        run(std::slice::from_ref(&good), &huge),
        Err(GrammarError::InvalidLimits(_))
    ));
    for (bad, index) in [
        (json!("terminal"), 1),
        (json!({"type": "retrieval", "function": {"name": "x"}}), 1),
        (json!({"type": "function"}), 1),
        (json!({"type": "function", "function": {"name": ""}}), 1),
        (json!({"type": "function", "function": {"name": 3}}), 1),
    ] {
        assert!(
            matches!(run(&[good.clone(), bad.clone()], &LIMITS), Err(GrammarError::MalformedTool { index: i, .. }) if i == index),
            "{bad}"
        );
    }
    assert_eq!(
        run(&[good.clone(), good.clone()], &LIMITS),
        Err(GrammarError::DuplicateTool { name: "t".into() })
    );
    assert!(matches!(
        run(&[tool("t", json!({"type": "string"}))], &LIMITS),
        Err(GrammarError::Unsatisfiable { .. })
    ));
    assert!(matches!(
        run(&[tool("t", json!(false))], &LIMITS),
        Err(GrammarError::Unsatisfiable { .. })
    ));
}

// ---------------------------------------------------------------- names and literals

#[test]
fn odd_tool_names_are_escaped_literals() {
    let name = "we\"ird\\ name\twith é and 😀";
    let grammar = build(&[tool(name, json!({}))], CallFormat::Hermes, &LIMITS);
    let call = "<tool_call>\n{\"name\": \"we\\\"ird\\\\ name\\twith é and 😀\", \"arguments\": {}}\n</tool_call>";
    assert!(grammar.accepts(call));
    assert!(!grammar.accepts(&call.replace("é", "e")));
    let text = tool_call_grammar(&[tool(name, json!({}))], CallFormat::Hermes, &LIMITS)
        .expect("a grammar");
    assert!(
        text.contains(r#"\"we\\\"ird\\\\ name\\twith \xE9 and \U0001F600\""#),
        "{text}"
    );
}

#[test]
fn literal_escaping_covers_every_gbnf_special() {
    assert_eq!(lit(""), r#""""#);
    assert_eq!(lit("a\"b\\c"), r#""a\"b\\c""#);
    assert_eq!(lit("\n\r\t"), r#""\n\r\t""#);
    assert_eq!(lit("[x]-y"), r#""[x]-y""#);
    assert_eq!(lit("\u{1}\u{7f}é"), r#""\x01\x7F\xE9""#);
    assert_eq!(lit("€😀"), r#""\u20AC\U0001F600""#);
    assert_eq!(rule_hint("file_editor"), "file-editor");
    assert_eq!(rule_hint("__Mixed..Case99__"), "mixed-case99");
    assert_eq!(rule_hint("日本"), "");
}

#[test]
fn rule_names_stay_valid_for_non_ascii_tool_names() {
    let tools = [
        tool("日本", json!({"properties": {"ключ": {"type": "string"}}})),
        tool("a-b", json!({})),
    ];
    let text = tool_call_grammar(&tools, CallFormat::Json, &LIMITS).expect("a grammar");
    let grammar = parse(&text);
    assert!(grammar.names.iter().any(|name| name == "t0"));
    assert!(grammar.accepts(r#"{"name": "日本", "arguments": {"ключ": "значение"}}"#));
    assert!(grammar.accepts(r#"{"name": "a-b", "arguments": {}}"#));
}

#[test]
fn python_spelling_of_json_values() {
    for (value, expected) in [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (0.1, "0.1"),
        (100.0, "100.0"),
        (123456.789, "123456.789"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (1.5e-7, "1.5e-07"),
        (1e15, "1000000000000000.0"),
        (1e16, "1e+16"),
        (-2.5e100, "-2.5e+100"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (5e-324, "5e-324"),
    ] {
        assert_eq!(py_float(value), expected, "{value:e}");
    }
    let value = json!({"b": [1, -2, 2.5, "é\u{1}\n"], "a": {"x": null, "y": false}});
    assert_eq!(
        py_json(&value),
        r#"{"b": [1, -2, 2.5, "é\u0001\n"], "a": {"x": null, "y": false}}"#
    );
    assert_eq!(py_json(&json!(u64::MAX)), "18446744073709551615");
    // DEL and '/' stay literal; C0 controls without a short escape get lowercase \u00xx.
    assert_eq!(
        py_string("\u{8}\u{c}\u{1f}\u{7f}\"\\/\r\t"),
        "\"\\b\\f\\u001f\u{7f}\\\"\\\\/\\r\\t\""
    );
}
