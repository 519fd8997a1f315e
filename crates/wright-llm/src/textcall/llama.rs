//! Llama 3.x `<|python_tag|>` (meta-llama/llama-models prompt formats for 3.1 and 3.2):
//!
//! - 3.1 JSON tool calling: `<|python_tag|>{"type": "function", "name": "f", "parameters": {…}}<|eom_id|>`
//!   (`arguments` accepted as well; several objects may be separated by `;`);
//! - 3.2 zero-shot calls: `<|python_tag|>[f(a="x", b=1), g()]<|eot_id|>`, the pythonic form;
//! - 3.1 built-in tools: `<|python_tag|>brave_search.call(query="…")<|eom_id|>`.
//!
//! Plain Python code after the tag (the code interpreter) is not a call of a tool on offer
//! and is reported as such.

use super::json;
use super::pythonic;
use super::scan::snippet;
use super::scan::Src;
use super::Out;

const TAG: &str = "<|python_tag|>";
const ENDS: &[&str] = &["<|eom_id|>", "<|eot_id|>", TAG];
const FORM: &str = "<|python_tag|>{\"name\": \"NAME\", \"parameters\": {…}}";

/// Reads what follows the `<|python_tag|>` at `at`; returns where it ends.
pub(crate) fn parse(src: &mut Src, at: usize, out: &mut Out) -> usize {
    let body = at + TAG.len();
    let first = src.skip_ws(body);
    let (limit, end) = match src.find_first(ENDS, body) {
        Some((pos, TAG)) => (pos, pos),
        Some((pos, marker)) => (pos, pos + marker.len()),
        None => (src.len(), src.len()),
    };
    let text = src.slice(first, limit);
    let is_json = text.starts_with('{')
        || text
            .strip_prefix('[')
            .is_some_and(|inside| inside.trim_start().starts_with('{'));
    if is_json {
        match json::values_prefix_repaired(text) {
            Ok((values, used, fixes)) => {
                json::record(&values, out, "<|python_tag|> JSON", text, &fixes);
                if !text.get(used..).unwrap_or("").trim().is_empty() {
                    return first + used;
                }
            }
            Err(fail) => out.error(format!(
                "a tool call after `<|python_tag|>` could not be read: {}. The text was: {}. Write it as {FORM}",
                fail.message(),
                snippet(text)
            )),
        }
        return end;
    }
    if text.is_empty() {
        out.error(format!(
            "`<|python_tag|>` is followed by nothing: write the call after it, as {FORM}"
        ));
        return end;
    }
    match pythonic::parse_sequence(text) {
        Ok(calls) => {
            for call in calls {
                out.call(&call.name, call.arguments);
            }
        }
        Err(why) => out.error(format!(
            "what follows `<|python_tag|>` is not a function call ({why}): {}. To call a tool write {FORM}",
            snippet(text)
        )),
    }
    end
}
