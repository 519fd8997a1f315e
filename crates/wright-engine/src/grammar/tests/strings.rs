//! Strings: Python's escapes only, and every length bound exact.

use super::*;
use crate::grammar::repeat::ceil_sqrt;

#[test]
fn strings_use_python_escapes_only() {
    let grammar = one_value(json!({"type": "string"}), true, &LIMITS);
    for good in [
        r#"say \"hi\""#,
        r"C:\\dir",
        r"a\nb\tc\rd",
        r"\b\f",
        r"\u0000\u001b\u001f\u000b",
        "é ✓ 😀 \u{7f}",
    ] {
        assert!(grammar.accepts(&quoted(good)), "{good}");
    }
    for bad in [
        r"\/",     // Python does not escape '/'
        r"\u001B", // hex is lowercase
        r"\u000a", // a newline has its short escape
        r"\u0008", // so has backspace
        r"\u00e9", // ensure_ascii=False: non-ASCII stays literal
        r"\u0041", // and so does ASCII
        r"\x41", r"\", "a\nb", // raw control characters are escaped
        "\u{1f}", "a\"b",
    ] {
        assert!(!grammar.accepts(&quoted(bad)), "{bad:?}");
    }
}

#[test]
fn string_bound_counts_characters_and_escapes_count_once() {
    let limits = Limits {
        string_chars: 5,
        ..LIMITS
    };
    let grammar = one_value(json!({"type": "string"}), true, &limits);
    assert!(grammar.accepts(&quoted("abcde")));
    assert!(grammar.accepts(&quoted("ééééé")));
    assert!(grammar.accepts(&quoted(r"\n\n\n\n\u0001")));
    assert!(grammar.accepts(&quoted("")));
    assert!(!grammar.accepts(&quoted("abcdef")));
    assert!(!grammar.accepts(&quoted(r"\n\n\n\n\n\n")));
}

#[test]
fn every_bound_admits_exactly_its_lengths() {
    for max in 0..=160u32 {
        let limits = Limits {
            string_chars: max,
            ..LIMITS
        };
        let grammar = one_value(json!({"type": "string"}), true, &limits);
        let max = max as usize;
        let mut lengths = vec![0, max / 3, max / 2, max, max + 1, max + 7];
        if max.is_multiple_of(37) {
            lengths.extend(0..=max + 1);
        }
        for len in lengths {
            let accepted = grammar.accepts(&quoted(&"a".repeat(len)));
            assert_eq!(accepted, len <= max, "length {len} with bound {max}");
        }
    }
}

#[test]
fn chunked_repetition_is_exact_around_every_chunk_boundary() {
    for max in [33u64, 48, 63, 64, 65, 99, 100, 101, 255, 256, 401] {
        let mut builder = Builder::new(&LIMITS);
        let unit = builder.add("u", "\"a\"");
        let top = builder.at_most(&unit, max).expect("a rule");
        let grammar = parse(&builder.finish(&top));
        let size = ceil_sqrt(max) as usize;
        let max = max as usize;
        let mut lengths: Vec<usize> = (0..=max + 1).step_by(size).collect();
        for boundary in lengths.clone() {
            lengths.extend([boundary.saturating_sub(1), boundary + 1]);
        }
        lengths.extend([max - 1, max, max + 1, max + 2]);
        for len in lengths {
            assert_eq!(
                grammar.accepts(&"a".repeat(len)),
                len <= max,
                "{len} of at most {max}"
            );
        }
    }
}

#[test]
fn long_bounds_stay_small_and_exact() {
    let limits = Limits {
        string_chars: 4000,
        ..LIMITS
    };
    let text = tool_call_grammar(
        &[tool(
            "t",
            json!({"properties": {"v": {"type": "string"}}, "required": ["v"]}),
        )],
        CallFormat::Hermes,
        &limits,
    )
    .expect("a grammar");
    // A linear chain would need 4000 rules (about 100 KB); chunks need about 2*sqrt(4000).
    assert!(text.len() < 8_000, "{} bytes", text.len());
    assert!(text.lines().count() < 200, "{} rules", text.lines().count());
    // llama.cpp turns x{m,n} with n > 2000 into an unbounded x{m,}; `parse` rejects any
    // repetition operator or group, so none slipped in.
    let grammar = parse(&text);
    assert!(grammar.accepts(&quoted(&"a".repeat(4000))));
    assert!(grammar.accepts(&quoted(&"\\n".repeat(4000))));
    assert!(!grammar.accepts(&quoted(&"a".repeat(4001))));
}

#[test]
fn max_and_min_length_narrow_the_bound() {
    let grammar = one_value(
        json!({"type": "string", "minLength": 2, "maxLength": 4}),
        true,
        &LIMITS,
    );
    for (len, ok) in [
        (0, false),
        (1, false),
        (2, true),
        (3, true),
        (4, true),
        (5, false),
    ] {
        assert_eq!(grammar.accepts(&quoted(&"z".repeat(len))), ok, "{len}");
    }
    // The limit wins over a larger maxLength.
    let grammar = one_value(json!({"type": "string", "maxLength": 1000}), true, &LIMITS);
    assert!(grammar.accepts(&quoted(&"z".repeat(64))));
    assert!(!grammar.accepts(&quoted(&"z".repeat(65))));
    // A long minimum is spelled in chunks too.
    let limits = Limits {
        string_chars: 300,
        ..LIMITS
    };
    let grammar = one_value(json!({"type": "string", "minLength": 250}), true, &limits);
    assert!(!grammar.accepts(&quoted(&"z".repeat(249))));
    assert!(grammar.accepts(&quoted(&"z".repeat(250))));
    assert!(grammar.accepts(&quoted(&"z".repeat(300))));
    assert!(!grammar.accepts(&quoted(&"z".repeat(301))));
}
