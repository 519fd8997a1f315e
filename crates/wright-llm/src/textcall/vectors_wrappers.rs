//! Vectors for the JSON call objects models wrap in something other than `<tool_call>`:
//! the wrappers Hermes-style models are seen to write instead (`<tool>`, `<tools>`,
//! `<response>`, `<json>`, `<function_call>`, an `xml` fence, `<function name="…">`), the
//! generic `{"tool_call": …}` / `{"tool_calls": […]}` answer, and the JSON lists some
//! templates put between their own tokens (Granite 3 `<|tool_call|>`, Nemotron Nano v2
//! `<TOOLCALL>`, FireFunction v2 `functools`, Apriel `<tool_calls>`, LFM2
//! `<|tool_call_start|>`, GigaChat 3 `<|function_call|>`). Each table names its source.

use super::vectors::check;
use super::vectors::Vector;
use super::vectors::BLANK;

const HERMES_WRAPPERS_DOC: &str = "NousResearch Hermes-Function-Calling (Hermes 2 Pro / 3): the call is {\"name\": NAME, \"arguments\": {…}} in <tool_call>; llama.cpp's Hermes 2 Pro handler (common/chat.cpp) also reads the wrappers the models write instead: <tool>, <tools>, <response>, <json>, <xml>, <JSON>, <function_call>, ```xml / ```json fences and <function name=\"NAME\">{args}</function>";

