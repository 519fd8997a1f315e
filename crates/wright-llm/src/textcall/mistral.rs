//! Mistral `[TOOL_CALLS]`, in its two generations (mistral-common tokenizers):
//!
//! - tokenizer v3 / v7 (Mistral-7B-Instruct-v0.3, Mistral-Nemo, Mistral-Small-2409…):
//!   `[TOOL_CALLS] [{"name": "f", "arguments": {…}}, …]`;
//! - tokenizer v11+ (Mistral-Small-3.2, Magistral, Devstral, Ministral-3):
//!   `[TOOL_CALLS]f[ARGS]{…}`, repeated for each call, with `[CALL_ID]id` before `[ARGS]`
//!   in some versions.

use super::json;
use super::scan::plausible_name;
use super::scan::snippet;
use super::scan::Src;
use super::Out;

const MARKER: &str = "[TOOL_CALLS]";
const ARGS: &str = "[ARGS]";
const CALL_ID: &str = "[CALL_ID]";
const FORM: &str = "[TOOL_CALLS]NAME[ARGS]{\"key\": \"value\"}";

/// Reads what follows the `[TOOL_CALLS]` at `at`; returns where it ends.
pub(crate) fn parse(src: &mut Src, at: usize, out: &mut Out) -> usize {
    let body = at + MARKER.len();
    let first = src.skip_ws(body);
    let limit = src.find(MARKER, body).unwrap_or(src.len());
    if matches!(src.char_at(first), Some('[' | '{')) {
        return match json::values_prefix_repaired(src.slice(first, limit)) {
            Ok((values, used, fixes)) => {
                json::record(
                    &values,
                    out,
                    "[TOOL_CALLS] JSON",
                    src.slice(first, first + used),
                    &fixes,
                );
                first + used
            }
            Err(fail) => {
                out.error(format!(
                    "a tool call after `[TOOL_CALLS]` could not be read: {}. The text was: {}. Write it as {FORM}",
                    fail.message(),
                    snippet(src.slice(first, limit))
                ));
                limit
            }
        };
    }
    let name_end = src.find_first_or_end(&[ARGS, CALL_ID, "{", "\n", MARKER], first);
    let name = src.slice(first, name_end).trim();
    if !plausible_name(name) {
        out.error(format!(
            "a tool call after `[TOOL_CALLS]` could not be read: expected a function name or a JSON list of calls, found `{}`. Write it as {FORM}",
            snippet(src.slice(first, limit))
        ));
        return body;
    }
    let mut pos = name_end;
    if src.starts(pos, CALL_ID) {
        pos = src
            .find(ARGS, pos)
            .filter(|args| *args < limit)
            .unwrap_or(pos + CALL_ID.len());
    }
    if src.starts(pos, ARGS) {
        pos += ARGS.len();
    }
    let args_start = src.skip_ws(pos);
    if !src.starts(args_start, "{") {
        out.error(format!(
            "the call to `{name}` after `[TOOL_CALLS]` has no JSON object of arguments. Write it as {FORM}"
        ));
        return args_start;
    }
    let text = src.slice(args_start, limit);
    let read = json::value_prefix(text)
        .map(|(value, used)| (value, used, Vec::new()))
        .or_else(|_| {
            json::values_prefix_repaired(text)
                .map(|(mut values, used, fixes)| (values.pop().unwrap_or_default(), used, fixes))
        });
    match read {
        Ok((value, used, fixes)) => {
            match json::arguments_value(&value) {
                Ok(arguments) => out.call_fixed(name, arguments, fixes),
                Err(why) => out.error(format!(
                    "the arguments of the call to `{name}` after `[TOOL_CALLS]` {why}"
                )),
            }
            args_start + used
        }
        Err(fail) => {
            out.error(format!(
                "the arguments of the call to `{name}` after `[TOOL_CALLS]` could not be read: {}. The text was: {}. Write it as {FORM}",
                fail.message(),
                snippet(src.slice(args_start, limit))
            ));
            limit
        }
    }
}
