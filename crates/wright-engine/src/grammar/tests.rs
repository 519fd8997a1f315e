//! The grammars are checked by parsing them with a small GBNF reader written here (it accepts
//! only what the module promises to emit: one rule per line, literals, character classes, rule
//! references and `|`) and running a memoizing matcher over candidate replies.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

use serde_json::{json, Value};

use super::*;
use crate::template::py_float;

const LIMITS: Limits = Limits {
    reasoning_chars: 0,
    string_chars: 64,
    array_items: 8,
    depth: 4,
};

// ---------------------------------------------------------------- GBNF reader and matcher

#[derive(Debug)]
enum Sym {
    Lit(Vec<char>),
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Ref(usize),
}

struct Grammar {
    names: Vec<String>,
    rules: Vec<Vec<Vec<Sym>>>,
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

fn parse(text: &str) -> Grammar {
    assert!(text.is_ascii(), "grammar is not plain ASCII");
    assert!(text.starts_with("root ::= "), "root is not the first rule");
    let mut names = Vec::new();
    let mut index = HashMap::new();
    let mut bodies = Vec::new();
    for line in text.lines() {
        let (name, body) = line.split_once(" ::= ").expect("a rule line");
        assert!(
            !name.is_empty() && name.chars().all(is_name_char),
            "bad rule name {name:?}"
        );
        assert!(
            index.insert(name.to_string(), names.len()).is_none(),
            "{name} defined twice"
        );
        names.push(name.to_string());
        bodies.push(body);
    }
    let rules = bodies.iter().map(|body| parse_body(body, &index)).collect();
    Grammar { names, rules }
}

fn parse_body(body: &str, index: &HashMap<String, usize>) -> Vec<Vec<Sym>> {
    let chars: Vec<char> = body.chars().collect();
    let mut alternatives = vec![Vec::new()];
    let mut at = 0;
    while at < chars.len() {
        let sym = match chars[at] {
            ' ' => {
                at += 1;
                continue;
            }
            '|' => {
                alternatives.push(Vec::new());
                at += 1;
                continue;
            }
            '"' => {
                let mut literal = Vec::new();
                at += 1;
                while chars[at] != '"' {
                    let (c, next) = unescape(&chars, at);
                    literal.push(c);
                    at = next;
                }
                at += 1;
                Sym::Lit(literal)
            }
            '[' => {
                at += 1;
                let negated = chars[at] == '^';
                if negated {
                    at += 1;
                }
                let mut ranges = Vec::new();
                while chars[at] != ']' {
                    let (low, next) = unescape(&chars, at);
                    at = next;
                    if chars[at] == '-' && chars[at + 1] != ']' {
                        let (high, next) = unescape(&chars, at + 1);
                        at = next;
                        ranges.push((low, high));
                    } else {
                        ranges.push((low, low));
                    }
                }
                at += 1;
                Sym::Class { negated, ranges }
            }
            c if is_name_char(c) => {
                let start = at;
                while at < chars.len() && is_name_char(chars[at]) {
                    at += 1;
                }
                let name: String = chars[start..at].iter().collect();
                Sym::Ref(
                    *index
                        .get(&name)
                        .unwrap_or_else(|| panic!("undefined rule {name}")),
                )
            }
            other => panic!("unexpected {other:?} in rule body {body}"),
        };
        alternatives.last_mut().expect("an alternative").push(sym);
    }
    alternatives
}

/// GBNF escapes as llama.cpp reads them.
fn unescape(chars: &[char], at: usize) -> (char, usize) {
    if chars[at] != '\\' {
        return (chars[at], at + 1);
    }
    let hex = |len: usize| {
        let digits: String = chars[at + 2..at + 2 + len].iter().collect();
        let code = u32::from_str_radix(&digits, 16).expect("hex escape");
        (char::from_u32(code).expect("a code point"), at + 2 + len)
    };
    match chars[at + 1] {
        'n' => ('\n', at + 2),
        'r' => ('\r', at + 2),
        't' => ('\t', at + 2),
        c @ ('\\' | '"' | '[' | ']' | '-') => (c, at + 2),
        'x' => hex(2),
        'u' => hex(4),
        'U' => hex(8),
        other => panic!("unknown escape \\{other}"),
    }
}

struct Matcher<'g> {
    grammar: &'g Grammar,
    input: Vec<char>,
    memo: HashMap<(usize, usize), Rc<BTreeSet<usize>>>,
    active: HashSet<(usize, usize)>,
}

impl Matcher<'_> {
    /// Every input position where `rule`, started at `start`, can end.
    fn rule(&mut self, rule: usize, start: usize) -> Rc<BTreeSet<usize>> {
        if let Some(ends) = self.memo.get(&(rule, start)) {
            return ends.clone();
        }
        assert!(
            self.active.insert((rule, start)),
            "left recursion through {}",
            self.grammar.names[rule]
        );
        let grammar = self.grammar;
        let mut ends = BTreeSet::new();
        for alternative in &grammar.rules[rule] {
            ends.extend(self.sequence(alternative, start));
        }
        self.active.remove(&(rule, start));
        let ends = Rc::new(ends);
        self.memo.insert((rule, start), ends.clone());
        ends
    }

    fn sequence(&mut self, syms: &[Sym], start: usize) -> BTreeSet<usize> {
        let mut current = BTreeSet::from([start]);
        for sym in syms {
            let mut next = BTreeSet::new();
            for at in current {
                match sym {
                    Sym::Lit(text) => {
                        if self.input[at..].starts_with(text) {
                            next.insert(at + text.len());
                        }
                    }
                    Sym::Class { negated, ranges } => {
                        if let Some(c) = self.input.get(at) {
                            let inside = ranges.iter().any(|(low, high)| low <= c && c <= high);
                            if inside != *negated {
                                next.insert(at + 1);
                            }
                        }
                    }
                    Sym::Ref(rule) => next.extend(self.rule(*rule, at).iter()),
                }
            }
            current = next;
            if current.is_empty() {
                break;
            }
        }
        current
    }
}

impl Grammar {
    fn accepts(&self, text: &str) -> bool {
        let mut matcher = Matcher {
            grammar: self,
            input: text.chars().collect(),
            memo: HashMap::new(),
            active: HashSet::new(),
        };
        let len = matcher.input.len();
        matcher.rule(0, 0).contains(&len)
    }

    fn unreachable_rules(&self) -> Vec<&str> {
        let mut seen = HashSet::from([0]);
        let mut todo = vec![0];
        while let Some(rule) = todo.pop() {
            for sym in self.rules[rule].iter().flatten() {
                if let Sym::Ref(target) = sym {
                    if seen.insert(*target) {
                        todo.push(*target);
                    }
                }
            }
        }
        (0..self.names.len())
            .filter(|rule| !seen.contains(rule))
            .map(|rule| self.names[rule].as_str())
            .collect()
    }
}

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

// ---------------------------------------------------------------- numbers, literals, choices

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

// ---------------------------------------------------------------- objects and arrays

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
