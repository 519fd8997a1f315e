//! `cargo bench -p wright-llm --bench textcall`: the text-call reader on replies made of
//! one marker fragment repeated, at 200 kB and 800 kB. A model's reply is hostile input,
//! so reading it must stay linear: the last column (time at 4× the size over time at 1×)
//! should stay near 4.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_macros)]

use std::time::Duration;
use std::time::Instant;
use wright_llm::textcall::parse_text_calls;

const KNOWN: &[&str] = &["run_shell", "f"];

const PIECES: &[&str] = &[
    ">>>",
    ">>>run_shell\n{\"a\": \"",
    "<tool_call>",
    "<tool_call>{\"a\":\"",
    "<function=",
    "<function=f>\n<parameter=x>\n",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "{\"name\":",
    "{",
    "[{",
    "<|tool_call>call:f{a:",
    "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">",
    "<|START_ACTION|>[{",
    "<|tools_prefix|>[{\"f\": {",
    "{\"name\": \"run_shell\", \"arguments\": {\"command\": \"a \"b\" ",
];

fn time(text: &str) -> Duration {
    let started = Instant::now();
    std::hint::black_box(parse_text_calls(text, KNOWN));
    started.elapsed()
}

fn main() {
    println!(
        "{:<60} {:>10} {:>10} {:>6}",
        "piece", "200 kB", "800 kB", "ratio"
    );
    let mut worst: f64 = 0.0;
    for piece in PIECES {
        let small = time(&piece.repeat(200_000 / piece.len()));
        let large = time(&piece.repeat(800_000 / piece.len()));
        let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-9);
        worst = worst.max(ratio);
        println!(
            "{:<60} {:>8.1}ms {:>8.1}ms {:>6.1}",
            format!("{piece:?}"),
            small.as_secs_f64() * 1e3,
            large.as_secs_f64() * 1e3,
            ratio
        );
    }
    println!("worst growth for 4x the input: {worst:.1}x");
}
