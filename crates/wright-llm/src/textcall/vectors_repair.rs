//! Vectors for repairs: the JSON small models break, in the carriers they use, with the
//! calls they must give and the repairs reported — and the broken calls that must not be
//! repaired (one reading is not sure) and go back as errors quoting the text.

use super::vectors::check;
use super::vectors::Vector;
use super::vectors::BLANK;
use super::Fix;

const OBSERVED: &str = "qwen2.5-coder-1.5b on llama.cpp, observed in wright runs (issue 11): `\"command\": \"git config user.email \"a@b\"\"` twice in three runs";
const HABITS: &str = "habits of small models with no constraint: Python-style quotes, trailing commas, braces or fences left open";

pub(super) const REPAIR: &[Vector] = &[
    Vector {
        name: "unescaped quotes in a fenced call (as observed)",
        doc: OBSERVED,
        text: "I will set the email.\n```json\n{\"name\": \"run_shell\", \"arguments\": {\"command\": \"git config user.email \"a@b\"\"}}\n```",
        calls: &[("run_shell", r#"{"command": "git config user.email \"a@b\""}"#)],
        content: "I will set the email.",
        repairs: &[Fix::UnescapedQuotes],
        ..BLANK
    },
    Vector {
        name: "unescaped quotes, bare, prose after",
        doc: OBSERVED,
        text: "{\"name\": \"run_shell\", \"arguments\": {\"command\": \"grep -r \"TODO\" src\", \"timeout\": 30}}\nThat finds them.",
        calls: &[("run_shell", r#"{"command": "grep -r \"TODO\" src", "timeout": 30}"#)],
        content: "That finds them.",
        repairs: &[Fix::UnescapedQuotes],
        ..BLANK
    },
    Vector {
        name: "unescaped quotes in <tool_call>",
        doc: OBSERVED,
        text: "<tool_call>\n{\"name\": \"run_shell\", \"arguments\": {\"command\": \"echo \"hi\" > a.txt\"}}\n</tool_call>",
        calls: &[("run_shell", r#"{"command": "echo \"hi\" > a.txt"}"#)],
        repairs: &[Fix::UnescapedQuotes],
        ..BLANK
    },
    Vector {
        name: "which quote ends the string is a guess: sent back, quoted",
        doc: OBSERVED,
        text: "{\"name\": \"run_shell\", \"arguments\": {\"command\": \"say \"hi\", \"path\": \"x\"}}",
        errors: &["odd number of quotes"],
        ..BLANK
    },
    Vector {
        name: "a guess in <tool_call> is sent back with the text",
        doc: OBSERVED,
        text: "<tool_call>{\"name\": \"run_shell\", \"arguments\": {\"command\": \"echo \"x\": \"y\"}}</tool_call>",
        errors: &["was not repaired"],
        ..BLANK
    },
    Vector {
        name: "single quotes, apostrophe inside",
        doc: HABITS,
        text: "```json\n{'name': 'write_file', 'arguments': {'path': 'NOTES', 'content': 'it's done'}}\n```",
        calls: &[("write_file", r#"{"path": "NOTES", "content": "it's done"}"#)],
        repairs: &[Fix::SingleQuotes],
        ..BLANK
    },
    Vector {
        name: "trailing comma in [TOOL_CALLS] arguments",
        doc: HABITS,
        text: "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\",}",
        calls: &[("get_weather", r#"{"city": "Paris"}"#)],
        repairs: &[Fix::TrailingCommas],
        ..BLANK
    },
    Vector {
        name: "brace left open in <tool_call>",
        doc: HABITS,
        text: "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}\n</tool_call>",
        calls: &[("read_file", r#"{"path": "a.rs"}"#)],
        repairs: &[Fix::UnclosedBrackets],
        ..BLANK
    },
    Vector {
        name: "fence and brace left open",
        doc: HABITS,
        text: "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}\n",
        calls: &[("read_file", r#"{"path": "a.rs"}"#)],
        repairs: &[Fix::UnclosedBrackets, Fix::UnclosedFence],
        ..BLANK
    },
    Vector {
        name: "raw line break inside a string (DeepSeek V3.1 arguments)",
        doc: HABITS,
        text: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>write_file<｜tool▁sep｜>{\"path\": \"a.py\", \"content\": \"print(1)\nprint(2)\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        calls: &[("write_file", r#"{"path": "a.py", "content": "print(1)\nprint(2)"}"#)],
        repairs: &[Fix::RawControl],
        ..BLANK
    },
    Vector {
        name: "harmony arguments with a trailing comma",
        doc: HABITS,
        text: "<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{\"path\": \"a\",}<|call|>",
        calls: &[("read_file", r#"{"path": "a"}"#)],
        repairs: &[Fix::TrailingCommas],
        ..BLANK
    },
    Vector {
        name: "cut off inside a string: not completed, sent back",
        doc: HABITS,
        text: "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\", \"content\": \"fn main() {",
        errors: &["never closed"],
        ..BLANK
    },
    Vector {
        name: "cut off after a key: not completed",
        doc: HABITS,
        text: "[TOOL_CALLS]read_file[ARGS]{\"path\": \"a\", \"limit\"",
        errors: &["cut off"],
        ..BLANK
    },
    Vector {
        name: "bare broken JSON of a known tool is an error, not prose",
        doc: HABITS,
        text: "Running it.\n{\"name\": \"run_shell\", \"arguments\": {\"command\": \"ls\" \"-l\"}}",
        content: "Running it.",
        errors: &["two strings side by side"],
        ..BLANK
    },
    Vector {
        name: "broken JSON naming no known tool stays prose",
        doc: HABITS,
        text: "Config looks like {\"name\": \"app\", \"port\": 80,}",
        content: "Config looks like {\"name\": \"app\", \"port\": 80,}",
        ..BLANK
    },
];

#[test]
fn repair_vectors() {
    check(REPAIR);
}
