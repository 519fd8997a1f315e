//! Numbers, literals and choices, spelled as Python prints them.

use super::*;

#[test]
fn integers_are_spelled_as_python_prints_them() {
    let grammar = one_value(json!({"type": "integer"}), true, &LIMITS);
    for good in [
        "0",
        "7",
        "-7",
        "10",
        "1234567890123456",
        "-1234567890123456",
    ] {
        assert!(grammar.accepts(&with_v(good)), "{good}");
    }
    for bad in [
        "-0",
        "01",
        "+1",
        "1.0",
        "1e3",
        "12345678901234567",
        "",
        "- 1",
    ] {
        assert!(!grammar.accepts(&with_v(bad)), "{bad}");
    }
}

#[test]
fn numbers_are_spelled_as_python_reprints_them() {
    let grammar = one_value(json!({"type": "number"}), true, &LIMITS);
    for good in [
        "0",
        "-3",
        "0.0",
        "-0.0",
        "1.5",
        "10.0",
        "100.25",
        "0.1",
        "0.0001",
        "0.00012",
        "123456789012345.0",
        "12345.6789012345",
        "1e-05",
        "1.5e-07",
        "1e+16",
        "-2.5e+100",
        "1.23456789012345e+20",
    ] {
        assert!(grammar.accepts(&with_v(good)), "{good}");
    }
    for bad in [
        "1.",
        ".5",
        "1.50",
        "1.00",
        "01.5",
        "0.00001",
        "1e5",
        "1e+05",
        "1E+16",
        "1e+15",
        "1.0e+16",
        "1e-04",
        "1e16",
        "1234567890123456.0",
        "0.1234567890123456",
        "NaN",
        "Infinity",
    ] {
        assert!(!grammar.accepts(&with_v(bad)), "{bad}");
    }
}

/// Every short spelling on a grid is accepted exactly when Python would print it back the
/// same way (a float through `repr`, an int through `str`).
#[test]
fn number_grammar_matches_python_spelling_on_a_grid() {
    let grammar = one_value(json!({"type": "number"}), true, &LIMITS);
    let signs = ["", "-", "+"];
    let ints = ["0", "00", "1", "7", "10", "120", "05"];
    let fractions = [
        "", ".", ".0", ".00", ".5", ".50", ".05", ".001", ".0001", ".25",
    ];
    let exponents = [
        "", "e5", "e+5", "e+05", "e-05", "e-5", "e+16", "e+20", "e-04", "E+16", "e+100",
    ];
    let mut accepted = 0;
    for sign in signs {
        for int in ints {
            for fraction in fractions {
                for exponent in exponents {
                    let text = format!("{sign}{int}{fraction}{exponent}");
                    let canonical = if fraction.is_empty() && exponent.is_empty() {
                        text.parse::<i64>().is_ok_and(|n| n.to_string() == text)
                    } else {
                        !sign.starts_with('+')
                            && text.parse::<f64>().is_ok_and(|x| py_float(x) == text)
                    };
                    accepted += usize::from(canonical);
                    assert_eq!(grammar.accepts(&with_v(&text)), canonical, "{text}");
                }
            }
        }
    }
    assert!(
        accepted > 40,
        "the grid must hold canonical spellings too ({accepted})"
    );
}

#[test]
fn enum_and_const_admit_their_canonical_spelling() {
    let schema = json!({"enum": [1, 2.5, 1e16, "a\"b", null, true, {"k": [1, "é"]}, [false]]});
    let grammar = one_value(schema, true, &LIMITS);
    for good in [
        "1",
        "2.5",
        "1e+16",
        r#""a\"b""#,
        "null",
        "true",
        r#"{"k": [1, "é"]}"#,
        "[false]",
    ] {
        assert!(grammar.accepts(&with_v(good)), "{good}");
    }
    for bad in [
        "2",
        "1.0",
        "1e16",
        r#"{"k":[1,"é"]}"#,
        r#"{"k": [1, "\u00e9"]}"#,
        "false",
    ] {
        assert!(!grammar.accepts(&with_v(bad)), "{bad}");
    }
    let grammar = one_value(json!({"type": "string", "enum": ["x", 3]}), true, &LIMITS);
    assert!(grammar.accepts(&with_v(r#""x""#)));
    assert!(
        !grammar.accepts(&with_v("3")),
        "an enum value of the wrong type is dropped"
    );
    let grammar = one_value(json!({"const": "fixed"}), true, &LIMITS);
    assert!(grammar.accepts(&with_v(r#""fixed""#)));
    assert!(!grammar.accepts(&with_v(r#""other""#)));
}

#[test]
fn type_lists_and_any_of_are_alternatives() {
    let grammar = one_value(
        json!({"type": ["string", "null"], "maxLength": 2}),
        true,
        &LIMITS,
    );
    assert!(grammar.accepts(&with_v("null")));
    assert!(grammar.accepts(&with_v(r#""ab""#)));
    assert!(!grammar.accepts(&with_v(r#""abc""#)));
    assert!(!grammar.accepts(&with_v("1")));

    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}},
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}]});
    let grammar = one_value(schema, true, &LIMITS);
    assert!(grammar.accepts(&with_v(r#"{"a": 1}"#)));
    assert!(grammar.accepts(&with_v(r#"{"b": true}"#)));
    assert!(grammar.accepts(&with_v(r#"{"a": 1, "b": false}"#)));
    assert!(
        !grammar.accepts(&with_v("{}")),
        "each branch requires a member"
    );

    let grammar = one_value(
        json!({"oneOf": [{"type": "integer"}, {"type": "array", "items": {"type": "string"}}]}),
        true,
        &LIMITS,
    );
    assert!(grammar.accepts(&with_v("5")));
    assert!(grammar.accepts(&with_v(r#"["x", "y"]"#)));
    assert!(!grammar.accepts(&with_v(r#"[1]"#)));
}
