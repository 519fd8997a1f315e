//! DeepSeek tool calls, written with full-width bars `｜` (U+FF5C) and `▁` (U+2581):
//!
//! - V3 / R1 (DeepSeek-V3 and -R1 chat templates):
//!   `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>`;
//! - V3.1 (DeepSeek-V3.1 chat template):
//!   `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`.
//!
//! Quantised and distilled models sometimes write ASCII `|` or `_`, drop the outer
//! `tool▁calls▁begin`, or write `<｜tool▁calls｜>`; those spellings are read too.

use super::json;
use super::scan::plausible_name;
use super::scan::snippet;
use super::scan::Src;
use super::Out;

const CALL_BEGIN: &[&str] = &[
    "<｜tool▁call▁begin｜>",
    "<|tool▁call▁begin|>",
    "<|tool_call_begin|>",
];
pub(crate) const SEP: &[&str] = &["<｜tool▁sep｜>", "<|tool▁sep|>", "<|tool_sep|>"];
const CALL_END: &[&str] = &[
    "<｜tool▁call▁end｜>",
    "<|tool▁call▁end|>",
    "<|tool_call_end|>",
];
const CALLS_END: &[&str] = &[
    "<｜tool▁calls▁end｜>",
    "<|tool▁calls▁end|>",
    "<|tool_calls_end|>",
];
/// Where one call's text stops.
const CALL_LIMIT: &[&str] = &[
    "<｜tool▁call▁end｜>",
    "<|tool▁call▁end|>",
    "<|tool_call_end|>",
    "<｜tool▁call▁begin｜>",
    "<|tool▁call▁begin|>",
    "<｜tool▁calls▁end｜>",
    "<|tool▁calls▁end|>",
    "<|tool_calls_end|>",
];
const FORM: &str =
    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>";

/// Reads the section or call whose `marker` is at `at`; returns where it ends.
pub(crate) fn parse(src: &mut Src, at: usize, marker: &str, out: &mut Out) -> usize {
    let mut pos = at + marker.len();
    if CALL_BEGIN.contains(&marker) {
        pos = one_call(src, pos, out);
    }
    let mut first = !CALL_BEGIN.contains(&marker);
    loop {
        let next = src.skip_ws(pos);
        let bare_call = first && {
            // `<｜tool▁calls｜>function<｜tool▁sep｜>…`: a call with no begin marker of its own.
            let limit = src.find_first_or_end(CALL_LIMIT, next);
            src.find_first(SEP, next)
                .is_some_and(|(sep, _)| sep < limit)
                && src.starts_any(next, CALL_BEGIN).is_none()
        };
        first = false;
        if bare_call {
            pos = one_call(src, next, out);
        } else if let Some(begin) = src.starts_any(next, CALL_BEGIN) {
            pos = one_call(src, next + begin.len(), out);
        } else if let Some(end) = src.starts_any(next, CALLS_END) {
            return next + end.len();
        } else {
            return pos;
        }
    }
}

/// One call, from just after its `tool▁call▁begin`; returns where it ends.
pub(crate) fn one_call(src: &mut Src, start: usize, out: &mut Out) -> usize {
    let limit = src.find_first_or_end(CALL_LIMIT, start);
    let end = match src.starts_any(limit, CALL_END) {
        Some(close) => limit + close.len(),
        None => limit,
    };
    let Some((sep, sep_marker)) = src.find_first(SEP, start).filter(|(sep, _)| *sep < limit) else {
        out.error(format!(
            "a DeepSeek tool call has no `<｜tool▁sep｜>` between its type or name and its arguments. The text was: {}. Write it as {FORM}",
            snippet(src.slice(start, limit))
        ));
        return end;
    };
    let before = src.slice(start, sep).trim();
    let after = sep + sep_marker.len();
    let rest = src.slice(after, limit);
    let (name, arguments) = if before == "function" && !rest.trim_start().starts_with('{') {
        // V3: the name is on the line after the separator, then fenced JSON.
        let line_end = rest.find(['\n', '`', '{']).unwrap_or(rest.len());
        let name = rest.get(..line_end).unwrap_or("").trim();
        (name, rest.get(line_end..).unwrap_or(""))
    } else {
        (before, rest)
    };
    if !plausible_name(name) {
        out.error(format!(
            "a DeepSeek tool call has no readable function name (found `{}`). Write it as {FORM}",
            snippet(name)
        ));
        return end;
    }
    match json::arguments_from_text(arguments) {
        Ok((arguments, fixes)) => out.call_fixed(name, arguments, fixes),
        Err(why) => out.error(format!(
            "the arguments of the DeepSeek tool call to `{name}` could not be read: {why}. The text was: {}",
            snippet(arguments)
        )),
    }
    end
}
