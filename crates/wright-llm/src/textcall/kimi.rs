//! Kimi K2 tool calls (MoonshotAI/Kimi-K2 `docs/tool_call_guidance.md`, "Manually Parsing
//! Tool Calls"):
//! `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|><|tool_calls_section_end|>`.
//! The call id is `functions.{name}:{index}`; the name is what lies between. The singular
//! `<|tool_call_section_begin|>` that some builds emit is read too.

use super::deepseek;
use super::json;
use super::scan::plausible_name;
use super::scan::snippet;
use super::scan::Src;
use super::Out;

const SECTION_BEGIN: &[&str] = &[
    "<|tool_calls_section_begin|>",
    "<|tool_call_section_begin|>",
];
const SECTION_END: &[&str] = &["<|tool_calls_section_end|>", "<|tool_call_section_end|>"];
const CALL_BEGIN: &str = "<|tool_call_begin|>";
const ARGUMENT_BEGIN: &str = "<|tool_call_argument_begin|>";
const CALL_END: &str = "<|tool_call_end|>";
const CALL_LIMIT: &[&str] = &[
    CALL_END,
    CALL_BEGIN,
    "<|tool_calls_section_end|>",
    "<|tool_call_section_end|>",
];
const FORM: &str =
    "<|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>";

/// Reads the section or call whose `marker` is at `at`; returns where it ends.
pub(crate) fn parse(src: &mut Src, at: usize, marker: &str, out: &mut Out) -> usize {
    let mut pos = at + marker.len();
    if !SECTION_BEGIN.contains(&marker) {
        pos = one_call(src, pos, out);
    }
    loop {
        let next = src.skip_ws(pos);
        if src.starts(next, CALL_BEGIN) {
            pos = one_call(src, next + CALL_BEGIN.len(), out);
        } else if let Some(end) = src.starts_any(next, SECTION_END) {
            return next + end.len();
        } else {
            return pos;
        }
    }
}

/// One call, from just after its `<|tool_call_begin|>`; returns where it ends.
fn one_call(src: &mut Src, start: usize, out: &mut Out) -> usize {
    let limit = src.find_first_or_end(CALL_LIMIT, start);
    let end = if src.starts(limit, CALL_END) {
        limit + CALL_END.len()
    } else {
        limit
    };
    let Some(arguments_at) = src.find(ARGUMENT_BEGIN, start).filter(|pos| *pos < limit) else {
        if src
            .find_first(deepseek::SEP, start)
            .is_some_and(|(sep, _)| sep < limit)
        {
            // DeepSeek written with ASCII bars shares `<|tool_call_begin|>` with Kimi.
            return deepseek::one_call(src, start, out);
        }
        out.error(format!(
            "a Kimi tool call has no `<|tool_call_argument_begin|>` after its id. The text was: {}. Write it as {FORM}",
            snippet(src.slice(start, limit))
        ));
        return end;
    };
    let id = src.slice(start, arguments_at).trim();
    let without_prefix = id.strip_prefix("functions.").unwrap_or(id);
    let name = match without_prefix.rsplit_once(':') {
        Some((name, index)) if index.chars().all(|c| c.is_ascii_digit()) => name,
        _ => without_prefix,
    };
    let arguments = src.slice(arguments_at + ARGUMENT_BEGIN.len(), limit);
    if !plausible_name(name) {
        out.error(format!(
            "a Kimi tool call has no readable function name in its id `{}`. Write it as {FORM}",
            snippet(id)
        ));
        return end;
    }
    match json::arguments_from_text(arguments) {
        Ok((arguments, fixes)) => out.call_fixed(name, arguments, fixes),
        Err(why) => out.error(format!(
            "the arguments of the Kimi tool call to `{name}` could not be read: {why}. The text was: {}",
            snippet(arguments)
        )),
    }
    end
}
