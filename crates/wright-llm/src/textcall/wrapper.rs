//! The tags models put around a bare JSON call instead of `<tool_call>`: `<tool>`,
//! `<tools>`, `<response>`, `<json>`, `<xml>`, `<JSON>`, `<function_call>` (the variants
//! llama.cpp's Hermes 2 Pro handler reads, seen from Hermes-, Qwen- and Llama-based
//! models). The JSON inside is read by [`super::bare`] under its rules (a call only when it
//! names a known tool); this module only finds the tags around a call that was taken, so
//! that they leave the content with it. Tags around anything else are left alone.
//!
//! A reply wholly wrapped in `<response>…</response>` (IBM Granite 3's answer format) is
//! unwrapped before it is read.

use super::scan::tail;

const WRAPPERS: &[&str] = &[
    "tool",
    "tools",
    "response",
    "json",
    "xml",
    "JSON",
    "function_call",
];

/// The span `start..end` of a call taken from `text`, widened over a wrapper tag that opens
/// right before it (after `floor`) and its closing tag right after it.
pub(crate) fn widen(text: &str, floor: usize, start: usize, end: usize) -> (usize, usize) {
    let before = text.get(floor..start).unwrap_or("").trim_end();
    let Some((name, open_at)) = WRAPPERS.iter().find_map(|name| {
        let tag = format!("<{name}>");
        before
            .ends_with(&tag)
            .then(|| (*name, floor + before.len() - tag.len()))
    }) else {
        return (start, end);
    };
    let after = tail(text, end);
    let close = format!("</{name}>");
    let trimmed = after.trim_start();
    let end = if trimmed.starts_with(&close) {
        end + (after.len() - trimmed.len()) + close.len()
    } else {
        end
    };
    (open_at, end)
}

/// A fence body without a wrapper tag around it.
pub(crate) fn strip(body: &str) -> &str {
    let body = body.trim();
    for name in WRAPPERS {
        let open = format!("<{name}>");
        if let Some(inner) = body.strip_prefix(&open) {
            let close = format!("</{name}>");
            let inner = inner.trim();
            return inner.strip_suffix(&close).unwrap_or(inner).trim();
        }
    }
    body
}

/// The reply inside `<response>…</response>` when that is all it is (the closing tag may
/// be missing at the end).
pub(crate) fn unwrap_reply(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(inner) = trimmed.strip_prefix("<response>") else {
        return text;
    };
    match inner.find("</response>") {
        None => inner,
        Some(close)
            if inner
                .get(close..)
                .is_some_and(|rest| rest.trim() == "</response>") =>
        {
            inner.get(..close).unwrap_or(inner)
        }
        Some(_) => text,
    }
}
