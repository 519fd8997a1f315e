//! Table-driven vectors: replies written the way each format's public template or
//! documentation says (each table names its source), with the calls, content, reasoning
//! and errors they must give. Formats with special tokens are in `vectors_tokens`, bare
//! JSON, GLM and Gemma in `vectors_json`.

use serde_json::Value;

use super::parse_text_calls;
use super::Fix;

/// Tools on offer in the vectors (a name outside it shows the known-tools rule).
pub(super) const KNOWN: &[&str] = &[
    "run_shell",
    "read_file",
    "write_file",
    "get_weather",
    "search",
    "list_files",
];

pub(super) struct Vector {
    pub name: &'static str,
    /// The public template or document the text follows.
    pub doc: &'static str,
    pub text: &'static str,
    pub known: &'static [&'static str],
    /// Name and arguments (JSON text) of each call, in order.
    pub calls: &'static [(&'static str, &'static str)],
    pub content: &'static str,
    pub reasoning: &'static str,
    /// A fragment of each error, in order.
    pub errors: &'static [&'static str],
    /// The repairs made to read the calls, all calls' in order.
    pub repairs: &'static [Fix],
}

pub(super) const BLANK: Vector = Vector {
    name: "",
    doc: "",
    text: "",
    known: KNOWN,
    calls: &[],
    content: "",
    reasoning: "",
    errors: &[],
    repairs: &[],
};

