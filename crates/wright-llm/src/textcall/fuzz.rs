//! Fuzz-ish tests without a fuzzing crate: every vector cut at every char boundary,
//! byte-level mutations from a fixed-seed xorshift generator, random strings built from
//! marker fragments, and large adversarial inputs (their speed is `cargo bench -p wright-llm --bench textcall`).
//! Each asserts that parsing returns (no panic) and that its guarantees hold.

use super::parse_text_calls;
use super::vectors::all;
use super::vectors::KNOWN;

/// xorshift64*: tiny, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Fragments of every format, to splice into texts.
const PIECES: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "<function=run_shell>",
    "<parameter=",
    "<parameter=command>",
    "</parameter>",
    "</function>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "<|python_tag|>",
    "<|eom_id|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<|channel|>",
    "<|message|>",
    "<|start|>",
    "<|call|>",
    " to=functions.run_shell ",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<think>",
    "</think>",
    "[THINK]",
    "```",
    "```json\n",
    "```tool_code\n",
    "{\"name\": \"run_shell\", \"arguments\": ",
    "{\"command\": \"ls\"}",
    "[run_shell(command='ls')]",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "\"",
    "'",
    "\\",
    "=",
    ",",
    ":",
    "\n",
    " ",
    "é",
    "北京",
    "🎉",
    "｜",
    "▁",
    "<|tool_call>call:run_shell{",
    "<|\"|>",
    "<tool_call|>",
    "<minimax:tool_call>",
    "<invoke name=\"run_shell\">",
    "<parameter name=\"command\">",
    "</parameter>",
    "</invoke>",
    "<｜DSML｜function_calls>",
    "<｜DSML｜invoke name=\"run_shell\">",
    "<｜DSML｜parameter name=\"command\" string=\"false\">",
    "</｜DSML｜parameter>",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "<|START_THINKING|>",
    "<|tools_prefix|>",
    "<|tools_suffix|>",
    "<|inner_prefix|>",
    ">>>",
    ">>>run_shell\n",
    "all\n",
    "<|open|>",
    "<|close|>",
    "<|sep|>",
    "tools",
    "call tool=\"run_shell\"",
    "argument key=\"command\" type=\"object\"",
    "'name': 'run_shell'",
    ",}",
    "\"a\" \"b\"",
    "<TOOLCALL>",
    "</TOOLCALL>",
    "<tool_calls>",
    "<|tool_call|>",
    " functools[",
    "<|function_call|>",
    "function call<|role_sep|>",
    "<|tool_call_start|>",
    "<seed:tool_call>",
    "<seed:think>",
    "</seed:think>",
    "<mm:think>",
    "]<]minimax[>[",
    "<invoke name=\"run_shell\"><command>",
    "</command>",
    "<function name=\"run_shell\">",
    "<param name=\"command\">",
    "</param>",
    "<![CDATA[",
    "]]>",
    "<function_calls>",
    "<start_function_call>call:run_shell{",
    "<escape>",
    "<tool>",
    "</tool>",
    "<response>",
    "</response>",
    "{\"tool_call\": ",
    "{\"response\": \"",
    "[BEGIN FINAL RESPONSE]",
    "<|channel>thought",
];

/// Parses and checks the guarantees that hold for any input.
fn check_sane(text: &str) {
    let parsed = parse_text_calls(text, KNOWN);
    for call in &parsed.calls {
        assert!(
            call.arguments.is_object(),
            "arguments not an object for {text:?}: {call:?}"
        );
    }
    assert_eq!(
        parsed.content,
        parsed.content.trim(),
        "untrimmed content for {text:?}"
    );
}

#[test]
fn every_truncation_of_every_vector() {
    for vector in all() {
        for (cut, _) in vector.text.char_indices() {
            check_sane(&vector.text[..cut]);
        }
        check_sane(vector.text);
    }
}

