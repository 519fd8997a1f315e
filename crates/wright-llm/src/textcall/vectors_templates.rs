//! Vectors for the call and reasoning markup of smaller template families: Seed-OSS,
//! LiquidAI LFM2 (pythonic), FunctionGemma, MiniCPM, GigaChat 3, the
//! `<function_calls><invoke>` family with and without a namespace, MiniMax M3 and
//! reasoning spelled in other tags or left open; plus the whitespace and cut-off variations
//! of Qwen3-Coder XML. Each table names the public source its texts follow.

use super::vectors::check;
use super::vectors::Vector;
use super::vectors::BLANK;

const SEED_DOC: &str = "ByteDance-Seed Seed-OSS-36B chat template: reasoning in <seed:think>…</seed:think>, calls as <seed:tool_call>\\n<function=NAME>\\n<parameter=K>V</parameter>\\n</function>\\n</seed:tool_call>";

pub(super) const SEED_OSS: &[Vector] = &[
    Vector {
        name: "seed-oss: reasoning, then a call",
        doc: SEED_DOC,
        text: "<seed:think>The user wants the readme.</seed:think>\n<seed:tool_call>\n<function=read_file>\n<parameter=path>README.md</parameter>\n</function>\n</seed:tool_call>",
        calls: &[("read_file", r#"{"path": "README.md"}"#)],
        reasoning: "The user wants the readme.",
        ..BLANK
    },
    Vector {
        name: "seed-oss: two calls, a multi-line value with quotes",
        doc: SEED_DOC,
        text: "<seed:tool_call>\n<function=write_file>\n<parameter=path>f.py</parameter>\n<parameter=content>def f(x = \"1\"):\n    return x\n</parameter>\n</function>\n</seed:tool_call>\n<seed:tool_call>\n<function=run_shell>\n<parameter=command>python3 f.py</parameter>\n</function>\n</seed:tool_call>",
        calls: &[
            ("write_file", r#"{"path": "f.py", "content": "def f(x = \"1\"):\n    return x"}"#),
            ("run_shell", r#"{"command": "python3 f.py"}"#),
        ],
        ..BLANK
    },
    Vector {
        name: "seed-oss: answer only, reasoning open in the prompt",
        doc: SEED_DOC,
        text: "Short question.</seed:think>\nThe answer is 4.",
        content: "The answer is 4.",
        reasoning: "Short question.",
        ..BLANK
    },
    Vector {
        name: "seed-oss: reasoning cut off",
        doc: SEED_DOC,
        text: "<seed:think>Still working it out",
        reasoning: "Still working it out",
        ..BLANK
    },
];

const LFM2_DOC: &str = "LiquidAI LFM2 / LFM2.5 chat template and model card: calls as a Python list between <|tool_call_start|> and <|tool_call_end|>, e.g. <|tool_call_start|>[get_weather(city=\"Paris\")]<|tool_call_end|>, reasoning in <think>…</think>";

pub(super) const LFM2: &[Vector] = &[
    Vector {
        name: "lfm2: one pythonic call, text before",
        doc: LFM2_DOC,
        text: "Let me look that up.<|tool_call_start|>[get_weather(city=\"Lyon\")]<|tool_call_end|>",
        calls: &[("get_weather", r#"{"city": "Lyon"}"#)],
        content: "Let me look that up.",
        ..BLANK
    },
    Vector {
        name: "lfm2: two calls, Python literals and a nested dict",
        doc: LFM2_DOC,
        text: "<|tool_call_start|>[search(query=\"rust\", filters={\"exact\": True, \"limit\": 3, \"lang\": None}), list_files()]<|tool_call_end|>",
        calls: &[
            ("search", r#"{"query": "rust", "filters": {"exact": true, "limit": 3, "lang": null}}"#),
            ("list_files", "{}"),
        ],
        ..BLANK
    },
    Vector {
        name: "lfm2: escapes in a string argument decode",
        doc: LFM2_DOC,
        text: "<|tool_call_start|>[write_file(path=\"a.py\", content=\"def f():\\n\\tprint(\\\"hi\\\")\")]<|tool_call_end|>",
        calls: &[("write_file", r#"{"path": "a.py", "content": "def f():\n\tprint(\"hi\")"}"#)],
        ..BLANK
    },
    Vector {
        name: "lfm2: reasoning, then a call",
        doc: LFM2_DOC,
        text: "<think>Weather needs a call.</think><|tool_call_start|>[get_weather(city=\"Porto\")]<|tool_call_end|>",
        calls: &[("get_weather", r#"{"city": "Porto"}"#)],
        reasoning: "Weather needs a call.",
        ..BLANK
    },
    Vector {
        name: "lfm2: cut off inside the call is an error, not a call",
        doc: LFM2_DOC,
        text: "<|tool_call_start|>[read_file(path=",
        errors: &["could not be read"],
        ..BLANK
    },
    Vector {
        name: "lfm2: markdown links stay content",
        doc: LFM2_DOC,
        text: "See [the docs](https://example.org/docs) and [search](x).",
        content: "See [the docs](https://example.org/docs) and [search](x).",
        ..BLANK
    },
];

const SMALL_FORMATS_DOC: &str = "FunctionGemma model card (<start_function_call>call:NAME{key:<escape>text<escape>}<end_function_call>); openbmb MiniCPM chat template (<function name=\"NAME\"><param name=\"K\">V</param></function>, CDATA for raw text); GigaChat 3 chat template (<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{\"name\": …, \"arguments\": …})";

pub(super) const SMALL_FORMATS: &[Vector] = &[
    Vector {
        name: "functiongemma: string and number arguments, text before",
        doc: SMALL_FORMATS_DOC,
        text: "Checking.<start_function_call>call:get_weather{city:<escape>Sao Paulo<escape>,days:2}<end_function_call>",
        calls: &[("get_weather", r#"{"city": "Sao Paulo", "days": 2}"#)],
        content: "Checking.",
        ..BLANK
    },
    Vector {
        name: "minicpm: <function name=…><param name=…>",
        doc: SMALL_FORMATS_DOC,
        text: "<function name=\"run_shell\"><param name=\"command\">ls -la 'my dir'</param></function>\n<function name=\"list_files\"></function>",
        calls: &[("run_shell", r#"{"command": "ls -la 'my dir'"}"#), ("list_files", "{}")],
        ..BLANK
    },
    Vector {
        name: "minicpm: CDATA keeps a closing tag in the value",
        doc: SMALL_FORMATS_DOC,
        text: "<function name=\"write_file\"><param name=\"path\">t.html</param><param name=\"content\"><![CDATA[<p>a</p> </param> b]]></param></function>",
        calls: &[("write_file", r#"{"path": "t.html", "content": "<p>a</p> </param> b"}"#)],
        ..BLANK
    },
    Vector {
        name: "gigachat 3: function call message after the answer",
        doc: SMALL_FORMATS_DOC,
        text: "Sure.<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"search\", \"arguments\": {\"query\": \"q\"}}",
        calls: &[("search", r#"{"query": "q"}"#)],
        content: "Sure.",
        ..BLANK
    },
];

const INVOKE_DOC: &str = "the <function_calls><invoke name=\"NAME\"><parameter name=\"K\">V</parameter></invoke></function_calls> markup (Anthropic's published prompt format for tool use, which models trained on its transcripts write); MiniMax-M3 chat template, which prefixes each tag with ]<]minimax[>[ and writes each parameter as its own tag";

pub(super) const INVOKE_FAMILY: &[Vector] = &[
    Vector {
        name: "function_calls: two invokes, text before",
        doc: INVOKE_DOC,
        text: "I'll do both.\n<function_calls>\n<invoke name=\"read_file\">\n<parameter name=\"path\">a.txt</parameter>\n</invoke>\n<invoke name=\"run_shell\">\n<parameter name=\"command\">wc -l a.txt</parameter>\n</invoke>\n</function_calls>",
        calls: &[("read_file", r#"{"path": "a.txt"}"#), ("run_shell", r#"{"command": "wc -l a.txt"}"#)],
        content: "I'll do both.",
        ..BLANK
    },
    Vector {
        name: "function_calls with a namespace on every tag, thinking before",
        doc: INVOKE_DOC,
        text: "Let me look first.\n\n<antml:function_calls>\n<antml:invoke name=\"read_file\">\n<antml:parameter name=\"path\">src/lib.rs</antml:parameter>\n<antml:parameter name=\"limit\">40</antml:parameter>\n</antml:invoke>\n</antml:function_calls>",
        calls: &[("read_file", r#"{"path": "src/lib.rs", "limit": "40"}"#)],
        content: "Let me look first.",
        ..BLANK
    },
    Vector {
        name: "minimax m3: prefixed tags, parameters as their own tags",
        doc: INVOKE_DOC,
        text: "<mm:think>Two lookups.</mm:think>]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">]<]minimax[>[<city>Bern]<]minimax[>[</city>]<]minimax[>[</invoke>\n]<]minimax[>[<invoke name=\"search\">]<]minimax[>[<query>bern trams]<]minimax[>[</query>]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
        calls: &[("get_weather", r#"{"city": "Bern"}"#), ("search", r#"{"query": "bern trams"}"#)],
        reasoning: "Two lookups.",
        ..BLANK
    },
    Vector {
        name: "invoke with <parameter name=…> inside <tool_call>",
        doc: INVOKE_DOC,
        text: "<tool_call>\n<invoke name=\"search\">\n<parameter name=\"query\">lifetimes</parameter>\n</invoke>\n</tool_call>",
        calls: &[("search", r#"{"query": "lifetimes"}"#)],
        ..BLANK
    },
    Vector {
        name: "minimax m3: answer after a bare </mm:think>",
        doc: INVOKE_DOC,
        text: "</mm:think>Hello there.",
        content: "Hello there.",
        ..BLANK
    },
];

const REASONING_DOC: &str = "chat templates that open reasoning in the prompt or spell it differently: Qwen3 / QwQ / GLM-4.5 (<think>, also with a newline first), Kimi K2 Thinking (calls written before </think>), DeepSeek V3.1 (its call syntax quoted in reasoning the prompt opened), gpt-oss harmony as LLM-jp writes it (a space after each header token), Ling (<|role_end|>), Cohere2 (<|START_TEXT|>…<|END_TEXT|>)";

pub(super) const REASONING: &[Vector] = &[
    Vector {
        name: "think left open, the reply ends with calls: the calls run",
        doc: REASONING_DOC,
        text: "<think>I need two files<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{\"path\": \"a\"}<|tool_call_end|><|tool_call_begin|>functions.read_file:1<|tool_call_argument_begin|>{\"path\": \"b\"}<|tool_call_end|><|tool_calls_section_end|>",
        calls: &[("read_file", r#"{"path": "a"}"#), ("read_file", r#"{"path": "b"}"#)],
        reasoning: "I need two files",
        ..BLANK
    },
    Vector {
        name: "think left open, a Hermes call ends the reply",
        doc: REASONING_DOC,
        text: "<think>\nListing is enough.\n<tool_call>\n{\"name\": \"list_files\", \"arguments\": {}}\n</tool_call>",
        calls: &[("list_files", "{}")],
        reasoning: "Listing is enough.",
        ..BLANK
    },
    Vector {
        name: "think left open around a tag that holds no call stays reasoning",
        doc: REASONING_DOC,
        text: "<think><tool_call>not sure yet</tool_call>",
        reasoning: "<tool_call>not sure yet</tool_call>",
        ..BLANK
    },
    Vector {
        name: "reasoning opened in the prompt that writes a call out before </think>",
        doc: REASONING_DOC,
        text: "The form is <\u{ff5c}tool\u{2581}calls\u{2581}begin\u{ff5c}><\u{ff5c}tool\u{2581}call\u{2581}begin\u{ff5c}>search<\u{ff5c}tool\u{2581}sep\u{ff5c}>{\"query\": \"draft\"}<\u{ff5c}tool\u{2581}call\u{2581}end\u{ff5c}><\u{ff5c}tool\u{2581}calls\u{2581}end\u{ff5c}>, fine.</think><\u{ff5c}tool\u{2581}calls\u{2581}begin\u{ff5c}><\u{ff5c}tool\u{2581}call\u{2581}begin\u{ff5c}>search<\u{ff5c}tool\u{2581}sep\u{ff5c}>{\"query\": \"final\"}<\u{ff5c}tool\u{2581}call\u{2581}end\u{ff5c}><\u{ff5c}tool\u{2581}calls\u{2581}end\u{ff5c}>",
        calls: &[("search", r#"{"query": "final"}"#)],
        reasoning: "The form is <\u{ff5c}tool\u{2581}calls\u{2581}begin\u{ff5c}><\u{ff5c}tool\u{2581}call\u{2581}begin\u{ff5c}>search<\u{ff5c}tool\u{2581}sep\u{ff5c}>{\"query\": \"draft\"}<\u{ff5c}tool\u{2581}call\u{2581}end\u{ff5c}><\u{ff5c}tool\u{2581}calls\u{2581}end\u{ff5c}>, fine.",
        ..BLANK
    },
    Vector {
        name: "interleaved reasoning blocks between content",
        doc: REASONING_DOC,
        text: "\n<think>First thought.</think>Part one.\n<think>Second thought.</think>Part two.\n<tool_call>list_files\n</tool_call>",
        calls: &[("list_files", "{}")],
        content: "Part one.\nPart two.",
        reasoning: "First thought.\n\nSecond thought.",
        ..BLANK
    },
    Vector {
        name: "empty reasoning block then a call",
        doc: REASONING_DOC,
        text: "<think>\n\n</think>\n\n<tool_call>\n<function=read_file>\n<parameter=path>\nx\n</parameter>\n</function>\n</tool_call>",
        calls: &[("read_file", r#"{"path": "x"}"#)],
        ..BLANK
    },
    Vector {
        name: "harmony with a space after each header token",
        doc: REASONING_DOC,
        text: "<|channel|> analysis<|message|> Need the weather.<|end|><|start|> assistant to=functions.get_weather<|channel|> commentary <|constrain|>  json<|message|> {\"city\": \"Graz\"}",
        calls: &[("get_weather", r#"{"city": "Graz"}"#)],
        reasoning: "Need the weather.",
        ..BLANK
    },
    Vector {
        name: "ling: <|role_end|> after a call is not content",
        doc: REASONING_DOC,
        text: "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Turin</arg_value>\n</tool_call><|role_end|>",
        calls: &[("get_weather", r#"{"city": "Turin"}"#)],
        ..BLANK
    },
    Vector {
        name: "cohere2: answer in <|START_TEXT|>",
        doc: REASONING_DOC,
        text: "Plan it.<|END_THINKING|><|START_TEXT|>Here you go.<|END_TEXT|>",
        content: "Here you go.",
        reasoning: "Plan it.",
        ..BLANK
    },
];

const QWEN3_CODER_WS_DOC: &str = "Qwen3-Coder chat template and its tool parser (Qwen/Qwen3-Coder-30B-A3B-Instruct qwen3coder_tool_parser.py): parameter values are the text between the tags with surrounding whitespace removed, whatever the indentation";

pub(super) const QWEN3_CODER_WS: &[Vector] = &[
    Vector {
        name: "qwen3-coder: indented tags and values",
        doc: QWEN3_CODER_WS_DOC,
        text: "<tool_call>\n  <function=get_weather>\n    <parameter=city>\n      Quito\n    </parameter>\n    <parameter=days>\n      2\n    </parameter>\n  </function>\n</tool_call>",
        calls: &[("get_weather", r#"{"city": "Quito", "days": "2"}"#)],
        ..BLANK
    },
    Vector {
        name: "qwen3-coder: a whitespace-only value is empty",
        doc: QWEN3_CODER_WS_DOC,
        text: "<tool_call>\n<function=search>\n<parameter=query>\n   \n</parameter>\n</function>\n</tool_call>",
        calls: &[("search", r#"{"query": ""}"#)],
        ..BLANK
    },
    Vector {
        name: "qwen3-coder: code value keeps its inner indentation and tabs",
        doc: QWEN3_CODER_WS_DOC,
        text: "<tool_call>\n<function=write_file>\n<parameter=content>\nif x:\n\tgo()\n    stop()\n</parameter>\n</function>\n</tool_call>",
        calls: &[("write_file", r#"{"content": "if x:\n\tgo()\n    stop()"}"#)],
        ..BLANK
    },
    Vector {
        name: "qwen3-coder: last parameter not closed before </function>",
        doc: QWEN3_CODER_WS_DOC,
        text: "<tool_call>\n<function=write_file>\n<parameter=content>\nprint(\"a\")\n</function>\n</tool_call>",
        calls: &[("write_file", r#"{"content": "print(\"a\")"}"#)],
        ..BLANK
    },
    Vector {
        name: "qwen3-coder: first call without <tool_call>, second with",
        doc: QWEN3_CODER_WS_DOC,
        text: "Going.\n<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=read_file>\n<parameter=path>\nb\n</parameter>\n</function>\n</tool_call>",
        calls: &[("read_file", r#"{"path": "a"}"#), ("read_file", r#"{"path": "b"}"#)],
        content: "Going.",
        ..BLANK
    },
];

const EDGES_DOC: &str = "variations the formats' templates allow: MeetKai Functionary v3.2 (the python recipient takes raw code, >>> of the first part in the prompt), gpt-oss harmony (openai/harmony docs/format.md: the recipient in the role part, the <|start|>assistant in the prompt, to=assistant), Gemma 4 (an empty thought channel, its channel tokens), Kimi K3 XTML (the closing <|close|>message<|sep|>, thinking opened by the prompt), LFM2 (a name not on offer is still a call after its token), Seed-OSS (<seed:cot_budget_reflect> is shown text), DeepSeek V3.1 (calls without </think> when thinking is off), Llama 3.1 (the built-in python tool)";

/// Tools for the table below: the vectors' tools and a `python` tool.
const WITH_PYTHON: &[&str] = &["python", "read_file", "run_shell", "search"];

pub(super) const EDGES: &[Vector] = &[
    Vector {
        name: "functionary v3.2: python recipient with raw code, first >>> in the prompt",
        doc: EDGES_DOC,
        text: "python\n# count the files\nimport os\nprint(len(os.listdir('.')))",
        known: WITH_PYTHON,
        calls: &[("python", r##"{"code": "# count the files\nimport os\nprint(len(os.listdir('.')))"}"##)],
        ..BLANK
    },
    Vector {
        name: "functionary v3.2: text, then python code after >>>",
        doc: EDGES_DOC,
        text: "all\nComputing.>>>python\nprint(2 ** 10)",
        known: WITH_PYTHON,
        calls: &[("python", r#"{"code": "print(2 ** 10)"}"#)],
        content: "Computing.",
        ..BLANK
    },
    Vector {
        name: "harmony: recipient in the role part, <|start|>assistant in the prompt",
        doc: EDGES_DOC,
        text: " to=functions.read_file<|channel|>commentary <|constrain|>json<|message|>{\"path\": \"Makefile\"}",
        calls: &[("read_file", r#"{"path": "Makefile"}"#)],
        ..BLANK
    },
    Vector {
        name: "gemma 4: empty thought channels around the answer",
        doc: EDGES_DOC,
        text: "<|channel>thought\n<channel|>All done.<|channel>thought\n<channel|>",
        content: "All done.",
        ..BLANK
    },
    Vector {
        name: "lfm2: a name not on offer is still a call after the token",
        doc: EDGES_DOC,
        text: "<|tool_call_start|>[fetch_page(url=\"https://example.org\")]<|tool_call_end|>",
        calls: &[("fetch_page", r#"{"url": "https://example.org"}"#)],
        ..BLANK
    },
    Vector {
        name: "seed-oss: a budget reflection stays in the answer",
        doc: EDGES_DOC,
        text: "<seed:think>Short.</seed:think><seed:cot_budget_reflect>Used 40 of 500.</seed:cot_budget_reflect>The sum is 9.",
        content: "<seed:cot_budget_reflect>Used 40 of 500.</seed:cot_budget_reflect>The sum is 9.",
        reasoning: "Short.",
        ..BLANK
    },
    Vector {
        name: "deepseek v3.1: text then calls, no reasoning",
        doc: EDGES_DOC,
        text: "Checking both.<\u{ff5c}tool\u{2581}calls\u{2581}begin\u{ff5c}><\u{ff5c}tool\u{2581}call\u{2581}begin\u{ff5c}>search<\u{ff5c}tool\u{2581}sep\u{ff5c}>{\"query\": \"a\"}<\u{ff5c}tool\u{2581}call\u{2581}end\u{ff5c}><\u{ff5c}tool\u{2581}call\u{2581}begin\u{ff5c}>search<\u{ff5c}tool\u{2581}sep\u{ff5c}>{\"query\": \"b\"}<\u{ff5c}tool\u{2581}call\u{2581}end\u{ff5c}><\u{ff5c}tool\u{2581}calls\u{2581}end\u{ff5c}>",
        calls: &[("search", r#"{"query": "a"}"#), ("search", r#"{"query": "b"}"#)],
        content: "Checking both.",
        ..BLANK
    },
    Vector {
        name: "kimi k3: the message's own closing marker is not content",
        doc: EDGES_DOC,
        text: "<|open|>response<|sep|>On it.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"list_files\" index=\"1\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>",
        calls: &[("list_files", "{}")],
        content: "On it.",
        ..BLANK
    },
    Vector {
        name: "kimi k3: thinking opened by the prompt, closed in the reply",
        doc: EDGES_DOC,
        text: "Plain question.<|close|>think<|sep|><|open|>response<|sep|>Yes.<|close|>response<|sep|><|close|>message<|sep|>",
        content: "Yes.",
        reasoning: "Plain question.",
        ..BLANK
    },
    Vector {
        name: "harmony: a header addressed to=assistant before the analysis channel",
        doc: EDGES_DOC,
        text: "<|channel|>commentary to=assistant<|channel|>analysis<|message|>Weighing it.<|end|><|start|>assistant<|channel|>final<|message|>Done.",
        content: "Done.",
        reasoning: "Weighing it.",
        ..BLANK
    },
    Vector {
        name: "gemma 4: a doubled channel token and a stray close are not content",
        doc: EDGES_DOC,
        text: "<|channel><|channel>thought\n<channel|>Fine.<channel|>",
        content: "Fine.",
        ..BLANK
    },
    Vector {
        name: "llama 3.1: built-in python tool after <|python_tag|>",
        doc: EDGES_DOC,
        text: "<|python_tag|>python.call(code=\"print('a' * 3)\")",
        known: WITH_PYTHON,
        calls: &[("python", r#"{"code": "print('a' * 3)"}"#)],
        ..BLANK
    },
];

#[test]
fn seed_oss_vectors() {
    check(SEED_OSS);
}

#[test]
fn lfm2_vectors() {
    check(LFM2);
}

#[test]
fn small_format_vectors() {
    check(SMALL_FORMATS);
}

#[test]
fn invoke_family_vectors() {
    check(INVOKE_FAMILY);
}

#[test]
fn reasoning_variant_vectors() {
    check(REASONING);
}

#[test]
fn qwen3_coder_whitespace_vectors() {
    check(QWEN3_CODER_WS);
}

#[test]
fn edge_vectors() {
    check(EDGES);
}
