//! Reasoning blocks: `<think>…</think>` (Qwen3, DeepSeek-R1, GLM, MiniMax, …),
//! `<thinking>…</thinking>`, Magistral's `[THINK]…[/THINK]`, Cohere's
//! `<|START_THINKING|>…<|END_THINKING|>`, Apertus' `<|inner_prefix|>…<|inner_suffix|>` and
//! Gemma 4's `<|channel>thought…<channel|>`, Seed-OSS' `<seed:think>`, MiniMax M3's
//! `<mm:think>` and Apriel's `…[BEGIN FINAL RESPONSE]`, split off before anything is read
//! for calls.
//!
//! Blocks at the start of the reply are reasoning, and so is everything after an opening
//! tag that is never closed — unless it ends in nothing but calls, which then run (models
//! trained to call from inside their reasoning do that). Closed blocks later in the reply
//! are split off where they stand (see [`block`]). Before a `</think>` whose `<think>` was
//! in the prompt, calls that were closed are part of the reasoning (DeepSeek V3.1 muses in
//! its own call syntax); one still open means the `</think>` is text inside it. When the opening tag was part of the prompt (chat templates
//! that end with `<think>\n`), the reply has a `</think>` with no `<think>`: everything
//! before it is reasoning, unless a call marker or JSON comes first (then the `</think>`
//! is text inside a call, e.g. a file being written, and is left alone).

use super::call_markers_around;
use super::calls_only;
use super::first_call_marker;
use super::scan::tail;
use super::scan::Src;
use super::Out;

const PAIRS: &[(&str, &str)] = &[
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("[THINK]", "[/THINK]"),
    // Cohere Command R7B / A, Apertus, Gemma 4.
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<|inner_prefix|>", "<|inner_suffix|>"),
    ("<|channel>thought", "<channel|>"),
    // Seed-OSS, MiniMax M3.
    ("<seed:think>", "</seed:think>"),
    ("<mm:think>", "</mm:think>"),
    // Apriel 1.6: the template opens the reasoning with this line; the model ends it.
    ("Here are my reasoning steps:", "[BEGIN FINAL RESPONSE]"),
];

/// Moves the reasoning of `text` into `out`; returns the rest, to be read for calls.
pub(crate) fn split<'t>(text: &'t str, out: &mut Out) -> &'t str {
    let mut rest = orphan_close(text, out);
    loop {
        let trimmed = rest.trim_start();
        let Some((open, close)) = PAIRS.iter().find(|(open, _)| trimmed.starts_with(open)) else {
            return rest;
        };
        let inside = tail(trimmed, open.len());
        match inside.find(close) {
            Some(end) => {
                out.reason(inside.get(..end).unwrap_or(""));
                rest = tail(inside, end + close.len());
            }
            None => {
                // A reply that ends in calls made from inside the reasoning (Kimi K2
                // Thinking, Qwen3 with thinking forced open): the calls run, the text
                // before them is the reasoning.
                if let Some(at) = first_call_marker(inside) {
                    let calls = tail(inside, at);
                    if calls_only(calls, out) {
                        out.reason(inside.get(..at).unwrap_or(""));
                        return calls;
                    }
                }
                out.reason(inside);
                return "";
            }
        }
    }
}

/// Whether the end of `before` lies inside a call: a call marker opened with no closing
/// token after it, or JSON begun after the last call closed (a `</think>` there is text in
/// a value, e.g. a file being written). Calls closed before it are part of the reasoning.
fn inside_call(before: &str) -> bool {
    let (last_open, last_close) = call_markers_around(before);
    let calls_done = last_close.unwrap_or(0);
    last_open.is_some_and(|open| last_close.is_none_or(|close| close < open))
        || before
            .get(calls_done..)
            .is_some_and(|rest| rest.contains("{\""))
}

/// A `</think>` whose `<think>` was in the prompt.
fn orphan_close<'t>(text: &'t str, out: &mut Out) -> &'t str {
    for (open, close) in PAIRS {
        let Some(end) = text.find(close) else {
            continue;
        };
        let before = text.get(..end).unwrap_or("");
        if before.contains(open) || inside_call(before) {
            continue;
        }
        out.reason(before);
        return tail(text, end + close.len());
    }
    text
}

/// Opening tags of reasoning blocks that may also stand between content and calls.
pub(crate) const INNER_OPEN: &[&str] =
    &["<think>", "<seed:think>", "<mm:think>", "<|channel>thought"];

/// A closed reasoning block whose opening tag `open` is at `at`: the reasoning goes to
/// `out`; returns where the block ends, or `None` when it is not closed.
pub(crate) fn block(src: &mut Src, at: usize, open: &str, out: &mut Out) -> Option<usize> {
    let close = PAIRS.iter().find(|(o, _)| *o == open)?.1;
    let inside = at + open.len();
    // A memoised search: many unclosed tags cost one look, not one each.
    let end = src.find(close, inside)?;
    out.reason(src.slice(inside, end));
    Some(end + close.len())
}
