//! The `<invoke name=…><parameter name=…>` family, in two dialects:
//!
//! - MiniMax M2 / M2.1 / M2.5 and M3 (MiniMax-AI `docs/tool_calling_guide.md`: "the same
//!   toolcall syntax as MiniMax-M2"):
//!   `<minimax:tool_call>\n<invoke name="NAME">\n<parameter name="K">V</parameter>\n</invoke>\n</minimax:tool_call>`;
//!   values are raw text, left as strings for [`super::coerce_arguments`].
//! - DeepSeek V3.2 DSML (deepseek-ai/DeepSeek-V3.2 `encoding/encoding_dsv32.py`):
//!   `<｜DSML｜function_calls>\n<｜DSML｜invoke name="NAME">\n<｜DSML｜parameter name="K" string="true">V</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>`,
//!   and V4 (`encoding_dsv4.py`), which names the block `<｜DSML｜tool_calls>`. A parameter
//!   with `string="true"` is the raw string; with `string="false"` its value is JSON. The
//!   same with ASCII bars (`<|DSML|…`), as some servers decode them, is read too.
//!
//! - `<function_calls><invoke name="NAME"><parameter name="K">V</parameter></invoke></function_calls>`
//!   without a namespace (Anthropic's published tool-use prompt format, which models
//!   trained on its transcripts write), and with the `antml:` namespace on every tag, as
//!   they also write it; values are raw strings.
//!
//! A block or invoke left open at the end of the reply runs to the end.

use serde_json::Map;
use serde_json::Value;

use super::scan::plausible_name;
use super::scan::snippet;
use super::scan::trim_one_newline;
use super::scan::Src;
use super::Out;

/// One spelling of the family's tags.
struct Dialect {
    form: &'static str,
    invoke: &'static str,
    invoke_close: &'static str,
    parameter: &'static str,
    parameter_close: &'static str,
    /// The block's closing tags (either block name).
    block_close: &'static [&'static str],
    /// Where a parameter's value may end when its closing tag is missing or ambiguous.
    after_value: &'static [&'static str],
}

const MINIMAX: Dialect = Dialect {
    form: "<minimax:tool_call><invoke name=\"NAME\"><parameter name=\"KEY\">VALUE</parameter></invoke></minimax:tool_call>",
    invoke: "<invoke",
    invoke_close: "</invoke>",
    parameter: "<parameter",
    parameter_close: "</parameter>",
    block_close: &["</minimax:tool_call>"],
    after_value: &["<parameter", "</invoke>", "</minimax:tool_call>"],
};

const DSML: Dialect = Dialect {
    form: "<｜DSML｜function_calls><｜DSML｜invoke name=\"NAME\"><｜DSML｜parameter name=\"KEY\" string=\"true\">VALUE</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>",
    invoke: "<｜DSML｜invoke",
    invoke_close: "</｜DSML｜invoke>",
    parameter: "<｜DSML｜parameter",
    parameter_close: "</｜DSML｜parameter>",
    block_close: &["</｜DSML｜function_calls>", "</｜DSML｜tool_calls>"],
    after_value: &[
        "<｜DSML｜parameter",
        "</｜DSML｜invoke>",
        "</｜DSML｜function_calls>",
        "</｜DSML｜tool_calls>",
    ],
};

/// The same markup without a namespace, as models trained on Anthropic-style transcripts
/// write it.
const FUNCTION_CALLS: Dialect = Dialect {
    form: "<function_calls><invoke name=\"NAME\"><parameter name=\"KEY\">VALUE</parameter></invoke></function_calls>",
    invoke: "<invoke",
    invoke_close: "</invoke>",
    parameter: "<parameter",
    parameter_close: "</parameter>",
    block_close: &["</function_calls>"],
    after_value: &["<parameter", "</invoke>", "</function_calls>"],
};

/// The same markup with the `antml:` namespace on every tag, as models trained on
/// transcripts of Anthropic's own tool use write it.
const NAMESPACED: Dialect = Dialect {
    form: "<antml:function_calls><antml:invoke name=\"NAME\"><antml:parameter name=\"KEY\">VALUE</antml:parameter></antml:invoke></antml:function_calls>",
    invoke: "<antml:invoke",
    invoke_close: "</antml:invoke>",
    parameter: "<antml:parameter",
    parameter_close: "</antml:parameter>",
    block_close: &["</antml:function_calls>"],
    after_value: &["<antml:parameter", "</antml:invoke>", "</antml:function_calls>"],
};