fn mutate(bytes: &mut Vec<u8>, rng: &mut Rng) {
    let len = bytes.len();
    match rng.below(6) {
        0 if len > 0 => {
            let at = rng.below(len);
            bytes[at] = rng.next() as u8;
        }
        1 if len > 0 => {
            let from = rng.below(len);
            let to = (from + 1 + rng.below(8)).min(len);
            bytes.drain(from..to);
        }
        2 => {
            let at = rng.below(len + 1);
            let piece = PIECES[rng.below(PIECES.len())].as_bytes();
            bytes.splice(at..at, piece.iter().copied());
        }
        3 if len > 0 => {
            let from = rng.below(len);
            let to = (from + 1 + rng.below(32)).min(len);
            let copy: Vec<u8> = bytes[from..to].to_vec();
            let at = rng.below(len + 1);
            bytes.splice(at..at, copy);
        }
        4 => bytes.truncate(rng.below(len + 1)),
        _ if len > 1 => {
            let a = rng.below(len);
            let b = rng.below(len);
            bytes.swap(a, b);
        }
        _ => {}
    }
}

#[test]
fn byte_mutations_of_every_vector() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for vector in all() {
        for _ in 0..150 {
            let mut bytes = vector.text.as_bytes().to_vec();
            for _ in 0..=rng.below(4) {
                mutate(&mut bytes, &mut rng);
            }
            check_sane(&String::from_utf8_lossy(&bytes));
        }
    }
}

#[test]
fn random_strings_of_marker_fragments() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for _ in 0..3000 {
        let mut text = String::new();
        for _ in 0..rng.below(24) {
            if rng.below(4) == 0 {
                text.push(char::from(b' ' + rng.below(95) as u8));
            } else {
                text.push_str(PIECES[rng.below(PIECES.len())]);
            }
        }
        check_sane(&text);
    }
}

#[test]
fn large_adversarial_inputs_parse_sanely() {
    let repeated = [
        "<tool_call>",
        "<tool_call>{\"a\":\"",
        "<function=",
        "<function=f>\n<parameter=x>\n",
        "</parameter>",
        "[TOOL_CALLS]",
        "[TOOL_CALLS]f[ARGS]{\"a\":",
        "<|python_tag|>",
        "<｜tool▁call▁begin｜>",
        "<|tool_call_begin|>",
        "<|channel|>commentary to=functions.f<|message|>",
        "{\"name\":",
        "{\"name\": \"run_shell\", \"arguments\": {\"c\": \"",
        "[{",
        "[run_shell(a=",
        "[run_shell(a=[",
        "```\n",
        "```json\n{",
        "<think>",
        "</think>",
        "<tool_call>x<arg_key>k</arg_key><arg_value>",
        "{",
        "[",
        "\"",
        "<|tool_call>call:f{a:",
        "<|tool_call>call:f{a:<|\"|>",
        "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">",
        "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\">",
        "<|START_ACTION|>[{",
        "<|tools_prefix|>[{\"f\": {",
        ">>>run_shell\n{\"a\": \"",
        ">>>",
        "<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|>",
        "<|open|>",
        "{\"name\": \"run_shell\", \"arguments\": {\"command\": \"a \"b\" ",
        "{'name': 'run_shell', 'arguments': {'c': '",
        "```json\n{\"name\": \"run_shell\", \"arguments\": {\"c\": 1,",
        "{\"name\": \"run_shell\", \"x\": \"",
        "a<think>",
        "<think>a<|tool_call_begin|>",
        "<function name=\"f\"><param name=\"a\">",
        "<function name=\"f\"><param name=\"a\"><![CDATA[",
        "<|tool_call_start|>[f(a=",
        "<TOOLCALL>[{",
        "<|tool_call|>[{\"name\": \"f\", ",
        "<tool_call><invoke name=\"f\"><a><b>",
        "<start_function_call>call:f{a:<escape>",
        "<tool>{\"name\": \"run_shell\", \"arguments\": {}}",
        "```\n<function_call>{",
        "<function_calls><invoke name=\"f\"><parameter name=\"a\">",
        "]<]minimax[>[",
    ];
    // Speed is measured by `cargo bench -p wright-llm --bench textcall` (linear growth);
    // this only checks that every such input parses to something sane.
    for piece in repeated {
        check_sane(&piece.repeat(200_000 / piece.len()));
    }
}
