//! Reasoning blocks: `<think>…</think>` (Qwen3, DeepSeek-R1, GLM, MiniMax, …),
//! `<thinking>…</thinking>`, Magistral's `[THINK]…[/THINK]`, Cohere's
//! `<|START_THINKING|>…<|END_THINKING|>`, Apertus' `<|inner_prefix|>…<|inner_suffix|>` and
//! Gemma 4's `<|channel>thought…<channel|>`, split off before anything is read for calls.
//!
//! Blocks at the start of the reply are reasoning, and so is everything after an opening
//! tag that is never closed. When the opening tag was part of the prompt (chat templates
//! that end with `<think>\n`), the reply has a `</think>` with no `<think>`: everything
//! before it is reasoning, unless a call marker or JSON comes first (then the `</think>`
//! is text inside a call, e.g. a file being written, and is left alone).

use super::has_call_marker;
use super::scan::tail;
use super::Out;

const PAIRS: &[(&str, &str)] = &[
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("[THINK]", "[/THINK]"),
    // Cohere Command R7B / A, Apertus, Gemma 4.
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<|inner_prefix|>", "<|inner_suffix|>"),
    ("<|channel>thought", "<channel|>"),
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
                out.reason(inside);
                return "";
            }
        }
    }
}

/// A `</think>` whose `<think>` was in the prompt.
fn orphan_close<'t>(text: &'t str, out: &mut Out) -> &'t str {
    for (open, close) in PAIRS {
        let Some(end) = text.find(close) else {
            continue;
        };
        let before = text.get(..end).unwrap_or("");
        if before.contains(open) || has_call_marker(before) || before.contains("{\"") {
            continue;
        }
        out.reason(before);
        return tail(text, end + close.len());
    }
    text
}
