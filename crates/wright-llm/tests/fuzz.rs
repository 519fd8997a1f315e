//! Randomized checks of the two readers that face untrusted bytes: the SSE decoder (with
//! the chunk accumulator behind it) and the text tool-call parser.
//!
//! The default test run spends about a second here; `WRIGHT_FUZZ_SECS=600 cargo test -p
//! wright-llm --test fuzz -- --nocapture` runs each for that long and prints how many
//! inputs it tried. Properties: nothing panics; the SSE decoder gives the same events
//! however the bytes are split; every call read from text has a JSON object as arguments.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_macros)]

use std::time::Duration;
use std::time::Instant;
use wright_llm::sse::SseDecoder;
use wright_llm::textcall::parse_text_calls;

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn budget() -> Duration {
    let secs = std::env::var("WRIGHT_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    Duration::from_secs(secs)
}

const SSE_PIECES: &[&str] = &[
    "data: ", "data:", "\n", "\r\n", "\r", "\n\n", ": keep-alive\n", "event: x\n", "[DONE]",
    "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hé\"}}]}",
    "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"terminal\",\"arguments\":\"{\\\"co\"}}]}}]}",
    "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"mmand\\\":1}\"}}]}}]}",
    "{\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}", "{\"usage\":{\"prompt_tokens\":3}}",
    "{\"error\":{\"message\":\"x\"}}", "{", "}", "\u{1F600}", "\0",
];

fn decode(bytes: &[u8], cuts: &[usize]) -> Vec<String> {
    let mut decoder = SseDecoder::new();
    let mut out = Vec::new();
    let mut at = 0;
    for &cut in cuts {
        let cut = cut.min(bytes.len()).max(at);
        out.extend(decoder.push(&bytes[at..cut]));
        at = cut;
    }
    out.extend(decoder.push(&bytes[at..]));
    out.extend(decoder.finish());
    out
}

#[test]
fn sse_decoder_is_split_invariant() {
    let mut rng = Rng(0x5eed_0001);
    let started = Instant::now();
    let mut tried = 0u64;
    while started.elapsed() < budget() {
        let mut input = Vec::new();
        for _ in 0..rng.below(40) {
            input.extend_from_slice(SSE_PIECES[rng.below(SSE_PIECES.len())].as_bytes());
            if rng.below(10) == 0 {
                input.push(rng.next() as u8);
            }
        }
        let whole = decode(&input, &[]);
        let mut cuts: Vec<usize> = (0..rng.below(8))
            .map(|_| rng.below(input.len() + 1))
            .collect();
        cuts.sort_unstable();
        // Splits inside a multi-byte character only change how it is decoded when it is
        // invalid anyway; valid UTF-8 must decode identically.
        if std::str::from_utf8(&input).is_ok() {
            assert_eq!(
                decode(&input, &cuts),
                whole,
                "input {:?} cuts {cuts:?}",
                String::from_utf8_lossy(&input)
            );
        } else {
            decode(&input, &cuts);
        }
        tried += 1;
    }
    eprintln!(
        "sse decoder: {tried} inputs in {:.0} s",
        started.elapsed().as_secs_f64()
    );
}

const TEXT_PIECES: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "{\"name\": \"terminal\", \"arguments\": {\"command\": \"ls\"}}",
    "<function=terminal>",
    "<parameter=command>",
    "</parameter>",
    "</function>",
    "```json\n",
    "```\n",
    "```terminal\n",
    "[TOOL_CALLS]",
    "[{\"name\": \"finish\", \"arguments\": {}}]",
    "<|python_tag|>",
    "[terminal(command='ls')]",
    "<think>",
    "</think>",
    "<|channel|>analysis<|message|>",
    "<|call|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<arg_key>",
    "<arg_value>",
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "\\",
    "é",
    "\n",
    " ",
    "terminal",
    "finish",
    "text ",
];

#[test]
fn text_call_parser_never_panics_and_returns_objects() {
    let mut rng = Rng(0x5eed_0002);
    let started = Instant::now();
    let mut tried = 0u64;
    let known = ["terminal", "file_editor", "think", "finish", "execute_bash"];
    while started.elapsed() < budget() {
        let mut text = String::new();
        for _ in 0..rng.below(30) {
            text.push_str(TEXT_PIECES[rng.below(TEXT_PIECES.len())]);
        }
        let parsed = parse_text_calls(&text, &known);
        for call in &parsed.calls {
            assert!(call.arguments.is_object(), "{text:?} gave {call:?}");
        }
        tried += 1;
    }
    eprintln!(
        "text-call parser: {tried} inputs in {:.0} s",
        started.elapsed().as_secs_f64()
    );
}