/// The opening tag of [`NAMESPACED`]'s block.
pub(super) const NAMESPACED_OPEN: &str = "<antml:function_calls>";
/// Its closing tag.
pub(super) const NAMESPACED_CLOSE: &str = "</antml:function_calls>";

const DSML_ASCII: Dialect = Dialect {
    form: DSML.form,
    invoke: "<|DSML|invoke",
    invoke_close: "</|DSML|invoke>",
    parameter: "<|DSML|parameter",
    parameter_close: "</|DSML|parameter>",
    block_close: &["</|DSML|function_calls>", "</|DSML|tool_calls>"],
    after_value: &[
        "<|DSML|parameter",
        "</|DSML|invoke>",
        "</|DSML|function_calls>",
        "</|DSML|tool_calls>",
    ],
};

/// Reads the block (or bare invoke) whose `marker` is at `at`; returns where it ends.
pub(crate) fn parse(src: &mut Src, at: usize, marker: &str, out: &mut Out) -> usize {
    let dialect = if marker.starts_with("<minimax") {
        &MINIMAX
    } else if marker == "<function_calls>" {
        &FUNCTION_CALLS
    } else if marker == NAMESPACED_OPEN {
        &NAMESPACED
    } else if marker.starts_with("<｜") {
        &DSML
    } else {
        &DSML_ASCII
    };
    let bare = marker.ends_with("invoke");
    let mut pos = if bare { at } else { at + marker.len() };
    let mut read = 0;
    loop {
        let next = src.skip_ws(pos);
        if src.starts(next, dialect.invoke) && (read == 0 || !bare) {
            pos = one_invoke(src, next, dialect, out);
            read += 1;
        } else if let Some(close) = src.starts_any(next, dialect.block_close) {
            return next + close.len();
        } else {
            if read == 0 {
                out.error(format!(
                    "`{marker}` is followed by no `{}`: {}. Write the call as {}",
                    dialect.invoke,
                    snippet(src.tail(next)),
                    dialect.form
                ));
            }
            return pos;
        }
    }
}

/// The `name="…"`-style attributes of a tag header.
pub(crate) fn attribute<'h>(header: &'h str, key: &str) -> Option<&'h str> {
    let mut rest = header;
    while let Some(at) = rest.find(key) {
        let before_ok = at == 0
            || rest
                .get(..at)
                .and_then(|b| b.chars().next_back())
                .is_some_and(char::is_whitespace);
        let after = rest.get(at + key.len()..).unwrap_or("").trim_start();
        if before_ok {
            if let Some(value) = after.strip_prefix('=') {
                let value = value.trim_start();
                return match value.chars().next() {
                    Some(quote @ ('"' | '\'')) => {
                        let body = value.get(1..).unwrap_or("");
                        Some(body.get(..body.find(quote)?).unwrap_or(""))
                    }
                    _ => value.split_whitespace().next(),
                };
            }
        }
        rest = rest.get(at + key.len()..).unwrap_or("");
    }
    None
}

/// One `<invoke …>` at `at`; returns where it ends.
fn one_invoke(src: &mut Src, at: usize, dialect: &Dialect, out: &mut Out) -> usize {
    let header_start = at + dialect.invoke.len();
    let Some((header, gt)) = src.bounded_name(header_start, '>', 512) else {
        out.error(format!(
            "a tool call `{}` is not closed by `>`. The text was: {}. Write it as {}",
            dialect.invoke,
            snippet(src.tail(at)),
            dialect.form
        ));
        return header_start;
    };
    let name = attribute(header, "name").unwrap_or("").trim().to_string();
    let mut arguments = Map::new();
    let mut pos = gt + 1;
    let mut errors = Vec::new();
    let mut ends: Vec<&'static str> = vec![dialect.parameter, dialect.invoke_close, dialect.invoke];
    ends.extend_from_slice(dialect.block_close);
    loop {
        let Some((next, found)) = src.find_first(&ends, pos) else {
            pos = src.len();
            break;
        };
        if found == dialect.invoke_close {
            pos = next + found.len();
            break;
        }
        if found != dialect.parameter {
            pos = next;
            break;
        }
        let key_start = next + dialect.parameter.len();
        let Some((parameter_header, key_end)) = src.bounded_name(key_start, '>', 512) else {
            errors.push(format!("a `{}` is not closed by `>`", dialect.parameter));
            pos = src.len();
            break;
        };
        let Some(key) = attribute(parameter_header, "name").filter(|key| !key.is_empty()) else {
            errors.push(format!(
                "a parameter has no name=\"…\": `{}`",
                snippet(parameter_header)
            ));
            pos = key_end + 1;
            continue;
        };
        let value_start = key_end + 1;
        let (value_end, after) =
            src.value_end(value_start, dialect.parameter_close, dialect.after_value);
        let raw = trim_one_newline(src.slice(value_start, value_end));
        let value = match attribute(parameter_header, "string") {
            // Not a string: the value is JSON (a raw string if it is not).
            Some("false") => {
                serde_json::from_str(raw.trim()).unwrap_or_else(|_| Value::String(raw.to_string()))
            }
            _ => Value::String(raw.to_string()),
        };
        arguments.insert(key.to_string(), value);
        pos = after;
    }
    if !plausible_name(&name) {
        out.error(format!(
            "a tool call `{}` has no readable name=\"…\" (found `{}`). Write it as {}",
            dialect.invoke,
            snippet(header),
            dialect.form
        ));
        return pos;
    }
    if let Some(first) = errors.first() {
        out.error(format!(
            "the call to `{name}` could not be read: {first}. Write it as {}",
            dialect.form
        ));
        return pos;
    }
    out.call(&name, Value::Object(arguments));
    pos
}

