//! `<function=NAME>…</function>`, in its two dialects:
//!
//! - Qwen3-Coder / OpenHands: `<function=NAME>\n<parameter=K>\nV\n</parameter>\n</function>`,
//!   usually inside `<tool_call>` (Qwen3-Coder chat template); values are raw text without
//!   their layout (see [`layout_value`]), left as strings for
//!   [`super::coerce_arguments`]. Closing tags may be missing at the end of the text.
//! - Llama 3.1 user-defined calls: `<function=NAME>{"k": "v"}</function>` (Llama 3.1
//!   prompt format, "`<function>` based tool calling").

use serde_json::Map;
use serde_json::Value;

use super::json;
use super::scan::snippet;
use super::scan::trim_one_newline;
use super::scan::Src;
use super::Out;

const OPEN: &str = "<function=";
const CLOSE: &str = "</function>";
const PARAM: &str = "<parameter=";
const PARAM_CLOSE: &str = "</parameter>";
const FORM: &str = "<function=NAME><parameter=KEY>VALUE</parameter></function>";

/// Tags that end a parameter value (when its own closing tag is missing or ambiguous).
const AFTER_VALUE: &[&str] = &[PARAM, CLOSE, "</tool_call>", OPEN, "<tool_call>"];

/// Reads the call whose `<function=` is at `at`; returns where it ends.
pub(crate) fn parse_function(src: &mut Src, at: usize, out: &mut Out) -> usize {
    let name_start = at + OPEN.len();
    let Some((raw_name, gt)) = src.bounded_name(name_start, '>', 256) else {
        out.error(format!(
            "a tool call starting `<function=` could not be read: the function name is not closed by `>`. The text was: {}. Write it as {FORM}",
            snippet(src.slice(at, at + 200))
        ));
        return name_end_guess(src, name_start);
    };
    let name = raw_name
        .trim()
        .trim_matches(|c| c == '"' || c == '\'')
        .trim();
    if name.is_empty() {
        out.error(format!(
            "a tool call `<function=>` has no function name. Write it as {FORM}"
        ));
    }
    let body = gt + 1;
    let first = src.skip_ws(body);
    if src.starts(first, "{") {
        return json_body(src, name, first, out);
    }
    let mut arguments = Map::new();
    let mut pos = body;
    loop {
        let next = src.skip_ws(pos);
        if src.starts(next, PARAM) {
            let key_start = next + PARAM.len();
            let Some((key, key_end)) = src.bounded_name(key_start, '>', 256) else {
                out.error(format!(
                    "in the call to `{name}`, a `<parameter=` is not closed by `>`. The text was: {}. Write it as {FORM}",
                    snippet(src.slice(next, next + 200))
                ));
                pos = src.len();
                break;
            };
            let key = key.trim().trim_matches(|c| c == '"' || c == '\'').trim();
            let value_start = key_end + 1;
            let (value_end, after) = src.value_end(value_start, PARAM_CLOSE, AFTER_VALUE);
            let value = layout_value(src.slice(value_start, value_end), indented(src, next));
            arguments.insert(key.to_string(), Value::String(value));
            pos = after;
        } else if src.starts(next, CLOSE) {
            pos = next + CLOSE.len();
            break;
        } else if next >= src.len()
            || src
                .starts_any(next, &["</tool_call>", OPEN, "<tool_call>"])
                .is_some()
        {
            pos = next;
            break;
        } else {
            // Stray text between parameters is skipped when more of this call follows;
            // otherwise the call has ended and the text is content.
            match src.find_first(AFTER_VALUE, next) {
                Some((tag, PARAM | CLOSE)) if tag > next => pos = tag,
                _ => {
                    pos = next;
                    break;
                }
            }
        }
    }
    if !name.is_empty() {
        out.call(name, Value::Object(arguments));
    }
    pos
}

/// A parameter's text without the layout around it: one newline after the opening tag and
/// one before the closing tag, the closing tag's own indentation, and, when the tags are
/// indented (pretty-printed XML), the indentation all the value's lines share. A value of
/// only whitespace is empty. Inner indentation (code) stays.
fn layout_value(raw: &str, tag_indented: bool) -> String {
    let mut value = raw;
    if let Some(newline) = value.rfind('\n') {
        if value
            .get(newline + 1..)
            .is_some_and(|last| last.trim().is_empty())
        {
            value = value.get(..=newline).unwrap_or(value);
        }
    }
    let value = trim_one_newline(value);
    if value.trim().is_empty() {
        return String::new();
    }
    if !tag_indented {
        return value.to_string();
    }
    let indent = value
        .split('\n')
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    value
        .split('\n')
        .map(|line| line.get(indent..).unwrap_or_else(|| line.trim_start()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether the tag at `at` starts its line after some indentation.
fn indented(src: &Src, at: usize) -> bool {
    // At most 64 bytes back, from a char boundary (a shorter look on multi-byte text).
    let (from, before) = (at.saturating_sub(64)..at)
        .map(|from| (from, src.slice(from, at)))
        .find(|(_, before)| !before.is_empty())
        .unwrap_or((at, ""));
    let Some(line) = before.rsplit('\n').next() else {
        return false;
    };
    let starts_line = before.contains('\n') || from == 0;
    starts_line && !line.is_empty() && line.chars().all(|c| c == ' ' || c == '\t')
}

/// Where an unclosed `<function=NAME` stops: the end of its line, the next tag or 256 bytes.
fn name_end_guess(src: &Src, start: usize) -> usize {
    let rest = src.tail(start);
    let mut end = rest.len();
    for (offset, c) in rest.char_indices() {
        if offset > 256 || c == '\n' || c == '<' {
            end = offset;
            break;
        }
    }
    start + end
}

/// Llama 3.1: a JSON object as the body.
fn json_body(src: &mut Src, name: &str, first: usize, out: &mut Out) -> usize {
    let limit = src.find_first_or_end(&[CLOSE, OPEN, "</tool_call>"], first);
    let end = if src.starts(limit, CLOSE) {
        limit + CLOSE.len()
    } else {
        limit
    };
    match json::arguments_from_text(src.slice(first, limit)) {
        Ok((arguments, fixes)) if !name.is_empty() => out.call_fixed(name, arguments, fixes),
        Ok(_) => {}
        Err(why) => out.error(format!(
            "the arguments of the call to `{name}` in `<function={name}>` could not be read: {why}. The text was: {}",
            snippet(src.slice(first, limit))
        )),
    }
    end
}
