//! Vectors for the formats written with special tokens: Mistral, Llama 3.x, DeepSeek,
//! Kimi K2 and gpt-oss harmony. Each table names the public source its texts follow.

use super::vectors::check;
use super::vectors::Vector;
use super::vectors::BLANK;

const MISTRAL_V3_DOC: &str = "mistral-common tokenizer v3 (Mistral-7B-Instruct-v0.3): [TOOL_CALLS] [{\"name\": …, \"arguments\": {…}}]";
const MISTRAL_V11_DOC: &str = "mistral-common tokenizer v11+/v13 (Mistral-Small-3.2, Magistral, Devstral chat templates): [TOOL_CALLS]NAME[ARGS]{…}, optional [CALL_ID]id, [THINK]…[/THINK] reasoning";

pub(super) const MISTRAL: &[Vector] = &[
    Vector {
        name: "mistral v3: JSON list of two calls",
        doc: MISTRAL_V3_DOC,
        text: "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}}]</s>",
        calls: &[("get_weather", r#"{"city": "Paris"}"#), ("get_weather", r#"{"city": "Zürich"}"#)],
        ..BLANK
    },
    Vector {
        name: "mistral v11: two calls, nested JSON with escaped quotes",
        doc: MISTRAL_V11_DOC,
        text: "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]search[ARGS]{\"query\": \"café \\\"best\\\"\", \"filters\": {\"tags\": [\"a\"]}}",
        calls: &[
            ("get_weather", r#"{"city": "Paris"}"#),
            ("search", r#"{"query": "café \"best\"", "filters": {"tags": ["a"]}}"#),
        ],
        ..BLANK
    },
    Vector {
        name: "mistral v11: [CALL_ID], text before",
        doc: MISTRAL_V11_DOC,
        text: "Checking.[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{\"city\": \"Bern\"}",
        calls: &[("get_weather", r#"{"city": "Bern"}"#)],
        content: "Checking.",
        ..BLANK
    },
    Vector {
        name: "magistral: [THINK] reasoning, then a call",
        doc: MISTRAL_V11_DOC,
        text: "[THINK]I should call the tool.[/THINK][TOOL_CALLS]get_weather[ARGS]{\"city\": \"Roma\"}",
        calls: &[("get_weather", r#"{"city": "Roma"}"#)],
        reasoning: "I should call the tool.",
        ..BLANK
    },
    Vector {
        name: "mistral v11: arguments cut off",
        doc: MISTRAL_V11_DOC,
        text: "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Par",
        errors: &["`get_weather`"],
        ..BLANK
    },
    Vector {
        name: "mistral: marker followed by prose",
        doc: MISTRAL_V11_DOC,
        text: "[TOOL_CALLS] I will now call a tool.",
        content: "I will now call a tool.",
        errors: &["expected a function name"],
        ..BLANK
    },
];

const LLAMA31_DOC: &str = "meta-llama/llama-models llama3_1 prompt_format.md: JSON based tool calling (<|python_tag|>{…\"parameters\"…}<|eom_id|>), `<function>` based tool calling, built-in tools";
const LLAMA32_DOC: &str = "meta-llama/llama-models llama3_2 text_prompt_format.md: zero-shot calls [func(a=1, b='x'), …]<|eot_id|>, also after <|python_tag|>";

pub(super) const LLAMA: &[Vector] = &[
    Vector {
        name: "llama 3.1: JSON after <|python_tag|>",
        doc: LLAMA31_DOC,
        text: "<|python_tag|>{\n    \"type\": \"function\",\n    \"name\": \"trending_songs\",\n    \"parameters\": {\n        \"n\": \"10\",\n        \"genre\": \"all\"\n    }\n}<|eom_id|>",
        calls: &[("trending_songs", r#"{"n": "10", "genre": "all"}"#)],
        ..BLANK
    },
    Vector {
        name: "llama 3.1: <function=NAME>{json}</function>",
        doc: LLAMA31_DOC,
        text: "<function=trending_songs>{\"n\": 10}</function><|eot_id|>",
        calls: &[("trending_songs", r#"{"n": 10}"#)],
        ..BLANK
    },
    Vector {
        name: "llama 3.1: built-in tool call",
        doc: LLAMA31_DOC,
        text: "<|python_tag|>brave_search.call(query=\"Menlo Park weather\")<|eom_id|>",
        calls: &[("brave_search", r#"{"query": "Menlo Park weather"}"#)],
        ..BLANK
    },
    Vector {
        name: "llama 3.1: code interpreter output is not a call",
        doc: LLAMA31_DOC,
        text: "<|python_tag|>def is_prime(n):\n    return n > 1\n\nprint(is_prime(7))<|eom_id|>",
        errors: &["not a function call"],
        ..BLANK
    },
    Vector {
        name: "llama 3.1: several JSON objects separated by ;",
        doc: LLAMA31_DOC,
        text: "<|python_tag|>{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}; {\"name\": \"read_file\", \"parameters\": {\"path\": \"b\"}}<|eom_id|>",
        calls: &[("read_file", r#"{"path": "a"}"#), ("read_file", r#"{"path": "b"}"#)],
        ..BLANK
    },
    Vector {
        name: "llama 3.2: pythonic list, two calls",
        doc: LLAMA32_DOC,
        text: "[get_weather(city='San Francisco', metric='celsius'), get_weather(city='Seattle', metric='celsius')]<|eot_id|>",
        calls: &[
            ("get_weather", r#"{"city": "San Francisco", "metric": "celsius"}"#),
            ("get_weather", r#"{"city": "Seattle", "metric": "celsius"}"#),
        ],
        ..BLANK
    },
    Vector {
        name: "llama 3.2: pythonic list after <|python_tag|>",
        doc: LLAMA32_DOC,
        text: "<|python_tag|>[get_weather(city=\"San Francisco\", metric=\"celsius\")]<|eot_id|>",
        calls: &[("get_weather", r#"{"city": "San Francisco", "metric": "celsius"}"#)],
        ..BLANK
    },
    Vector {
        name: "llama 3.2: integer argument",
        doc: LLAMA32_DOC,
        text: "[get_user_info(user_id=7890, special='black')]<|eot_id|>",
        known: &["get_user_info"],
        calls: &[("get_user_info", r#"{"user_id": 7890, "special": "black"}"#)],
        ..BLANK
    },
    Vector {
        name: "pythonic: Python literals of every kind",
        doc: LLAMA32_DOC,
        text: "[run_shell(command=\"echo 'hi'\", timeout=1.5, env={'A': \"1\"}, args=['-l', True, None, -3], note='''two\nlines''')]",
        calls: &[("run_shell", r#"{"command": "echo 'hi'", "timeout": 1.5, "env": {"A": "1"}, "args": ["-l", true, null, -3], "note": "two\nlines"}"#)],
        ..BLANK
    },
    Vector {
        name: "pythonic: names not on offer stay prose",
        doc: LLAMA32_DOC,
        text: "In Python you would write [foo(a=1)] here.",
        content: "In Python you would write [foo(a=1)] here.",
        ..BLANK
    },
];

const DEEPSEEK_V3_DOC: &str = "DeepSeek-V3 / DeepSeek-R1 chat template (tokenizer_config.json): <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{…}\\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
const DEEPSEEK_V31_DOC: &str =
    "DeepSeek-V3.1 chat template: <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>";

pub(super) const DEEPSEEK: &[Vector] = &[
    Vector {
        name: "deepseek v3: one call",
        doc: DEEPSEEK_V3_DOC,
        text: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Tokyo\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>",
        calls: &[("get_weather", r#"{"location": "Tokyo"}"#)],
        ..BLANK
    },
    Vector {
        name: "deepseek r1: reasoning, text, two calls",
        doc: DEEPSEEK_V3_DOC,
        text: "<think>\nNeed the weather twice.\n</think>\n\nLet me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Tokyo\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"北京\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        calls: &[("get_weather", r#"{"location": "Tokyo"}"#), ("get_weather", r#"{"location": "北京"}"#)],
        content: "Let me check.",
        reasoning: "Need the weather twice.",
        ..BLANK
    },
    Vector {
        name: "deepseek v3.1: name before the separator",
        doc: DEEPSEEK_V31_DOC,
        text: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\": \"Tokyo\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        calls: &[("get_weather", r#"{"location": "Tokyo"}"#)],
        ..BLANK
    },
    Vector {
        name: "deepseek v3.1: unterminated",
        doc: DEEPSEEK_V31_DOC,
        text: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\": \"a.rs\"}",
        calls: &[("read_file", r#"{"path": "a.rs"}"#)],
        ..BLANK
    },
    Vector {
        name: "deepseek r1 distill: <｜tool▁calls｜> with no call begin",
        doc: "llama.cpp tests/test-chat.cpp, DeepSeek R1 format: <｜tool▁calls｜>function<｜tool▁sep｜>NAME\\n```json …",
        text: "<｜tool▁calls｜>function<｜tool▁sep｜>read_file\n```json\n{\"path\": \"a\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        calls: &[("read_file", r#"{"path": "a"}"#)],
        ..BLANK
    },
    Vector {
        name: "deepseek v3: broken JSON",
        doc: DEEPSEEK_V3_DOC,
        text: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        errors: &["`get_weather`"],
        ..BLANK
    },
];

const KIMI_DOC: &str =
    "MoonshotAI/Kimi-K2 docs/tool_call_guidance.md (Manually Parsing Tool Calls)";

pub(super) const KIMI: &[Vector] = &[
    Vector {
        name: "kimi k2: one call",
        doc: KIMI_DOC,
        text: "<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Beijing\"}<|tool_call_end|>\n<|tool_calls_section_end|>",
        calls: &[("get_weather", r#"{"city": "Beijing"}"#)],
        ..BLANK
    },
    Vector {
        name: "kimi k2: two calls, text before",
        doc: KIMI_DOC,
        text: "Let me check both.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Beijing\"}<|tool_call_end|><|tool_call_begin|>functions.search:1<|tool_call_argument_begin|>{\"query\": \"天气\"}<|tool_call_end|><|tool_calls_section_end|>",
        calls: &[("get_weather", r#"{"city": "Beijing"}"#), ("search", r#"{"query": "天气"}"#)],
        content: "Let me check both.",
        ..BLANK
    },
    Vector {
        name: "kimi k2: arguments cut off",
        doc: KIMI_DOC,
        text: "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Bei",
        errors: &["cut off"],
        ..BLANK
    },
];

const HARMONY_DOC: &str =
    "openai/harmony docs/format.md (Receiving tool calls, Preambles, Handling reasoning output)";

pub(super) const HARMONY: &[Vector] = &[
    Vector {
        name: "harmony: analysis, then a call",
        doc: HARMONY_DOC,
        text: "<|channel|>analysis<|message|>Need to use function get_weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"San Francisco\"}<|call|>",
        calls: &[("get_weather", r#"{"location": "San Francisco"}"#)],
        reasoning: "Need to use function get_weather.",
        ..BLANK
    },
    Vector {
        name: "harmony: final answer",
        doc: HARMONY_DOC,
        text: "<|channel|>analysis<|message|>User asks: \"What is 2 + 2?\" Simple arithmetic. Provide answer.<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>",
        content: "2 + 2 = 4.",
        reasoning: "User asks: \"What is 2 + 2?\" Simple arithmetic. Provide answer.",
        ..BLANK
    },
    Vector {
        name: "harmony: preamble on commentary, recipient before <|constrain|>",
        doc: HARMONY_DOC,
        text: "<|channel|>analysis<|message|>{long chain of thought}<|end|><|start|>assistant<|channel|>commentary<|message|>**Action plan**:\n1. Generate an HTML file<|end|><|start|>assistant<|channel|>commentary to=functions.generate_file<|constrain|>json<|message|>{\"template\": \"basic_html\", \"path\": \"index.html\"}<|call|>",
        calls: &[("generate_file", r#"{"template": "basic_html", "path": "index.html"}"#)],
        content: "**Action plan**:\n1. Generate an HTML file",
        reasoning: "{long chain of thought}",
        ..BLANK
    },
    Vector {
        name: "harmony: recipient in the role part",
        doc: HARMONY_DOC,
        text: "<|start|>assistant to=functions.get_current_weather<|channel|>commentary <|constrain|>json<|message|>{\"location\":\"San Francisco, CA\"}<|call|>",
        calls: &[("get_current_weather", r#"{"location": "San Francisco, CA"}"#)],
        ..BLANK
    },
    Vector {
        name: "harmony: arguments cut off",
        doc: HARMONY_DOC,
        text: "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"San",
        errors: &["`get_weather`"],
        ..BLANK
    },
];

#[test]
fn mistral_vectors() {
    check(MISTRAL);
}

#[test]
fn llama_vectors() {
    check(LLAMA);
}

#[test]
fn deepseek_vectors() {
    check(DEEPSEEK);
}

#[test]
fn kimi_vectors() {
    check(KIMI);
}

#[test]
fn harmony_vectors() {
    check(HARMONY);
}
