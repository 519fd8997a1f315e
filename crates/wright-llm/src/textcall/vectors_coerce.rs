//! Vectors for [`coerce_arguments`]: values as text formats deliver them, against a schema
//! with every JSON-schema type the coercion handles, and the refusals that name the parameter.

use serde_json::json;
use serde_json::Value;

use super::coerce_arguments;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "force": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "integer"}},
            "options": {"type": "object", "properties": {"depth": {"type": "integer"}}},
            "limit": {"type": ["integer", "null"]},
            "mode": {"anyOf": [{"type": "integer"}, {"type": "string"}]}
        },
        "required": ["path"]
    })
}

/// (arguments given, arguments after coercion) for the schema above.
const COERCED: &[(&str, &str)] = &[
    (r#"{"path": "a"}"#, r#"{"path": "a"}"#),
    (
        r#"{"path": "a", "count": "12"}"#,
        r#"{"path": "a", "count": 12}"#,
    ),
    (
        r#"{"path": "a", "count": " -3 "}"#,
        r#"{"path": "a", "count": -3}"#,
    ),
    (
        r#"{"path": "a", "count": 4.0}"#,
        r#"{"path": "a", "count": 4}"#,
    ),
    (
        r#"{"path": "a", "count": "7.0"}"#,
        r#"{"path": "a", "count": 7}"#,
    ),
    (
        r#"{"path": "a", "ratio": "0.5"}"#,
        r#"{"path": "a", "ratio": 0.5}"#,
    ),
    (
        r#"{"path": "a", "ratio": 2}"#,
        r#"{"path": "a", "ratio": 2}"#,
    ),
    (
        r#"{"path": "a", "force": "true"}"#,
        r#"{"path": "a", "force": true}"#,
    ),
    (
        r#"{"path": "a", "force": "False"}"#,
        r#"{"path": "a", "force": false}"#,
    ),
    (
        r#"{"path": "a", "tags": "[1, 2]"}"#,
        r#"{"path": "a", "tags": [1, 2]}"#,
    ),
    (
        r#"{"path": "a", "tags": ["1", 2]}"#,
        r#"{"path": "a", "tags": [1, 2]}"#,
    ),
    (
        r#"{"path": "a", "tags": "['3', 4]"}"#,
        r#"{"path": "a", "tags": [3, 4]}"#,
    ),
    (
        r#"{"path": "a", "options": "{\"depth\": \"2\"}"}"#,
        r#"{"path": "a", "options": {"depth": 2}}"#,
    ),
    (
        r#"{"path": "a", "options": "{'depth': 5}"}"#,
        r#"{"path": "a", "options": {"depth": 5}}"#,
    ),
    (
        r#"{"path": "a", "limit": "8"}"#,
        r#"{"path": "a", "limit": 8}"#,
    ),
    (
        r#"{"path": "a", "limit": null}"#,
        r#"{"path": "a", "limit": null}"#,
    ),
    (
        r#"{"path": "a", "mode": "9"}"#,
        r#"{"path": "a", "mode": 9}"#,
    ),
    (
        r#"{"path": "a", "mode": "fast"}"#,
        r#"{"path": "a", "mode": "fast"}"#,
    ),
    (r#"{"path": 42}"#, r#"{"path": "42"}"#),
    (
        r#"{"path": "a", "extra": "12"}"#,
        r#"{"path": "a", "extra": "12"}"#,
    ),
    (
        r#""{\"path\": \"from a string\"}""#,
        r#"{"path": "from a string"}"#,
    ),
    (
        r#"{"path": "Grüße/北京.txt"}"#,
        r#"{"path": "Grüße/北京.txt"}"#,
    ),
];

/// (arguments given, a fragment of the error).
const REFUSED: &[(&str, &str)] = &[
    (r#"{}"#, "required parameter `path` is missing"),
    (r#"{"count": 1}"#, "`path`"),
    (
        r#"{"path": "a", "count": "twelve"}"#,
        "parameter `count` should be integer",
    ),
    (r#"{"path": "a", "count": "1.5"}"#, "`count`"),
    (
        r#"{"path": "a", "force": "maybe"}"#,
        "parameter `force` should be boolean",
    ),
    (
        r#"{"path": "a", "tags": "1, 2"}"#,
        "parameter `tags` should be array",
    ),
    (r#"{"path": "a", "tags": ["x"]}"#, "`tags[0]`"),
    (
        r#"{"path": "a", "options": {"depth": "deep"}}"#,
        "`options.depth`",
    ),
    (
        r#"{"path": "a", "options": "nope"}"#,
        "parameter `options` should be object",
    ),
    (r#"[1, 2]"#, "JSON object"),
    (r#""not json""#, "arguments"),
];

#[test]
fn coerces_to_schema_types() {
    for (given, want) in COERCED {
        let mut arguments: Value = serde_json::from_str(given).unwrap();
        let want: Value = serde_json::from_str(want).unwrap();
        assert_eq!(
            coerce_arguments(&mut arguments, &schema()),
            Ok(()),
            "{given}"
        );
        assert_eq!(arguments, want, "{given}");
    }
}

#[test]
fn refuses_with_the_parameter_named() {
    for (given, fragment) in REFUSED {
        let mut arguments: Value = serde_json::from_str(given).unwrap();
        let error = coerce_arguments(&mut arguments, &schema()).unwrap_err();
        assert!(error.contains(fragment), "{given}: {error}");
    }
}

#[test]
fn several_missing_are_named_together_and_no_schema_changes_nothing() {
    let schema = json!({"type": "object", "properties": {}, "required": ["a", "b"]});
    let error = coerce_arguments(&mut json!({}), &schema).unwrap_err();
    assert!(error.contains("`a`, `b`"), "{error}");
    let mut arguments = json!({"n": "1"});
    assert_eq!(coerce_arguments(&mut arguments, &json!({})), Ok(()));
    assert_eq!(arguments, json!({"n": "1"}));
    let mut null = Value::Null;
    assert_eq!(
        coerce_arguments(&mut null, &json!({"type": "object"})),
        Ok(())
    );
    assert_eq!(null, json!({}));
}