pub(super) const HERMES_WRAPPERS: &[Vector] = &[
    Vector {
        name: "hermes wrapper: <function name=\"NAME\"> with JSON arguments",
        doc: HERMES_WRAPPERS_DOC,
        text: "<function name=\"read_file\">\n{\"path\": \"Cargo.toml\"}\n</function>",
        calls: &[("read_file", r#"{"path": "Cargo.toml"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes wrapper: <tool>",
        doc: HERMES_WRAPPERS_DOC,
        text: "<tool>\n  {\"name\": \"run_shell\", \"arguments\": {\"command\": \"uname -a\"}}\n</tool>",
        calls: &[("run_shell", r#"{"command": "uname -a"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes wrapper: <tools>, text before",
        doc: HERMES_WRAPPERS_DOC,
        text: "Listing first.\n<tools>\n{\"name\": \"list_files\", \"arguments\": {\"dir\": \"src\"}}\n</tools>",
        calls: &[("list_files", r#"{"dir": "src"}"#)],
        content: "Listing first.",
        ..BLANK
    },
    Vector {
        name: "hermes wrapper: <response>",
        doc: HERMES_WRAPPERS_DOC,
        text: "<response>\n    {\"name\": \"search\", \"arguments\": {\"query\": \"borrow checker\"}}\n</response>",
        calls: &[("search", r#"{"query": "borrow checker"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes wrapper: <response> inside an xml fence",
        doc: HERMES_WRAPPERS_DOC,
        text: "```xml\n<response>\n  {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</response>\n```",
        calls: &[("get_weather", r#"{"city": "Oslo"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes wrapper: bare call object in an xml fence",
        doc: HERMES_WRAPPERS_DOC,
        text: "```xml\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}\n```",
        calls: &[("read_file", r#"{"path": "notes.txt"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes wrapper: call object in a fence without a language",
        doc: HERMES_WRAPPERS_DOC,
        text: "```\n   {\"name\": \"list_files\", \"arguments\": {}}\n```",
        calls: &[("list_files", "{}")],
        ..BLANK
    },
    Vector {
        name: "hermes wrapper: <function_call> inside a json fence",
        doc: HERMES_WRAPPERS_DOC,
        text: "```json\n\n   <function_call> {\"name\": \"search\", \"arguments\": {\"query\": \"tokio\"}} \n   </function_call> \n``` ",
        calls: &[("search", r#"{"query": "tokio"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes wrapper: <json>",
        doc: HERMES_WRAPPERS_DOC,
        text: "<json>\n{\"name\": \"run_shell\", \"arguments\": {\"command\": \"df -h\"}}\n</json>",
        calls: &[("run_shell", r#"{"command": "df -h"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes wrapper: <xml> with the object over several lines",
        doc: HERMES_WRAPPERS_DOC,
        text: "<xml>\n  {\n    \"name\": \"read_file\",\n    \"arguments\": {\"path\": \"README\"}\n  }\n</xml>",
        calls: &[("read_file", r#"{"path": "README"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes wrapper: <JSON> in capitals",
        doc: HERMES_WRAPPERS_DOC,
        text: "<JSON>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}\n</JSON>",
        calls: &[("get_weather", r#"{"city": "Lima"}"#)],
        ..BLANK
    },
    Vector {
        name: "hermes: two <function=NAME>{json} calls on their own lines",
        doc: HERMES_WRAPPERS_DOC,
        text: "<function=read_file>{\"path\": \"a.rs\"}</function>\n<function=run_shell>{\"command\": \"echo 'hi there'\"}</function>",
        calls: &[
            ("read_file", r#"{"path": "a.rs"}"#),
            ("run_shell", r#"{"command": "echo 'hi there'"}"#),
        ],
        ..BLANK
    },
    Vector {
        name: "hermes: bare call object after prose",
        doc: HERMES_WRAPPERS_DOC,
        text: "I will check it:\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}",
        calls: &[("read_file", r#"{"path": "x"}"#)],
        content: "I will check it:",
        ..BLANK
    },
    Vector {
        name: "hermes: python code with quotes and a newline escape in the arguments",
        doc: HERMES_WRAPPERS_DOC,
        text: "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"p.py\", \"content\": \"# a program\\nprint(\\\"hey\\\")\"}}\n</tool_call>",
        calls: &[("write_file", r##"{"path": "p.py", "content": "# a program\nprint(\"hey\")"}"##)],
        ..BLANK
    },
    Vector {
        name: "hermes wrapper: a tool not on offer stays content",
        doc: HERMES_WRAPPERS_DOC,
        text: "```xml\n<response>\n{\"name\": \"launch_rockets\", \"arguments\": {}}\n</response>\n```",
        content: "```xml\n<response>\n{\"name\": \"launch_rockets\", \"arguments\": {}}\n</response>\n```",
        ..BLANK
    },
    Vector {
        name: "hermes: a wrapper tag in prose is not a call",
        doc: HERMES_WRAPPERS_DOC,
        text: "Wrap the answer in <response> tags, like <response>42</response>.",
        content: "Wrap the answer in <response> tags, like <response>42</response>.",
        ..BLANK
    },
];

const GENERIC_DOC: &str = "llama.cpp docs/function-calling.md, Generic format (models without a native format answer with JSON): {\"tool_call\": {\"name\": …, \"arguments\": {…}}}, {\"tool_calls\": [{\"name\": …, \"arguments\": {…}, \"id\": …}]} or {\"response\": \"text\"}";

pub(super) const GENERIC: &[Vector] = &[
    Vector {
        name: "generic: {\"tool_call\": {…}}",
        doc: GENERIC_DOC,
        text: "{\"tool_call\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Kyiv\"}}}",
        calls: &[("get_weather", r#"{"city": "Kyiv"}"#)],
        ..BLANK
    },
    Vector {
        name: "generic: {\"tool_calls\": [...]} with ids, pretty-printed",
        doc: GENERIC_DOC,
        text: "{\n  \"tool_calls\": [\n    {\n      \"name\": \"read_file\",\n      \"arguments\": {\n        \"path\": \"a\"\n      },\n      \"id\": \"call_7\"\n    },\n    {\n      \"name\": \"read_file\",\n      \"arguments\": {\"path\": \"b\"},\n      \"id\": \"call_8\"\n    }\n  ]\n}",
        calls: &[("read_file", r#"{"path": "a"}"#), ("read_file", r#"{"path": "b"}"#)],
        ..BLANK
    },
    Vector {
        name: "generic: {\"response\": …} is the answer",
        doc: GENERIC_DOC,
        text: "{\n  \"response\": \"It is sunny.\\nEnjoy!\"\n}",
        content: "It is sunny.\nEnjoy!",
        ..BLANK
    },
];

const JSON_LISTS_DOC: &str = "chat templates that put a JSON list of {\"name\", \"arguments\"} between their own tokens: IBM Granite 3.x (<|tool_call|>[…]), NVIDIA Nemotron Nano v2 (<TOOLCALL>[…]</TOOLCALL>), FireFunction v2 ( functools[…]), ServiceNow Apriel 1.5 (<tool_calls>[…]</tool_calls>), LiquidAI LFM2 JSON tools (<|tool_call_start|>[…]<|tool_call_end|>), GigaChat 3.1 (<|function_call|>{…})";

pub(super) const JSON_LISTS: &[Vector] = &[
    Vector {
        name: "granite 3: <|tool_call|> list, reasoning before",
        doc: JSON_LISTS_DOC,
        text: "<think>Need the file.</think><|tool_call|>[{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}]",
        calls: &[("read_file", r#"{"path": "a"}"#)],
        reasoning: "Need the file.",
        ..BLANK
    },
    Vector {
        name: "granite 3: answer wrapped in <response>",
        doc: JSON_LISTS_DOC,
        text: "<think>Simple.</think><response>All good.</response>",
        content: "All good.",
        reasoning: "Simple.",
        ..BLANK
    },
    Vector {
        name: "nemotron nano v2: <TOOLCALL> list, text after",
        doc: JSON_LISTS_DOC,
        text: "<TOOLCALL>[{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}, {\"name\": \"list_files\", \"arguments\": {}}]</TOOLCALL>Searching now.",
        calls: &[("search", r#"{"query": "x"}"#), ("list_files", "{}")],
        content: "Searching now.",
        ..BLANK
    },
    Vector {
        name: "nemotron nano v2: reasoning closed, then <TOOLCALL>",
        doc: JSON_LISTS_DOC,
        text: "I should look.\n</think>\n\n<TOOLCALL>[{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}]</TOOLCALL>\n",
        calls: &[("read_file", r#"{"path": "b"}"#)],
        reasoning: "I should look.",
        ..BLANK
    },
    Vector {
        name: "firefunction v2: functools list",
        doc: JSON_LISTS_DOC,
        text: " functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}, {\"name\": \"search\", \"arguments\": {\"query\": \"rome\"}}]",
        calls: &[("get_weather", r#"{"city": "Rome"}"#), ("search", r#"{"query": "rome"}"#)],
        ..BLANK
    },
    Vector {
        name: "apriel 1.5: <tool_calls> list",
        doc: JSON_LISTS_DOC,
        text: "Running it.\n<tool_calls>[{\"name\": \"run_shell\", \"arguments\": {\"command\": \"make\"}}]</tool_calls>",
        calls: &[("run_shell", r#"{"command": "make"}"#)],
        content: "Running it.",
        ..BLANK
    },
    Vector {
        name: "apriel 1.6: reasoning up to [BEGIN FINAL RESPONSE], then the calls",
        doc: JSON_LISTS_DOC,
        text: "The user wants a listing.\n[BEGIN FINAL RESPONSE]\n<tool_calls>[{\"name\": \"list_files\", \"arguments\": {}}]</tool_calls>",
        calls: &[("list_files", "{}")],
        reasoning: "The user wants a listing.",
        ..BLANK
    },
    Vector {
        name: "lfm2: JSON list between <|tool_call_start|> and <|tool_call_end|>, text after",
        doc: JSON_LISTS_DOC,
        text: "<|tool_call_start|>[{\n  \"name\": \"get_weather\",\n  \"arguments\": {\"city\": \"Nice\"}\n}]<|tool_call_end|>Checking.",
        calls: &[("get_weather", r#"{"city": "Nice"}"#)],
        content: "Checking.",
        ..BLANK
    },
    Vector {
        name: "gigachat 3.1: <|function_call|> object, text before",
        doc: JSON_LISTS_DOC,
        text: "One moment.<|function_call|>{\"name\": \"search\", \"arguments\": {\"query\": \"ok\"}}",
        calls: &[("search", r#"{"query": "ok"}"#)],
        content: "One moment.",
        ..BLANK
    },
    Vector {
        name: "nemotron / apriel tokens named in prose stay text",
        doc: JSON_LISTS_DOC,
        text: "Nemotron writes <TOOLCALL> and Apriel <tool_calls> before their calls.",
        content: "Nemotron writes <TOOLCALL> and Apriel <tool_calls> before their calls.",
        ..BLANK
    },
    Vector {
        name: "nemotron nano v2: list cut off is an error",
        doc: JSON_LISTS_DOC,
        text: "<TOOLCALL>[{\"name\": \"read_file\", \"arguments\": {\"path\": \"a",
        errors: &["could not be read"],
        ..BLANK
    },
];

#[test]
fn hermes_wrapper_vectors() {
    check(HERMES_WRAPPERS);
}

#[test]
fn generic_vectors() {
    check(GENERIC);
}

#[test]
fn json_list_vectors() {
    check(JSON_LISTS);
}
