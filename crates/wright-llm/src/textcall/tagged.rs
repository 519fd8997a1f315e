//! `<tool_call>…</tool_call>` blocks, which three families share:
//!
//! - Hermes 2 Pro / Qwen2.5 / Qwen3: a JSON object `{"name": …, "arguments": {…}}` inside
//!   (Qwen2.5 and Qwen3 chat templates, NousResearch Hermes function-calling format);
//! - Qwen3-Coder: `<function=NAME><parameter=K>…` inside (read by [`super::xml`]);
//! - GLM-4.5 / 4.6 / 4.7: `NAME` then `<arg_key>`/`<arg_value>` pairs (read by [`super::glm`]);
//! - MiniMax M3: `<invoke name="NAME"><KEY>VALUE</KEY></invoke>` inside (read by [`super::invoke`]).
//!
//! The closing tag may be missing (the model stopped, or the server cut at a stop string);
//! the block then runs to the next `<tool_call>` or the end of the text.

use super::glm;
use super::invoke;
use super::json;
use super::scan::snippet;
use super::scan::Src;
use super::xml;
use super::Out;

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";
const FORM: &str = "<tool_call>{\"name\": …, \"arguments\": {…}}</tool_call>";

/// Reads the block whose `<tool_call>` is at `at`; returns where it ends.
pub(crate) fn parse(src: &mut Src, at: usize, out: &mut Out) -> usize {
    let body = at + OPEN.len();
    let first = src.skip_ws(body);
    if src.starts(first, "<function=") {
        let end = xml::parse_function(src, first, out);
        return after_close(src, end);
    }
    if src.starts(first, "<invoke") {
        let end = invoke::parse_elements(src, first, out);
        return after_close(src, end);
    }
    match src.char_at(first) {
        None => {
            out.error(format!(
                "a `<tool_call>` at the end of the reply is empty: write the call inside it, as {FORM}"
            ));
            src.len()
        }
        Some('{' | '[' | '`') => json_body(src, body, first, out),
        Some(_) if src.starts(first, CLOSE) => {
            out.error(format!(
                "an empty `<tool_call></tool_call>`: write the call inside it, as {FORM}"
            ));
            first + CLOSE.len()
        }
        Some(_) => {
            let end = glm::parse(src, first, out);
            after_close(src, end)
        }
    }
}

/// Hermes: JSON inside the tags.
fn json_body(src: &mut Src, body: usize, first: usize, out: &mut Out) -> usize {
    let close = src.find(CLOSE, body);
    let next_open = src.find(OPEN, body);
    let limit = match (close, next_open) {
        (Some(close), Some(open)) => close.min(open),
        (Some(close), None) => close,
        (None, Some(open)) => open,
        (None, None) => src.len(),
    };
    let mut parsed = json::values_prefix(src.slice(first, limit));
    let mut limit = limit;
    // A string value may itself hold "</tool_call>" or "<tool_call>": while the JSON runs
    // past the tag that ended the block, try again up to the next closing tag (keeping the
    // first answer if no wider one reads).
    let mut wider = limit;
    while matches!(parsed, Err(json::JsonFail::Cut(_))) && wider < src.len() && out.retries > 0 {
        out.retries -= 1;
        wider = src.find(CLOSE, wider + 1).unwrap_or(src.len());
        let retry = json::values_prefix(src.slice(first, wider));
        if retry.is_ok() {
            parsed = retry;
            limit = wider;
        }
    }
    let parsed = match parsed {
        Ok((values, used)) => Ok((values, used, Vec::new())),
        // Not JSON as written: what a repair makes of the block, if it is sure.
        Err(_) => json::values_prefix_repaired(src.slice(first, limit)),
    };
    match parsed {
        Ok((values, used, fixes)) => {
            json::record(
                &values,
                out,
                "<tool_call> JSON",
                src.slice(first, first + used),
                &fixes,
            );
            let end = first + used;
            if src.slice(end, limit).trim().is_empty() {
                after_close(src, limit)
            } else {
                // Text after the JSON inside the block stays content.
                end
            }
        }
        Err(fail) => {
            out.error(format!(
                "a tool call in `<tool_call>` could not be read: {}. The text was: {}. Write it as {FORM}",
                fail.message(),
                snippet(src.slice(first, limit))
            ));
            after_close(src, limit)
        }
    }
}

/// `pos`, or the position after a `</tool_call>` that follows it (past whitespace).
pub(crate) fn after_close(src: &Src, pos: usize) -> usize {
    let next = src.skip_ws(pos);
    if src.starts(next, CLOSE) {
        next + CLOSE.len()
    } else {
        pos
    }
}