/// Runs a table; reports every vector that fails, with its source.
pub(super) fn check(table: &[Vector]) {
    let mut failures = Vec::new();
    for vector in table {
        let parsed = parse_text_calls(vector.text, vector.known);
        let got: Vec<(String, Value)> = parsed
            .calls
            .iter()
            .map(|call| (call.name.clone(), call.arguments.clone()))
            .collect();
        let want: Vec<(String, Value)> = vector
            .calls
            .iter()
            .map(|(name, arguments)| {
                let arguments = serde_json::from_str(arguments).expect("vector arguments are JSON");
                (name.to_string(), arguments)
            })
            .collect();
        let mut wrong = Vec::new();
        if got != want {
            wrong.push(format!("calls\n    got  {got:?}\n    want {want:?}"));
        }
        if parsed.content != vector.content {
            wrong.push(format!(
                "content\n    got  {:?}\n    want {:?}",
                parsed.content, vector.content
            ));
        }
        if parsed.reasoning != vector.reasoning {
            wrong.push(format!(
                "reasoning\n    got  {:?}\n    want {:?}",
                parsed.reasoning, vector.reasoning
            ));
        }
        let errors_match = parsed.errors.len() == vector.errors.len()
            && parsed
                .errors
                .iter()
                .zip(vector.errors)
                .all(|(error, fragment)| error.contains(fragment));
        if !errors_match {
            wrong.push(format!(
                "errors\n    got  {:?}\n    want fragments {:?}",
                parsed.errors, vector.errors
            ));
        }
        let repairs: Vec<Fix> = parsed
            .calls
            .iter()
            .flat_map(|call| call.repairs.iter().copied())
            .collect();
        if repairs != vector.repairs {
            wrong.push(format!(
                "repairs\n    got  {repairs:?}\n    want {:?}",
                vector.repairs
            ));
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{} ({}):\n  {}",
                vector.name,
                vector.doc,
                wrong.join("\n  ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} vectors failed:\n{}",
        failures.len(),
        table.len(),
        failures.join("\n")
    );
}

/// Every vector of every table (for the fuzz test).
pub(super) fn all() -> Vec<&'static Vector> {
    [
        QWEN3_CODER,
        HERMES,
        THINK,
        super::vectors_tokens::MISTRAL,
        super::vectors_tokens::LLAMA,
        super::vectors_tokens::DEEPSEEK,
        super::vectors_tokens::KIMI,
        super::vectors_tokens::HARMONY,
        super::vectors_json::BARE,
        super::vectors_json::GLM,
        super::vectors_json::GEMMA,
        super::vectors_repair::REPAIR,
        super::vectors_formats::GEMMA4,
        super::vectors_formats::COHERE,
        super::vectors_formats::DSML,
        super::vectors_formats::MINIMAX,
        super::vectors_formats::KIMI_K3,
        super::vectors_formats::APERTUS,
        super::vectors_formats::FUNCTIONARY,
        super::vectors_formats::HARMONY_VARIANTS,
        super::vectors_wrappers::HERMES_WRAPPERS,
        super::vectors_wrappers::GENERIC,
        super::vectors_wrappers::JSON_LISTS,
        super::vectors_templates::SEED_OSS,
        super::vectors_templates::LFM2,
        super::vectors_templates::SMALL_FORMATS,
        super::vectors_templates::INVOKE_FAMILY,
        super::vectors_templates::REASONING,
        super::vectors_templates::QWEN3_CODER_WS,
        super::vectors_templates::EDGES,
    ]
    .into_iter()
    .flatten()
    .collect()
}

const QWEN3_CODER_DOC: &str = "Qwen3-Coder chat template (Qwen/Qwen3-Coder-30B-A3B-Instruct chat_template.jinja): <tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n</function>\\n</tool_call>; OpenHands writes the <function=…> part without the wrapper";

pub(super) const QWEN3_CODER: &[Vector] = &[
    Vector {
        name: "qwen3-coder: one call, text before",
        doc: QWEN3_CODER_DOC,
        text: "I'll run the tests.\n<tool_call>\n<function=run_shell>\n<parameter=command>\ncargo test\n</parameter>\n</function>\n</tool_call>",
        calls: &[("run_shell", r#"{"command": "cargo test"}"#)],
        content: "I'll run the tests.",
        ..BLANK
    },
    Vector {
        name: "qwen3-coder: two calls, multi-line value with braces, text after",
        doc: QWEN3_CODER_DOC,
        text: "<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/main.rs\n</parameter>\n<parameter=content>\nfn main() {\n    println!(\"{}\", 1);\n}\n\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=run_shell>\n<parameter=command>\ncargo run\n</parameter>\n</function>\n</tool_call>\nBoth done.",
        calls: &[
            ("write_file", r#"{"path": "src/main.rs", "content": "fn main() {\n    println!(\"{}\", 1);\n}\n"}"#),
            ("run_shell", r#"{"command": "cargo run"}"#),
        ],
        content: "Both done.",
        ..BLANK
    },
    Vector {
        name: "openhands: no <tool_call> wrapper",
        doc: QWEN3_CODER_DOC,
        text: "<function=read_file>\n<parameter=path>\nsrc/lib.rs\n</parameter>\n</function>",
        calls: &[("read_file", r#"{"path": "src/lib.rs"}"#)],
        ..BLANK
    },
    Vector {
        name: "qwen3-coder: unterminated at the end of the text",
        doc: QWEN3_CODER_DOC,
        text: "<tool_call>\n<function=write_file>\n<parameter=path>\na.txt\n</parameter>\n<parameter=content>\nhello\nworld",
        calls: &[("write_file", r#"{"path": "a.txt", "content": "hello\nworld"}"#)],
        ..BLANK
    },
    Vector {
        name: "qwen3-coder: parameter without its closing tag, next parameter follows",
        doc: QWEN3_CODER_DOC,
        text: "<function=write_file>\n<parameter=path>\nb.txt\n<parameter=content>\nx\n</function>",
        calls: &[("write_file", r#"{"path": "b.txt", "content": "x"}"#)],
        ..BLANK
    },
    Vector {
        name: "qwen3-coder: value containing </parameter> itself",
        doc: QWEN3_CODER_DOC,
        text: "<function=write_file>\n<parameter=content>\nclose with </parameter> then go on\n</parameter>\n<parameter=path>\nnotes.md\n</parameter>\n</function>",
        calls: &[("write_file", r#"{"content": "close with </parameter> then go on", "path": "notes.md"}"#)],
        ..BLANK
    },
    Vector {
        name: "qwen3-coder: compact dialect, non-ASCII value, numbers stay strings",
        doc: QWEN3_CODER_DOC,
        text: "<tool_call><function=get_weather><parameter=city>Zürich</parameter><parameter=days>3</parameter></function></tool_call>",
        calls: &[("get_weather", r#"{"city": "Zürich", "days": "3"}"#)],
        ..BLANK
    },
    Vector {
        name: "qwen3-coder: unknown tool name is still a call (the caller reports it)",
        doc: QWEN3_CODER_DOC,
        text: "<tool_call>\n<function=launch_rockets>\n<parameter=count>\n3\n</parameter>\n</function>\n</tool_call>",
        calls: &[("launch_rockets", r#"{"count": "3"}"#)],
        ..BLANK
    },
    Vector {
        name: "qwen3-coder: marker in prose, the prose after it stays content",
        doc: QWEN3_CODER_DOC,
        text: "Use <function=name> to call; then wait.",
        calls: &[("name", "{}")],
        content: "Use to call; then wait.",
        ..BLANK
    },
    Vector {
        name: "qwen3-coder: name not closed",
        doc: QWEN3_CODER_DOC,
        text: "<tool_call>\n<function=run_sh",
        errors: &["not closed by `>`"],
        ..BLANK
    },
];

const HERMES_DOC: &str = "Qwen2.5 / Qwen3 chat templates and NousResearch Hermes 2 Pro function calling: <tool_call>\\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\\n</tool_call>";

pub(super) const HERMES: &[Vector] = &[
    Vector {
        name: "hermes: one call, text before",
        doc: HERMES_DOC,
        text: "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}\n</tool_call>",
        calls: &[("read_file", r#"{"path": "README.md"}"#)],
        content: "Let me look.",
        ..BLANK
    },
    Vector {
        name: "hermes: several calls in a row, text after",
        doc: HERMES_DOC,
        text: "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}\n</tool_call>\nReading both.",
        calls: &[("read_file", r#"{"path": "a"}"#), ("read_file", r#"{"path": "b"}"#)],
        content: "Reading both.",
        ..BLANK
    },
    Vector {
        name: "hermes: unterminated at the end",
        doc: HERMES_DOC,
        text: "<tool_call>\n{\"name\": \"run_shell\", \"arguments\": {\"command\": \"ls\"}}",
        calls: &[("run_shell", r#"{"command": "ls"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes: unterminated, then the next call",
        doc: HERMES_DOC,
        text: "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"1\"}}\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"2\"}}</tool_call>",
        calls: &[("read_file", r#"{"path": "1"}"#), ("read_file", r#"{"path": "2"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes: JSON cut off is an error, not content",
        doc: HERMES_DOC,
        text: "Running.\n<tool_call>\n{\"name\": \"run_shell\", \"arguments\": {\"command\": \"ls",
        content: "Running.",
        errors: &["cut off"],
        ..BLANK
    },
    Vector {
        name: "hermes: arguments as a JSON string",
        doc: HERMES_DOC,
        text: "<tool_call>{\"name\": \"run_shell\", \"arguments\": \"{\\\"command\\\": \\\"ls -la\\\"}\"}</tool_call>",
        calls: &[("run_shell", r#"{"command": "ls -la"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes: braces and closing tags inside strings",
        doc: HERMES_DOC,
        text: "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"x.rs\", \"content\": \"fn f() { let s = \\\"}\\\"; } // </tool_call> <tool_call>\"}}\n</tool_call>",
        calls: &[("write_file", r#"{"path": "x.rs", "content": "fn f() { let s = \"}\"; } // </tool_call> <tool_call>"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes: nested arguments, non-ASCII",
        doc: HERMES_DOC,
        text: "好的。<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"天气 🌧\", \"filters\": {\"lang\": [\"zh\", \"en\"], \"limit\": 5}}}</tool_call>",
        calls: &[("search", r#"{"query": "天气 🌧", "filters": {"lang": ["zh", "en"], "limit": 5}}"#)],
        content: "好的。",
        ..BLANK
    },
    Vector {
        name: "hermes: unknown tool name is still a call",
        doc: HERMES_DOC,
        text: "<tool_call>{\"name\": \"fly\", \"arguments\": {}}</tool_call>",
        calls: &[("fly", "{}")],
        ..BLANK
    },
    Vector {
        name: "hermes: JSON in a fence inside the tags",
        doc: HERMES_DOC,
        text: "<tool_call>\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}\n```\n</tool_call>",
        calls: &[("read_file", r#"{"path": "x"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes: arguments JSON-encoded twice",
        doc: HERMES_DOC,
        text: "<tool_call>{\"name\": \"run_shell\", \"arguments\": \"\\\"{\\\\\\\"command\\\\\\\": \\\\\\\"ls\\\\\\\"}\\\"\"}</tool_call>",
        calls: &[("run_shell", r#"{"command": "ls"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes: arguments inline, without an arguments key",
        doc: HERMES_DOC,
        text: "<tool_call>{\"name\": \"read_file\", \"path\": \"x\"}</tool_call>",
        calls: &[("read_file", r#"{"path": "x"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes: wrapped in a code fence, which is removed with the call",
        doc: HERMES_DOC,
        text: "Calling:\n```\n<tool_call>\n{\"name\": \"list_files\", \"arguments\": {}}\n</tool_call>\n```\nWait.",
        calls: &[("list_files", "{}")],
        content: "Calling:\nWait.",
        ..BLANK
    },
    Vector {
        name: "hermes: no name",
        doc: HERMES_DOC,
        text: "<tool_call>{\"arguments\": {\"path\": \"a\"}}</tool_call>",
        errors: &["no \"name\""],
        ..BLANK
    },
    Vector {
        name: "hermes: empty block",
        doc: HERMES_DOC,
        text: "<tool_call></tool_call>",
        errors: &["empty"],
        ..BLANK
    },
    Vector {
        name: "hermes: arguments string that is not JSON",
        doc: HERMES_DOC,
        text: "<tool_call>{\"name\": \"run_shell\", \"arguments\": \"ls -la\"}</tool_call>",
        errors: &["`run_shell`"],
        ..BLANK
    },
    Vector {
        name: "hermes: single quotes are repaired",
        doc: HERMES_DOC,
        text: "<tool_call>{'name': 'run_shell', 'arguments': {'command': 'ls'}}</tool_call>",
        calls: &[("run_shell", r#"{"command": "ls"}"#)],
        repairs: &[Fix::SingleQuotes],
        ..BLANK
    },
];

const THINK_DOC: &str = "Qwen3 / DeepSeek-R1 chat templates: reasoning in <think>…</think> before the answer; templates with enable_thinking put <think>\\n in the prompt";

pub(super) const THINK: &[Vector] = &[
    Vector {
        name: "think: block, then a call",
        doc: THINK_DOC,
        text: "<think>\nThe user wants the tests run.\n</think>\n\n<tool_call>\n{\"name\": \"run_shell\", \"arguments\": {\"command\": \"cargo test\"}}\n</tool_call>",
        calls: &[("run_shell", r#"{"command": "cargo test"}"#)],
        reasoning: "The user wants the tests run.",
        ..BLANK
    },
    Vector {
        name: "think: opening tag in the prompt, only </think> in the reply",
        doc: THINK_DOC,
        text: "I should list the files first.\n</think>\n\nListing.\n<tool_call>\n{\"name\": \"list_files\", \"arguments\": {}}\n</tool_call>",
        calls: &[("list_files", "{}")],
        content: "Listing.",
        reasoning: "I should list the files first.",
        ..BLANK
    },
    Vector {
        name: "think: unterminated at the start is all reasoning",
        doc: THINK_DOC,
        text: "<think>\nMaybe <tool_call>{\"name\": \"run_shell\", \"arguments\": {}}</tool_call> would",
        reasoning: "Maybe <tool_call>{\"name\": \"run_shell\", \"arguments\": {}}</tool_call> would",
        ..BLANK
    },
    Vector {
        name: "think: calls inside reasoning are never run",
        doc: THINK_DOC,
        text: "<think>maybe {\"name\": \"run_shell\", \"arguments\": {\"command\": \"rm -rf /\"}}</think>No call is needed.",
        content: "No call is needed.",
        reasoning: "maybe {\"name\": \"run_shell\", \"arguments\": {\"command\": \"rm -rf /\"}}",
        ..BLANK
    },
    Vector {
        name: "think: </think> inside a call's value is not the end of reasoning",
        doc: THINK_DOC,
        text: "<tool_call>\n<function=write_file>\n<parameter=content>\nend of </think> tag\n</parameter>\n</function>\n</tool_call>",
        calls: &[("write_file", r#"{"content": "end of </think> tag"}"#)],
        ..BLANK
    },
    Vector {
        name: "plain text with no calls, non-ASCII",
        doc: "any model: a reply that is only prose",
        text: "  Grüße! 这是一个答案 🎉\n\nDone.  ",
        content: "Grüße! 这是一个答案 🎉\n\nDone.",
        ..BLANK
    },
    Vector {
        name: "formats mixed in one reply keep their order",
        doc: "Hermes (Qwen2.5 template) then Mistral v11 (mistral-common) in one reply",
        text: "A <tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"1\"}}</tool_call> B [TOOL_CALLS]read_file[ARGS]{\"path\": \"2\"} C",
        calls: &[("read_file", r#"{"path": "1"}"#), ("read_file", r#"{"path": "2"}"#)],
        content: "A  B  C",
        ..BLANK
    },
];

#[test]
fn qwen3_coder_vectors() {
    check(QWEN3_CODER);
}

#[test]
fn hermes_vectors() {
    check(HERMES);
}

#[test]
fn think_vectors() {
    check(THINK);
}

#[test]
fn errors_past_the_limit_are_counted() {
    let text = "<tool_call></tool_call>".repeat(20);
    let parsed = parse_text_calls(&text, KNOWN);
    assert_eq!(parsed.errors.len(), 17, "{:?}", parsed.errors);
    assert_eq!(
        parsed.errors.last().map(String::as_str),
        Some("4 more tool calls could not be read either")
    );
}
