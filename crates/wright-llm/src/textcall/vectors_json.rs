//! Vectors for bare and fenced JSON calls, GLM-4.5 and Gemma. Each table names the
//! public source its texts follow.

use super::vectors::check;
use super::vectors::Vector;
use super::vectors::BLANK;
use super::Fix;

const QWEN25_CODER_DOC: &str = "Qwen2.5-Coder-1.5B-Instruct on llama.cpp (observed output: the Hermes object in a ```json fence, no <tool_call>)";
const JSON_DOC: &str = "Gemma function-calling guide (JSON variant {\"name\": …, \"parameters\": …}); OpenAI tool_calls entries ({\"function\": {…}}); agent prompts using {\"tool\": …, \"args\": …}";

pub(super) const BARE: &[Vector] = &[
    Vector {
        name: "qwen2.5-coder: fenced JSON",
        doc: QWEN25_CODER_DOC,
        text: "```json\n{\"name\": \"run_shell\", \"arguments\": {\"command\": \"cargo test\"}}\n```",
        calls: &[("run_shell", r#"{"command": "cargo test"}"#)],
        ..BLANK
    },
    Vector {
        name: "qwen2.5-coder: fenced JSON with prose around",
        doc: QWEN25_CODER_DOC,
        text: "I'll run the tests.\n\n```json\n{\"name\": \"run_shell\", \"arguments\": {\"command\": \"cargo test\"}}\n```\n\nThen I'll report.",
        calls: &[("run_shell", r#"{"command": "cargo test"}"#)],
        content: "I'll run the tests.\n\nThen I'll report.",
        ..BLANK
    },
    Vector {
        name: "qwen2.5-coder: two fenced calls",
        doc: QWEN25_CODER_DOC,
        text: "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```\n```json\n{\"name\": \"run_shell\", \"arguments\": {\"command\": \"cargo build\"}}\n```",
        calls: &[("read_file", r#"{"path": "a"}"#), ("run_shell", r#"{"command": "cargo build"}"#)],
        ..BLANK
    },
    Vector {
        name: "qwen2.5-coder: fence never closed",
        doc: QWEN25_CODER_DOC,
        text: "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}\n",
        calls: &[("read_file", r#"{"path": "x"}"#)],
        repairs: &[Fix::UnclosedFence],
        ..BLANK
    },
    Vector {
        name: "bare JSON inside prose",
        doc: QWEN25_CODER_DOC,
        text: "Running {\"name\": \"run_shell\", \"arguments\": {\"command\": \"ls\"}} now.",
        calls: &[("run_shell", r#"{"command": "ls"}"#)],
        content: "Running  now.",
        ..BLANK
    },
    Vector {
        name: "bare JSON naming a tool not on offer is an example, kept as content",
        doc: JSON_DOC,
        text: "For example: {\"name\": \"send_email\", \"arguments\": {\"to\": \"a@b.c\"}}",
        content: "For example: {\"name\": \"send_email\", \"arguments\": {\"to\": \"a@b.c\"}}",
        ..BLANK
    },
    Vector {
        name: "a call shape nested in other JSON is not run",
        doc: JSON_DOC,
        text: "{\"example\": {\"name\": \"run_shell\", \"arguments\": {\"command\": \"ls\"}}}",
        content: "{\"example\": {\"name\": \"run_shell\", \"arguments\": {\"command\": \"ls\"}}}",
        ..BLANK
    },
    Vector {
        name: "a fence labelled after the tool, as qwen2.5-coder-1.5b wrote it",
        doc: JSON_DOC,
        text: "```terminal\n{\"name\": \"run_shell\", \"arguments\": {\"command\": \"ls\"}}\n```",
        calls: &[("run_shell", r#"{"command": "ls"}"#)],
        ..BLANK
    },
    Vector {
        name: "JSON in a fence of another language is code, not a call",
        doc: JSON_DOC,
        text: "```python\ncall = {\"name\": \"run_shell\", \"arguments\": {\"command\": \"ls\"}}\n```",
        content: "```python\ncall = {\"name\": \"run_shell\", \"arguments\": {\"command\": \"ls\"}}\n```",
        ..BLANK
    },
    Vector {
        name: "bare JSON list of calls",
        doc: JSON_DOC,
        text: "[{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}]",
        calls: &[("read_file", r#"{"path": "a"}"#), ("read_file", r#"{"path": "b"}"#)],
        ..BLANK
    },
    Vector {
        name: "OpenAI-style function wrapper with string arguments",
        doc: JSON_DOC,
        text: "{\"type\": \"function\", \"function\": {\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"x\\\"}\"}}",
        calls: &[("read_file", r#"{"path": "x"}"#)],
        ..BLANK
    },
    Vector {
        name: "tool / args keys",
        doc: JSON_DOC,
        text: "{\"tool\": \"search\", \"args\": {\"query\": \"rust\"}}",
        calls: &[("search", r#"{"query": "rust"}"#)],
        ..BLANK
    },
    Vector {
        name: "bare JSON of a known tool with inline arguments",
        doc: QWEN25_CODER_DOC,
        text: "{\"name\": \"read_file\", \"path\": \"src/lib.rs\"}",
        calls: &[("read_file", r#"{"path": "src/lib.rs"}"#)],
        ..BLANK
    },
    Vector {
        name: "the model echoing a tool definition is not a call",
        doc: JSON_DOC,
        text: "I have {\"type\": \"function\", \"function\": {\"name\": \"read_file\", \"parameters\": {\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}}}}} and {\"name\": \"run_shell\", \"description\": \"Runs a command\"}.",
        content: "I have {\"type\": \"function\", \"function\": {\"name\": \"read_file\", \"parameters\": {\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}}}}} and {\"name\": \"run_shell\", \"description\": \"Runs a command\"}.",
        ..BLANK
    },
    Vector {
        name: "JSON that is not a call stays content",
        doc: JSON_DOC,
        text: "Here is the record: ```json\n{\"name\": \"Alice\", \"age\": 3}\n```",
        content: "Here is the record: ```json\n{\"name\": \"Alice\", \"age\": 3}\n```",
        ..BLANK
    },
    Vector {
        name: "bare JSON with its braces left open is closed",
        doc: QWEN25_CODER_DOC,
        text: "{\"name\": \"run_shell\", \"arguments\": {\"command\": \"ls\"",
        calls: &[("run_shell", r#"{"command": "ls"}"#)],
        repairs: &[Fix::UnclosedBrackets],
        ..BLANK
    },
    Vector {
        name: "bare JSON of a known tool with unreadable arguments is an error",
        doc: QWEN25_CODER_DOC,
        text: "{\"name\": \"run_shell\", \"arguments\": \"ls -la\"}",
        errors: &["`run_shell`"],
        ..BLANK
    },
    Vector {
        name: "trailing commas are dropped",
        doc: QWEN25_CODER_DOC,
        text: "{\"name\": \"run_shell\", \"arguments\": {\"command\": \"ls\",},}",
        calls: &[("run_shell", r#"{"command": "ls"}"#)],
        repairs: &[Fix::TrailingCommas],
        ..BLANK
    },
];

const GLM_DOC: &str = "GLM-4.5 / GLM-4.7 chat templates (zai-org): <tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n</tool_call>";

pub(super) const GLM: &[Vector] = &[
    Vector {
        name: "glm-4.5: one call, values stay strings",
        doc: GLM_DOC,
        text: "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>北京</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
        calls: &[("get_weather", r#"{"city": "北京", "days": "3"}"#)],
        ..BLANK
    },
    Vector {
        name: "glm-4.5: reasoning, text, call",
        doc: GLM_DOC,
        text: "<think>用户想知道天气。</think>\n我来查询。\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>",
        calls: &[("get_weather", r#"{"city": "Beijing"}"#)],
        content: "我来查询。",
        reasoning: "用户想知道天气。",
        ..BLANK
    },
    Vector {
        name: "glm-4.7: compact, two calls",
        doc: GLM_DOC,
        text: "<tool_call>read_file<arg_key>path</arg_key><arg_value>a.rs</arg_value></tool_call><tool_call>read_file<arg_key>path</arg_key><arg_value>b.rs</arg_value></tool_call>",
        calls: &[("read_file", r#"{"path": "a.rs"}"#), ("read_file", r#"{"path": "b.rs"}"#)],
        ..BLANK
    },
    Vector {
        name: "glm: a call without arguments",
        doc: GLM_DOC,
        text: "<tool_call>list_files</tool_call>",
        calls: &[("list_files", "{}")],
        ..BLANK
    },
    Vector {
        name: "glm: unterminated value",
        doc: GLM_DOC,
        text: "<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>line 1\nline 2",
        calls: &[("write_file", r#"{"content": "line 1\nline 2"}"#)],
        ..BLANK
    },
    Vector {
        name: "glm: JSON text in a value stays a string",
        doc: GLM_DOC,
        text: "<tool_call>search\n<arg_key>tags</arg_key>\n<arg_value>[\"a\", \"b\"]</arg_value>\n</tool_call>",
        calls: &[("search", r#"{"tags": "[\"a\", \"b\"]"}"#)],
        ..BLANK
    },
    Vector {
        name: "glm: key without value",
        doc: GLM_DOC,
        text: "<tool_call>search\n<arg_key>query</arg_key>\n</tool_call>",
        errors: &["no `<arg_value>`"],
        ..BLANK
    },
];

const GEMMA_DOC: &str = "ai.google.dev Gemma docs: function calling ([func(a=1)] or {\"name\", \"parameters\"}) and the tool_code guide (calls in ```tool_code fences)";

pub(super) const GEMMA: &[Vector] = &[
    Vector {
        name: "gemma: ```tool_code block",
        doc: GEMMA_DOC,
        text: "I'll look that up.\n```tool_code\nget_weather(city=\"London\")\n```",
        calls: &[("get_weather", r#"{"city": "London"}"#)],
        content: "I'll look that up.",
        ..BLANK
    },
    Vector {
        name: "gemma: two calls in one tool_code block",
        doc: GEMMA_DOC,
        text: "```tool_code\nget_weather(city=\"London\")\nget_weather(city=\"Paris\")\n```\nWaiting for ```tool_output.",
        calls: &[("get_weather", r#"{"city": "London"}"#), ("get_weather", r#"{"city": "Paris"}"#)],
        content: "Waiting for ```tool_output.",
        ..BLANK
    },
    Vector {
        name: "gemma: pythonic list",
        doc: GEMMA_DOC,
        text: "[get_product_name_by_PID(PID=\"807ZPKBL9V\")]",
        known: &["get_product_name_by_PID"],
        calls: &[("get_product_name_by_PID", r#"{"PID": "807ZPKBL9V"}"#)],
        ..BLANK
    },
    Vector {
        name: "gemma: JSON with parameters",
        doc: GEMMA_DOC,
        text: "{\"name\": \"get_product_name_by_PID\", \"parameters\": {\"PID\": \"807ZPKBL9V\"}}",
        known: &["get_product_name_by_PID"],
        calls: &[("get_product_name_by_PID", r#"{"PID": "807ZPKBL9V"}"#)],
        ..BLANK
    },
    Vector {
        name: "gemma: unclosed call in tool_code",
        doc: GEMMA_DOC,
        text: "```tool_code\nget_weather(city=\"London\"\n```",
        errors: &["cut off"],
        ..BLANK
    },
];

#[test]
fn bare_json_vectors() {
    check(BARE);
}

#[test]
fn glm_vectors() {
    check(GLM);
}

#[test]
fn gemma_vectors() {
    check(GEMMA);
}
