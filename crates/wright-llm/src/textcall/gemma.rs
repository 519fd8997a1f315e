//! Gemma's fenced calls: a ```` ```tool_code ```` block holding Python-style calls
//! (ai.google.dev Gemma docs, "function calling" guides: "If a tool is needed, Gemma will
//! generate a code wrapped with ```` ```tool_code ````", results come back in
//! ```` ```tool_output ````). A ```` ```tool_call ```` fence is read the same way, with JSON
//! or Python-style calls inside; no public spec defines it, but models mix the two names.

use super::json;
use super::pythonic;
use super::repair::Fix;
use super::scan::snippet;
use super::scan::Src;
use super::Out;

const FENCE: &str = "```";
const FORM: &str = "```tool_code\nNAME(key=\"value\")\n```";

/// Reads the block whose opening fence `marker` is at `at`; returns where it ends.
pub(crate) fn parse(src: &mut Src, at: usize, marker: &str, out: &mut Out) -> usize {
    let after_marker = at + marker.len();
    // ```tool_codes or ```tool_call_x: another info string, not this marker.
    if src
        .char_at(after_marker)
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
    {
        out.text(marker);
        return after_marker;
    }
    let body_start = match src.find("\n", after_marker) {
        Some(newline) if src.slice(after_marker, newline).trim().is_empty() => newline + 1,
        _ => after_marker,
    };
    let (body_end, end, closed) = match src.find(FENCE, body_start) {
        Some(close) => (close, close + FENCE.len(), true),
        None => (src.len(), src.len(), false),
    };
    let body = src.slice(body_start, body_end).trim();
    if body.is_empty() {
        out.error(format!(
            "a `{}` block is empty: write the call inside it, as {FORM}",
            marker.trim_start_matches('`')
        ));
        return end;
    }
    if body.starts_with('{') || body.starts_with("[{") {
        match json::values_prefix_repaired(body) {
            Ok((values, _, mut fixes)) => {
                if !closed {
                    fixes.push(Fix::UnclosedFence);
                }
                json::record(&values, out, "JSON in a code block", body, &fixes)
            }
            Err(fail) => out.error(format!(
                "a tool call in a `{}` block could not be read: {}. The text was: {}",
                marker.trim_start_matches('`'),
                fail.message(),
                snippet(body)
            )),
        }
        return end;
    }
    match pythonic::parse_sequence(body) {
        Ok(calls) => {
            let fixes = if closed { Vec::new() } else { vec![Fix::UnclosedFence] };
            for call in calls {
                out.call_fixed(&call.name, call.arguments, fixes.clone());
            }
        }
        Err(why) => out.error(format!(
            "a tool call in a `{}` block could not be read: {why}. The text was: {}. Write it as {FORM}",
            marker.trim_start_matches('`'),
            snippet(body)
        )),
    }
    end
}
