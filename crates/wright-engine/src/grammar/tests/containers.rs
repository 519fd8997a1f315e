//! Objects and arrays: ordered members, item bounds, generic values within the depth limit.

use super::*;

#[test]
fn optional_members_form_an_ordered_subset() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}, "d": {"type": "integer"}},
        "required": ["b"]});
    let grammar = one_value(schema, true, &LIMITS);
    let names = ["a", "b", "c", "d"];
    for mask in 0u32..16 {
        let present: Vec<&str> = names
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect();
        let object = present
            .iter()
            .map(|n| format!("\"{n}\": 1"))
            .collect::<Vec<_>>()
            .join(", ");
        let expected = present.contains(&"b");
        assert_eq!(
            grammar.accepts(&with_v(&format!("{{{object}}}"))),
            expected,
            "{object}"
        );
    }
    assert!(!grammar.accepts(&with_v(r#"{"b": 1, "a": 1}"#)));
    assert!(!grammar.accepts(&with_v(r#"{"b": 1, "d": 1, "c": 1}"#)));

    let all_optional =
        json!({"type": "object", "properties": {"x": {"type": "null"}, "y": {"type": "null"}}});
    let grammar = one_value(all_optional, true, &LIMITS);
    for good in [
        "{}",
        r#"{"x": null}"#,
        r#"{"y": null}"#,
        r#"{"x": null, "y": null}"#,
    ] {
        assert!(grammar.accepts(&with_v(good)), "{good}");
    }
    assert!(!grammar.accepts(&with_v(r#"{, "y": null}"#)));
    assert!(!grammar.accepts(&with_v(r#"{"y": null, "x": null}"#)));
}

#[test]
fn many_optional_members_grow_the_grammar_linearly() {
    let properties: Map<String, Value> = (0..40)
        .map(|i| (format!("p{i}"), json!({"type": "boolean"})))
        .collect();
    let text = tool_call_grammar(
        &[tool(
            "t",
            json!({"type": "object", "properties": properties}),
        )],
        CallFormat::Json,
        &LIMITS,
    )
    .expect("a grammar");
    assert!(text.lines().count() < 100, "{} rules", text.lines().count());
    let grammar = parse(&text);
    assert!(
        grammar.accepts(r#"{"name": "t", "arguments": {"p3": true, "p17": false, "p39": true}}"#)
    );
    assert!(!grammar.accepts(r#"{"name": "t", "arguments": {"p17": false, "p3": true}}"#));
}

#[test]
fn required_but_undeclared_members_follow_the_declared_ones() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["z", "a", "z"]});
    let grammar = one_value(schema, true, &LIMITS);
    assert!(grammar.accepts(&with_v(r#"{"a": 1, "z": "anything"}"#)));
    assert!(grammar.accepts(&with_v(r#"{"a": 1, "z": [1, {"k": null}]}"#)));
    assert!(!grammar.accepts(&with_v(r#"{"a": 1}"#)));
    assert!(!grammar.accepts(&with_v(r#"{"z": 1, "a": 1}"#)));
}

#[test]
fn arrays_respect_item_bounds() {
    let limits = Limits {
        array_items: 3,
        ..LIMITS
    };
    let grammar = one_value(
        json!({"type": "array", "items": {"type": "integer"}}),
        true,
        &limits,
    );
    for (raw, ok) in [
        ("[]", true),
        ("[1]", true),
        ("[1, 2, 3]", true),
        ("[1, 2, 3, 4]", false),
        ("[1,2]", false),
        ("[ ]", false),
        ("[1, ]", false),
    ] {
        assert_eq!(grammar.accepts(&with_v(raw)), ok, "{raw}");
    }
    let grammar = one_value(
        json!({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 100}),
        true,
        &limits,
    );
    for (raw, ok) in [
        ("[]", false),
        ("[1]", false),
        ("[1, 2]", true),
        ("[1, 2, 3]", true),
        ("[1, 2, 3, 4]", false),
    ] {
        assert_eq!(grammar.accepts(&with_v(raw)), ok, "{raw}");
    }
    let limits = Limits {
        array_items: 500,
        ..LIMITS
    };
    let grammar = one_value(
        json!({"type": "array", "items": {"type": "boolean"}}),
        true,
        &limits,
    );
    let items = |n: usize| format!("[{}]", vec!["true"; n].join(", "));
    assert!(grammar.accepts(&with_v(&items(500))));
    assert!(!grammar.accepts(&with_v(&items(501))));
}

#[test]
fn generic_values_are_bounded_by_depth() {
    let limits = Limits {
        depth: 2,
        array_items: 2,
        ..LIMITS
    };
    // The arguments object is level 1, so the free-form value may hold one more level.
    let grammar = one_value(json!({}), true, &limits);
    for good in [
        "1",
        "-2.5",
        r#""s""#,
        "null",
        "false",
        "[]",
        "{}",
        r#"[1, "a"]"#,
        r#"{"k": 2, "j": "x"}"#,
    ] {
        assert!(grammar.accepts(&with_v(good)), "{good}");
    }
    for bad in ["[[1]]", r#"{"k": {}}"#, "[1, 2, 3]", "[1,2]", "tru"] {
        assert!(!grammar.accepts(&with_v(bad)), "{bad}");
    }
}

#[test]
fn parameters_default_to_an_empty_or_generic_object() {
    let tools = [
        json!({"type": "function", "function": {"name": "now"}}),
        tool("free", json!({})),
        tool("empty", json!({"type": "object"})),
    ];
    let grammar = build(&tools, CallFormat::Hermes, &LIMITS);
    assert!(grammar.accepts(&hermes("now", "{}")));
    assert!(!grammar.accepts(&hermes("now", r#"{"a": 1}"#)));
    assert!(grammar.accepts(&hermes("free", r#"{"a": 1, "b": [true]}"#)));
    assert!(
        !grammar.accepts(&hermes("free", "[1]")),
        "arguments are always an object"
    );
    assert!(grammar.accepts(&hermes("empty", "{}")));
    assert!(
        !grammar.accepts(&hermes("empty", r#"{"a": 1}"#)),
        "only declared properties"
    );
}