/// MiniMax M3 (its chat template): inside `<tool_call>`, invokes whose parameters are
/// elements named after the parameter, `<invoke name="NAME"><city>Paris</city></invoke>`;
/// an object parameter nests elements, a list nests `<item>` elements. The `]<]minimax[>[`
/// token before each tag is removed before reading (see [`super::parse_text_calls`]).
/// Reads the invokes from `at`; returns where they end.
pub(crate) fn parse_elements(src: &mut Src, at: usize, out: &mut Out) -> usize {
    let mut pos = at;
    loop {
        let next = src.skip_ws(pos);
        if !src.starts(next, MINIMAX.invoke) {
            return pos;
        }
        let header_start = next + MINIMAX.invoke.len();
        let Some((header, gt)) = src.bounded_name(header_start, '>', 512) else {
            out.error(format!(
                "a tool call `<invoke` is not closed by `>`. The text was: {}",
                snippet(src.tail(next))
            ));
            return src.len();
        };
        let name = attribute(header, "name").unwrap_or("").trim().to_string();
        let limit = src.find(MINIMAX.invoke_close, gt).unwrap_or(src.len());
        let body = src.slice(gt + 1, limit);
        if body.contains(MINIMAX.parameter) {
            // MiniMax M2's `<parameter name=…>` elements, inside `<tool_call>` instead.
            pos = one_invoke(src, next, &MINIMAX, out);
            continue;
        }
        pos = (limit + MINIMAX.invoke_close.len()).min(src.len());
        if !plausible_name(&name) {
            out.error(format!(
                "a tool call `<invoke` has no readable name=\"…\" (found `{}`)",
                snippet(header)
            ));
            continue;
        }
        match children(body, 0) {
            Some(Value::Object(arguments)) => out.call(&name, Value::Object(arguments)),
            Some(Value::Array(items)) if items.is_empty() => out.call(&name, Value::Object(Map::new())),
            _ => out.error(format!(
                "the call to `{name}` could not be read: its parameters are not `<KEY>VALUE</KEY>` elements. The text was: {}",
                snippet(body)
            )),
        }
    }
}

/// Nesting past this is refused (no input can exhaust the stack).
const MAX_DEPTH: usize = 32;

/// The elements that make up all of `text`: an object, or a list when they are all
/// `<item>`; `None` when `text` is not elements. Empty text is an empty list.
fn children(text: &str, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let mut fields = Map::new();
    let mut items = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let inner = rest.strip_prefix('<')?;
        let gt = inner.find('>')?;
        let key = inner.get(..gt)?;
        if !plausible_name(key) || key.contains('/') {
            return None;
        }
        let close = format!("</{key}>");
        let body_and_rest = inner.get(gt + 1..)?;
        let end = body_and_rest.find(&close)?;
        let body = body_and_rest.get(..end)?;
        let value = if body.trim_start().starts_with('<') {
            children(body, depth + 1).unwrap_or_else(|| Value::String(body.to_string()))
        } else {
            Value::String(body.trim().to_string())
        };
        if key == "item" {
            items.push(value);
        } else {
            fields.insert(key.to_string(), value);
        }
        rest = body_and_rest.get(end + close.len()..)?.trim_start();
    }
    match (fields.is_empty(), items.is_empty()) {
        (true, _) => Some(Value::Array(items)),
        (false, true) => Some(Value::Object(fields)),
        (false, false) => None,
    }
}
