//! Kimi K3 "XTML" (vLLM `kimi_k3_tool_parser`, after the Kimi K3 chat template): a reply
//! is a run of channels `<|open|>NAME<|sep|>BODY<|close|>NAME<|sep|>`.
//!
//! - `response` is the content;
//! - `tools` holds the calls:
//!   `<|open|>call tool="NAME" index="1"<|sep|><|open|>argument key="K" type="string"<|sep|>V<|close|>argument<|sep|>…<|close|>call<|sep|>`;
//!   a `type="string"` value is raw text, any other type is JSON (raw text if it is not);
//!   attribute values have `&quot;` and `&amp;` escaped;
//! - any other channel (the thinking) is reasoning.
//!
//! A channel, call or argument left open at the end of the reply runs to the end; a
//! closing marker with no opening one ends a channel the prompt opened (the thinking) or
//! the message, and is not content.

use serde_json::Map;
use serde_json::Value;

use super::scan::plausible_name;
use super::scan::snippet;
use super::scan::tail;
use super::Out;

const OPEN: &str = "<|open|>";
const CLOSE: &str = "<|close|>";
const SEP: &str = "<|sep|>";
const FORM: &str = "<|open|>tools<|sep|><|open|>call tool=\"NAME\" index=\"1\"<|sep|><|open|>argument key=\"KEY\" type=\"string\"<|sep|>VALUE<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";

/// Whether `text` is written in XTML.
pub(crate) fn detect(text: &str) -> bool {
    text.contains(OPEN) && text.contains(SEP)
}

/// Reads all of `text` as XTML channels.
pub(crate) fn parse(text: &str, out: &mut Out) {
    let mut pos = 0;
    while let Some(found) = tail(text, pos).find(OPEN) {
        let at = pos + found;
        loose(text.get(pos..at).unwrap_or(""), out);
        let (name, _, body) = header(text, at + OPEN.len());
        let (inner_end, end) = close_of(text, body, name);
        let inner = text.get(body..inner_end).unwrap_or("");
        match name {
            "response" => out.text(inner),
            "tools" => tools(inner, out),
            "call" => call(text.get(at + OPEN.len()..end).unwrap_or(""), out),
            _ => out.reason(inner),
        }
        out.text("\n");
        pos = end.max(at + OPEN.len());
    }
    loose(tail(text, pos), out);
}

/// Text outside any opened channel. A closing marker there ends a channel opened in the
/// prompt (the template leaves the thinking open) or the whole message
/// (`<|close|>message<|sep|>`): what comes before a thinking channel's close is reasoning,
/// the markers themselves are not content.
fn loose(text: &str, out: &mut Out) {
    let mut rest = text;
    while let Some(at) = rest.find(CLOSE) {
        let before = rest.get(..at).unwrap_or("");
        let after = tail(rest, at + CLOSE.len());
        let Some(sep) = after
            .find(SEP)
            .filter(|sep| plausible_name(after.get(..*sep).unwrap_or("")))
        else {
            out.text(rest.get(..at + CLOSE.len()).unwrap_or(""));
            rest = after;
            continue;
        };
        match after.get(..sep).unwrap_or("") {
            "response" | "message" | "tools" | "call" | "argument" => out.text(before),
            _ => out.reason(before),
        }
        rest = tail(after, sep + SEP.len());
    }
    out.text(rest);
}

/// The header at `from` (up to `<|sep|>`): its name, its attributes, and where its body
/// starts.
fn header(text: &str, from: usize) -> (&str, &str, usize) {
    let rest = tail(text, from);
    let (head, body) = match rest.find(SEP) {
        Some(sep) if !rest.get(..sep).unwrap_or("").contains(OPEN) => {
            (rest.get(..sep).unwrap_or(""), from + sep + SEP.len())
        }
        _ => ("", from),
    };
    let head = head.trim();
    let (name, attributes) = head.split_once(char::is_whitespace).unwrap_or((head, ""));
    (name, attributes, body)
}

/// Where the channel `name` whose body starts at `body` closes: (end of the body, end of
/// the closing marker); the end of the text when it never does.
fn close_of(text: &str, body: usize, name: &str) -> (usize, usize) {
    let closing = format!("{CLOSE}{name}{SEP}");
    match tail(text, body).find(&closing) {
        Some(found) => (body + found, body + found + closing.len()),
        None => (text.len(), text.len()),
    }
}

/// The calls in a `tools` channel.
fn tools(inner: &str, out: &mut Out) {
    let mut pos = 0;
    while let Some(found) = tail(inner, pos).find(OPEN) {
        let at = pos + found;
        let (name, _, body) = header(inner, at + OPEN.len());
        let (_, end) = close_of(inner, body, name);
        if name == "call" {
            call(inner.get(at + OPEN.len()..end).unwrap_or(""), out);
        }
        pos = end.max(at + OPEN.len());
    }
}

/// One call, from just after its `<|open|>` (`call tool=… <|sep|>…`).
fn call(text: &str, out: &mut Out) {
    let (_, attributes, body) = header(text, 0);
    let name = attribute(attributes, "tool");
    if !plausible_name(&name) {
        out.error(format!(
            "a Kimi call has no readable tool=\"…\" (found `{}`). Write it as {FORM}",
            snippet(attributes)
        ));
        return;
    }
    let mut arguments = Map::new();
    let mut pos = body;
    while let Some(found) = tail(text, pos).find(OPEN) {
        let at = pos + found;
        let (kind, attributes, value_start) = header(text, at + OPEN.len());
        let (value_end, end) = close_of(text, value_start, kind);
        if kind == "argument" {
            let key = attribute(attributes, "key");
            let raw = text.get(value_start..value_end).unwrap_or("");
            let value = match attribute(attributes, "type").as_str() {
                "string" | "" => Value::String(raw.to_string()),
                _ => serde_json::from_str(raw.trim())
                    .unwrap_or_else(|_| Value::String(raw.to_string())),
            };
            if key.is_empty() {
                out.error(format!(
                    "an argument of the call to `{name}` has no key=\"…\". Write it as {FORM}"
                ));
                return;
            }
            arguments.insert(key, value);
        }
        pos = end.max(at + OPEN.len());
    }
    out.call(&name, Value::Object(arguments));
}

/// The value of `key="…"` among `attributes`, unescaped.
fn attribute(attributes: &str, key: &str) -> String {
    let needle = format!("{key}=\"");
    let mut rest = attributes;
    while let Some(at) = rest.find(&needle) {
        let starts_word = at == 0
            || rest
                .get(..at)
                .and_then(|before| before.chars().next_back())
                .is_some_and(char::is_whitespace);
        let value = rest.get(at + needle.len()..).unwrap_or("");
        if starts_word {
            let end = value.find('"').unwrap_or(value.len());
            return value
                .get(..end)
                .unwrap_or("")
                .replace("&quot;", "\"")
                .replace("&amp;", "&");
        }
        rest = value;
    }
    String::new()
}
