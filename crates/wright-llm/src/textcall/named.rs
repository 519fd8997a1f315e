//! `<function name="NAME">…</function>`, in two bodies:
//!
//! - a JSON object of arguments, as Hermes-style models write it instead of `<tool_call>`
//!   (a variant llama.cpp's Hermes 2 Pro handler reads);
//! - `<param name="K">V</param>` elements (openbmb MiniCPM chat template; `<parameter
//!   name="K">` is read too), each value raw text, or `<![CDATA[…]]>` holding text that
//!   would otherwise end the element. Values stay strings for [`super::coerce_arguments`].
//!
//! A call left open at the end of the reply runs to the end.

use serde_json::Map;
use serde_json::Value;

use super::invoke::attribute;
use super::json;
use super::scan::plausible_name;
use super::scan::snippet;
use super::scan::trim_one_newline;
use super::scan::Src;
use super::Out;

const TAG: &str = "<function";
const OPEN: &str = "<function name=";
const CLOSE: &str = "</function>";
const FORM: &str = "<function name=\"NAME\"><param name=\"KEY\">VALUE</param></function>";
const CDATA: &str = "<![CDATA[";
const CDATA_END: &str = "]]>";
/// Element spellings, the longer first (`<param` is a prefix of `<parameter`).
const PARAMS: &[(&str, &str)] = &[("<parameter", "</parameter>"), ("<param", "</param>")];

/// Reads the call whose `<function name=` is at `at`; returns where it ends.
pub(crate) fn parse(src: &mut Src, at: usize, out: &mut Out) -> usize {
    let header_start = at + TAG.len();
    let Some((header, gt)) = src.bounded_name(header_start, '>', 512) else {
        out.error(format!(
            "a tool call `<function name=…` is not closed by `>`. The text was: {}. Write it as {FORM}",
            snippet(src.slice(at, at + 200))
        ));
        return header_start;
    };
    let name = attribute(header, "name").unwrap_or("").trim().to_string();
    if !plausible_name(&name) {
        out.error(format!(
            "a tool call `<function name=…>` has no readable name (found `{}`). Write it as {FORM}",
            snippet(header)
        ));
        return gt + 1;
    }
    let first = src.skip_ws(gt + 1);
    if src.starts(first, "{") {
        return json_body(src, &name, first, out);
    }
    let mut arguments = Map::new();
    let mut pos = gt + 1;
    loop {
        let next = src.skip_ws(pos);
        if src.starts(next, CLOSE) {
            pos = next + CLOSE.len();
            break;
        }
        let Some((tag, close)) = PARAMS
            .iter()
            .copied()
            .find(|(tag, _)| src.starts(next, tag))
        else {
            pos = next;
            break;
        };
        let Some((param_header, param_gt)) = src.bounded_name(next + tag.len(), '>', 512) else {
            out.error(format!(
                "in the call to `{name}`, a `{tag}` is not closed by `>`. Write it as {FORM}"
            ));
            return src.len();
        };
        let key = attribute(param_header, "name")
            .unwrap_or("")
            .trim()
            .to_string();
        let value_start = param_gt + 1;
        let (value, after) = if src.starts(value_start, CDATA) {
            let inner = value_start + CDATA.len();
            let cdata_end = src.find(CDATA_END, inner).unwrap_or(src.len());
            let mut after = src.skip_ws((cdata_end + CDATA_END.len()).min(src.len()));
            if src.starts(after, close) {
                after += close.len();
            }
            (src.slice(inner, cdata_end), after)
        } else {
            let (end, after) = src.value_end(value_start, close, &[tag, CLOSE]);
            (trim_one_newline(src.slice(value_start, end)), after)
        };
        if key.is_empty() {
            out.error(format!(
                "in the call to `{name}`, a parameter has no name=\"…\": `{}`. Write it as {FORM}",
                snippet(param_header)
            ));
        } else {
            arguments.insert(key, Value::String(value.to_string()));
        }
        pos = after;
    }
    out.call(&name, Value::Object(arguments));
    pos
}

/// A JSON object as the body.
fn json_body(src: &mut Src, name: &str, first: usize, out: &mut Out) -> usize {
    let limit = src.find_first_or_end(&[CLOSE, OPEN], first);
    let end = if src.starts(limit, CLOSE) {
        limit + CLOSE.len()
    } else {
        limit
    };
    match json::arguments_from_text(src.slice(first, limit)) {
        Ok((arguments, fixes)) => out.call_fixed(name, arguments, fixes),
        Err(why) => out.error(format!(
            "the arguments of the call to `{name}` could not be read: {why}. Write them as <function name=\"{name}\">{{\"key\": \"value\"}}</function>"
        )),
    }
    end
}
