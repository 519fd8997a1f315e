//! Functionary v3.2 (MeetKai functionary-small/medium-v3.2 chat template; llama.cpp
//! `functionary_v3_2`): each part of a reply starts with `>>>` and a recipient on its own
//! line — `>>>all\nTEXT` is text for the user, `>>>NAME\n{…}` a call of NAME with JSON
//! arguments. The template's generation prompt ends with `>>>`, so the reply's first part
//! comes without it (see [`leading`]).
//!
//! `>>>python\nCODE` is a call of the `python` tool (when one is on offer) with the code as
//! `{"code": …}`, as the template's code interpreter takes it. `>>>` followed by anything
//! else (a Python prompt, `>>> print(1)`) is text.

use super::json;
use super::scan::plausible_name;
use super::scan::snippet;
use super::scan::Src;
use super::Out;

pub(crate) const MARKER: &str = ">>>";
const FORM: &str = ">>>NAME\n{\"key\": \"value\"}";
/// The recipient whose message is Python code rather than JSON (the template's
/// code-interpreter tool), when a tool of that name is on offer.
const PYTHON: &str = "python";

/// The reply with the `>>>` its first part lost to the prompt put back, when it starts
/// like one (`all\n…`, or `NAME\n{` for a known tool).
pub(crate) fn leading(text: &str, out: &Out) -> Option<String> {
    let (first, rest) = text.split_once('\n')?;
    let first = first.trim();
    let is_part = first == "all"
        || (out.is_known(first) && rest.trim_start().starts_with('{'))
        || (first == PYTHON && out.is_known(PYTHON));
    is_part.then(|| format!("{MARKER}{text}"))
}

/// Reads the part whose `>>>` is at `at`; returns where it ends.
pub(crate) fn parse(src: &mut Src, at: usize, out: &mut Out) -> usize {
    let name_start = at + MARKER.len();
    let line = src
        .tail(name_start)
        .char_indices()
        .take_while(|(offset, _)| *offset <= 128)
        .find(|(_, c)| *c == '\n');
    let Some((length, _)) = line else {
        out.text(MARKER);
        return name_start;
    };
    let raw_name = src.slice(name_start, name_start + length);
    let newline = name_start + length;
    let name = raw_name.trim();
    let body = newline + 1;
    let limit = src.find(MARKER, body).unwrap_or(src.len());
    if name == "all" {
        out.text(src.slice(body, limit));
        return limit;
    }
    let first = src.skip_ws(body);
    if !plausible_name(name) || raw_name.starts_with(' ') {
        out.text(MARKER);
        return name_start;
    }
    if !src.starts(first, "{") {
        if name == PYTHON && out.is_known(PYTHON) {
            // The template's python tool takes the code itself.
            let code = src.slice(body, limit).trim_end();
            out.call(PYTHON, serde_json::json!({ "code": code }));
            return limit;
        }
        if !out.is_known(name) {
            // `>>>word` and prose: not a call.
            out.text(MARKER);
            return name_start;
        }
        out.error(format!(
            "the call to `{name}` after `>>>` has no JSON object of arguments: {}. Write it as {FORM}",
            snippet(src.slice(body, limit))
        ));
        return limit;
    }
    match json::arguments_from_text(src.slice(first, limit)) {
        Ok((arguments, fixes)) => out.call_fixed(name, arguments, fixes),
        Err(why) => out.error(format!(
            "the arguments of the call to `{name}` after `>>>` could not be read: {why}. The text was: {}",
            snippet(src.slice(first, limit))
        )),
    }
    limit
}
