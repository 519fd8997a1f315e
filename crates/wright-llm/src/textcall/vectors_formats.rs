//! Vectors for the newer formats: Gemma 4, Cohere Command R7B / A, DeepSeek V3.2 / V4
//! DSML, MiniMax M2 / M3, Kimi K3 XTML, Apertus, Functionary v3.2 and the gpt-oss harmony
//! variants. Each table names the public source its texts follow.

use super::vectors::check;
use super::vectors::Vector;
use super::vectors::BLANK;

const GEMMA4_DOC: &str = "Gemma 4 chat template (format_argument): <|tool_call>call:NAME{key:<|\"|>text<|\"|>,n:1}<tool_call|>, bare keys, <|\"|> strings, thinking in <|channel>thought…<channel|>";

pub(super) const GEMMA4: &[Vector] = &[
    Vector {
        name: "gemma 4: one call of every value kind, text before",
        doc: GEMMA4_DOC,
        text: "Let me check.<|tool_call>call:run_shell{command:<|\"|>grep -r \"TODO\" {src}<|\"|>,timeout:30,verbose:true,env:{LANG:<|\"|>C<|\"|>},args:[1,-2.5,null]}<tool_call|>",
        calls: &[("run_shell", r#"{"command": "grep -r \"TODO\" {src}", "timeout": 30, "verbose": true, "env": {"LANG": "C"}, "args": [1, -2.5, null]}"#)],
        content: "Let me check.",
        ..BLANK
    },
    Vector {
        name: "gemma 4: thinking, two calls",
        doc: GEMMA4_DOC,
        text: "<|channel>thought\nBoth cities.<channel|><|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|><|tool_call>call:get_weather{city:<|\"|>Zürich<|\"|>}<tool_call|><turn|>",
        calls: &[("get_weather", r#"{"city": "Paris"}"#), ("get_weather", r#"{"city": "Zürich"}"#)],
        reasoning: "Both cities.",
        ..BLANK
    },
    Vector {
        name: "gemma 4: no arguments, block left open",
        doc: GEMMA4_DOC,
        text: "<|tool_call>call:list_files{}",
        calls: &[("list_files", "{}")],
        ..BLANK
    },
    Vector {
        name: "gemma 4: a string never closed is an error",
        doc: GEMMA4_DOC,
        text: "<|tool_call>call:read_file{path:<|\"|>a.rs}<tool_call|>",
        errors: &["never closed"],
        ..BLANK
    },
    Vector {
        name: "gemma 4: no call: prefix",
        doc: GEMMA4_DOC,
        text: "<|tool_call>read_file{path:<|\"|>a<|\"|>}<tool_call|>",
        errors: &["does not hold `call:NAME"],
        ..BLANK
    },
];

const COHERE_DOC: &str = "Cohere Command R7B / Command A chat templates (llama.cpp command-r7b): <|START_THINKING|>plan<|END_THINKING|><|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": …, \"parameters\": {…}}]<|END_ACTION|>, answers in <|START_RESPONSE|>…<|END_RESPONSE|>";
const COMMAND_R_DOC: &str = "Command-R (2024) tool use prompt: Action: ```json [{\"tool_name\": …, \"parameters\": {…}}] ```";

pub(super) const COHERE: &[Vector] = &[
    Vector {
        name: "command r7b: plan, two calls",
        doc: COHERE_DOC,
        text: "<|START_THINKING|>I will look up both.<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}},\n    {\"tool_call_id\": \"1\", \"tool_name\": \"search\", \"parameters\": {\"query\": \"Louvre hours\"}}\n]<|END_ACTION|><|END_OF_TURN_TOKEN|>",
        calls: &[("get_weather", r#"{"city": "Paris"}"#), ("search", r#"{"query": "Louvre hours"}"#)],
        reasoning: "I will look up both.",
        ..BLANK
    },
    Vector {
        name: "command r7b: an answer, no call",
        doc: COHERE_DOC,
        text: "<|START_THINKING|>Simple.<|END_THINKING|><|START_RESPONSE|>It is 4.<|END_RESPONSE|>",
        content: "It is 4.",
        reasoning: "Simple.",
        ..BLANK
    },
    Vector {
        name: "command r7b: broken JSON in the action",
        doc: COHERE_DOC,
        text: "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"search\", \"parameters\": {\"query\": \"a}]<|END_ACTION|>",
        errors: &["<|START_ACTION|>"],
        ..BLANK
    },
    Vector {
        name: "command-r: fenced action list",
        doc: COMMAND_R_DOC,
        text: "Action: ```json\n[\n    {\n        \"tool_name\": \"search\",\n        \"parameters\": {\"query\": \"rust 2024\"}\n    }\n]\n```",
        calls: &[("search", r#"{"query": "rust 2024"}"#)],
        content: "Action:",
        ..BLANK
    },
];

const DSML_V32_DOC: &str = "deepseek-ai/DeepSeek-V3.2 encoding/encoding_dsv32.py: <｜DSML｜function_calls>\\n<｜DSML｜invoke name=\"NAME\">\\n<｜DSML｜parameter name=\"K\" string=\"true|false\">V</｜DSML｜parameter>\\n</｜DSML｜invoke>\\n</｜DSML｜function_calls>";
const DSML_V4_DOC: &str =
    "DeepSeek V4 encoding_dsv4.py: the same invokes in a <｜DSML｜tool_calls> block";

pub(super) const DSML: &[Vector] = &[
    Vector {
        name: "deepseek v3.2: string and JSON parameters, thinking",
        doc: DSML_V32_DOC,
        text: "<think>Need the file.</think>I will read it.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"read_file\">\n<｜DSML｜parameter name=\"path\" string=\"true\">src/main.rs</｜DSML｜parameter>\n<｜DSML｜parameter name=\"range\" string=\"false\">[1, 20]</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>",
        calls: &[("read_file", r#"{"path": "src/main.rs", "range": [1, 20]}"#)],
        content: "I will read it.",
        reasoning: "Need the file.",
        ..BLANK
    },
    Vector {
        name: "deepseek v4: tool_calls block, two invokes",
        doc: DSML_V4_DOC,
        text: "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">北京</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
        calls: &[("get_weather", r#"{"city": "Paris"}"#), ("get_weather", r#"{"city": "北京"}"#)],
        ..BLANK
    },
    Vector {
        name: "deepseek dsml with ASCII bars, block left open",
        doc: DSML_V32_DOC,
        text: "<|DSML|function_calls>\n<|DSML|invoke name=\"run_shell\">\n<|DSML|parameter name=\"command\" string=\"true\">echo '</|DSML|parameter>' done</|DSML|parameter>\n</|DSML|invoke>",
        calls: &[("run_shell", r#"{"command": "echo '</|DSML|parameter>' done"}"#)],
        ..BLANK
    },
    Vector {
        name: "deepseek dsml: invoke with no name",
        doc: DSML_V32_DOC,
        text: "<｜DSML｜function_calls><｜DSML｜invoke>\n</｜DSML｜invoke></｜DSML｜function_calls>",
        errors: &["no readable name"],
        ..BLANK
    },
];

const MINIMAX_DOC: &str = "MiniMax-AI MiniMax-M2 / M2.5 docs/tool_calling_guide.md (M3 keeps the syntax): <minimax:tool_call>\\n<invoke name=\"NAME\">\\n<parameter name=\"K\">V</parameter>\\n</invoke>\\n</minimax:tool_call>";

pub(super) const MINIMAX: &[Vector] = &[
    Vector {
        name: "minimax m2: thinking, text, one call",
        doc: MINIMAX_DOC,
        text: "<think>\nThe user wants the weather.\n</think>\n\nLet me search for that.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Beijing</parameter>\n<parameter name=\"date\">2024-12-25</parameter>\n</invoke>\n</minimax:tool_call>",
        calls: &[("get_weather", r#"{"city": "Beijing", "date": "2024-12-25"}"#)],
        content: "Let me search for that.",
        reasoning: "The user wants the weather.",
        ..BLANK
    },
    Vector {
        name: "minimax m3: two invokes, multi-line value, text after",
        doc: MINIMAX_DOC,
        text: "<minimax:tool_call>\n<invoke name=\"write_file\">\n<parameter name=\"path\">a.py</parameter>\n<parameter name=\"content\">\nprint(\"<b>\")\n</parameter>\n</invoke>\n<invoke name=\"run_shell\">\n<parameter name=\"command\">python3 a.py</parameter>\n</invoke>\n</minimax:tool_call>\nBoth queued.",
        calls: &[
            ("write_file", r#"{"path": "a.py", "content": "print(\"<b>\")"}"#),
            ("run_shell", r#"{"command": "python3 a.py"}"#),
        ],
        content: "Both queued.",
        ..BLANK
    },
    Vector {
        name: "minimax: block with no invoke",
        doc: MINIMAX_DOC,
        text: "<minimax:tool_call>\nget_weather(city=Paris)\n</minimax:tool_call>",
        content: "get_weather(city=Paris)",
        errors: &["no `<invoke`"],
        ..BLANK
    },
];

const KIMI_K3_DOC: &str = "Kimi K3 XTML (vLLM kimi_k3_tool_parser docs): <|open|>response<|sep|>…<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"NAME\" index=\"1\"<|sep|><|open|>argument key=\"K\" type=\"T\"<|sep|>V<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";

pub(super) const KIMI_K3: &[Vector] = &[
    Vector {
        name: "kimi k3: response and a call with typed arguments",
        doc: KIMI_K3_DOC,
        text: "<|open|>think<|sep|>Run it.<|close|>think<|sep|><|open|>response<|sep|>Running the script.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"run_shell\" index=\"1\"<|sep|><|open|>argument key=\"command\" type=\"string\"<|sep|>python3 -c 'print(1)'<|close|>argument<|sep|><|open|>argument key=\"timeout\" type=\"integer\"<|sep|>30<|close|>argument<|sep|><|open|>argument key=\"env\" type=\"object\"<|sep|>{\"A\": \"1\"}<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
        calls: &[("run_shell", r#"{"command": "python3 -c 'print(1)'", "timeout": 30, "env": {"A": "1"}}"#)],
        content: "Running the script.",
        reasoning: "Run it.",
        ..BLANK
    },
    Vector {
        name: "kimi k3: two calls, escaped attribute, left open",
        doc: KIMI_K3_DOC,
        text: "<|open|>tools<|sep|><|open|>call tool=\"read_file\" index=\"1\"<|sep|><|open|>argument key=\"path\" type=\"string\"<|sep|>a.rs<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool=\"search\" index=\"2\"<|sep|><|open|>argument key=\"q&amp;a\" type=\"string\"<|sep|>say &quot;hi&quot;<|close|>argument<|sep|>",
        calls: &[("read_file", r#"{"path": "a.rs"}"#), ("search", r#"{"q&a": "say &quot;hi&quot;"}"#)],
        ..BLANK
    },
];

const APERTUS_DOC: &str = "swiss-ai Apertus chat template: <|inner_prefix|>reasoning<|inner_suffix|>, calls as <|tools_prefix|>[{\"NAME\": {…}}]<|tools_suffix|>";

pub(super) const APERTUS: &[Vector] = &[
    Vector {
        name: "apertus: reasoning, two calls, text before",
        doc: APERTUS_DOC,
        text: "<|inner_prefix|>Weather, then the time.<|inner_suffix|>Checking.<|tools_prefix|>[{\"get_weather\": {\"city\": \"Bern\"}}, {\"list_files\": {}}]<|tools_suffix|><|assistant_end|>",
        calls: &[("get_weather", r#"{"city": "Bern"}"#), ("list_files", "{}")],
        content: "Checking.",
        reasoning: "Weather, then the time.",
        ..BLANK
    },
    Vector {
        name: "apertus: an object that is not {NAME: args}",
        doc: APERTUS_DOC,
        text: "<|tools_prefix|>[{\"get_weather\": {\"city\": \"Bern\"}, \"extra\": 1}]<|tools_suffix|>",
        errors: &["is not {\"NAME\""],
        ..BLANK
    },
];

const FUNCTIONARY_DOC: &str = "MeetKai functionary-small-v3.2 chat template (llama.cpp functionary_v3_2): >>>all\\nTEXT>>>NAME\\n{json}…, the prompt ends with >>> so the first part has none";

pub(super) const FUNCTIONARY: &[Vector] = &[
    Vector {
        name: "functionary v3.2: text then two calls, first >>> in the prompt",
        doc: FUNCTIONARY_DOC,
        text: "all\nI will check both.>>>get_weather\n{\"city\": \"Paris\"}>>>search\n{\"query\": \"Louvre\"}",
        calls: &[("get_weather", r#"{"city": "Paris"}"#), ("search", r#"{"query": "Louvre"}"#)],
        content: "I will check both.",
        ..BLANK
    },
    Vector {
        name: "functionary v3.2: a call first, no >>>",
        doc: FUNCTIONARY_DOC,
        text: "read_file\n{\"path\": \"a.rs\"}",
        calls: &[("read_file", r#"{"path": "a.rs"}"#)],
        ..BLANK
    },
    Vector {
        name: "functionary: a Python prompt is prose",
        doc: FUNCTIONARY_DOC,
        text: "In the REPL:\n>>> print(1)\n1",
        content: "In the REPL:\n>>> print(1)\n1",
        ..BLANK
    },
    Vector {
        name: "functionary: broken arguments",
        doc: FUNCTIONARY_DOC,
        text: ">>>read_file\n{\"path\": \"a.rs",
        errors: &["`read_file`"],
        ..BLANK
    },
];

const HARMONY_DOC: &str = "openai/harmony docs/format.md and the gpt-oss chat template: commentary channel, to=functions.NAME in the channel or role part, <|constrain|>json";

pub(super) const HARMONY_VARIANTS: &[Vector] = &[
    Vector {
        name: "harmony: the first <|channel|> was in the prompt",
        doc: HARMONY_DOC,
        text: "analysis<|message|>Need the file.<|end|><|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{\"path\": \"a.rs\"}<|call|>",
        calls: &[("read_file", r#"{"path": "a.rs"}"#)],
        reasoning: "Need the file.",
        ..BLANK
    },
    Vector {
        name: "harmony: <|constrain|> right after the recipient, no <|constrain|> at all",
        doc: HARMONY_DOC,
        text: "<|channel|>commentary to=functions.read_file<|constrain|>json<|message|>{\"path\": \"a\"}<|call|><|start|>assistant<|channel|>commentary to=functions.list_files<|message|>{}<|call|>",
        calls: &[("read_file", r#"{"path": "a"}"#), ("list_files", "{}")],
        ..BLANK
    },
    Vector {
        name: "harmony: a call on the analysis channel, ended by <|end|>",
        doc: HARMONY_DOC,
        text: "<|channel|>analysis to=functions.search code<|message|>{\"query\": \"x\"}<|end|>",
        calls: &[("search", r#"{"query": "x"}"#)],
        ..BLANK
    },
    Vector {
        name: "harmony: headless final answer",
        doc: HARMONY_DOC,
        text: "final<|message|>Done.<|return|>",
        content: "Done.",
        ..BLANK
    },
];

#[test]
fn gemma4_vectors() {
    check(GEMMA4);
}

#[test]
fn cohere_vectors() {
    check(COHERE);
}

#[test]
fn dsml_vectors() {
    check(DSML);
}

#[test]
fn minimax_vectors() {
    check(MINIMAX);
}

#[test]
fn kimi_k3_vectors() {
    check(KIMI_K3);
}

#[test]
fn apertus_vectors() {
    check(APERTUS);
}

#[test]
fn functionary_vectors() {
    check(FUNCTIONARY);
}

#[test]
fn harmony_variant_vectors() {
    check(HARMONY_VARIANTS);
}
