//! Calls written without any marker, in text between markers (or in a reply with none):
//!
//! - a JSON call object, or a JSON list of them, bare in the text or alone in a
//!   ```` ``` ```` / ```` ```json ```` fence — what Qwen2.5-Coder emits on llama.cpp, and
//!   what Gemma and Llama 3.x are prompted to write (`{"name": …, "parameters": …}`);
//! - a pythonic list `[f(a=1), g(b="x")]` (Llama 3.2, Gemma).
//!
//! Since nothing vouches that these are meant as calls, they count only when the name is a
//! known tool (for a list, at least one name known and every element call-shaped): JSON
//! shown as an example stays content. A fenced block counts only when its whole body is
//! call-shaped JSON, whatever the fence's label. Speculative parsing is bounded by
//! [`Out::budget`], so the scan stays linear.
//!
//! Broken JSON that starts like a call of a known tool (`{"name": "terminal", …`) was
//! meant as one: it is repaired when [`super::repair`] is sure, and reported as an error
//! otherwise — never left as prose.

use serde_json::Value;

use super::json;
use super::pythonic;
use super::repair;
use super::repair::Fix;
use super::scan::snippet;
use super::scan::tail;
use super::wrapper;
use super::Out;

/// The least an attempt to read JSON is charged, in bytes of budget.
const ATTEMPT_COST: usize = 64;

/// Reads `text` (which holds no explicit marker) into `out`.
pub(crate) fn scan(text: &str, out: &mut Out) {
    let bytes = text.as_bytes();
    let mut emitted = 0;
    let mut pos = 0;
    while pos < bytes.len() {
        let Some(&byte) = bytes.get(pos) else {
            break;
        };
        let found = match byte {
            b'`' if tail(text, pos).starts_with("```") => {
                let (end, found) = fence(text, pos, out);
                if !found {
                    pos = end;
                    continue;
                }
                Some(Ok(end))
            }
            b'{' => speculative_json(text, pos, out),
            b'[' if starts_object_list(text, pos) => speculative_json(text, pos, out),
            b'[' if pythonic::looks_like_call_list(text, pos) => pythonic_list(text, pos, out),
            _ => None,
        };
        match found {
            Some(Ok(end)) => {
                let (start, end) = wrapper::widen(text, emitted, pos, end);
                out.text(text.get(emitted..start).unwrap_or(""));
                emitted = end.max(pos + 1);
                pos = emitted;
            }
            Some(Err(skip)) => pos = skip.max(pos + 1),
            None => pos += 1,
        }
    }
    out.text(text.get(emitted..).unwrap_or(""));
}

/// What a look at one position gave: `Ok(end)` when calls were taken out (the text up to
/// `end` is consumed), `Err(skip)` when it was something else to step over whole.
type Look = Option<Result<usize, usize>>;

/// A ``` fence at `pos`: (where to continue, whether it held calls). A fence whose body is
/// not a call is stepped over whole, so nothing inside it is read.
fn fence(text: &str, pos: usize, out: &mut Out) -> (usize, bool) {
    let after_ticks = pos + 3;
    let rest = tail(text, after_ticks);
    let Some(newline) = rest.find('\n') else {
        return (text.len(), false);
    };
    // The info string after the ticks (the label) is not needed: see below.
    let _ = rest.get(..newline);
    let body_start = after_ticks + newline + 1;
    // Unclosed (the model stopped after the JSON): the block runs to the end.
    let (body_end, end, closed) = match tail(text, body_start).find("```") {
        Some(close) => (body_start + close, body_start + close + 3, true),
        None => (text.len(), text.len(), false),
    };
    let body = wrapper::strip(text.get(body_start..body_end).unwrap_or(""));
    // The fence's label does not matter when its whole body is a call to a known tool:
    // small models label it after the tool (```terminal) as often as ```json. Code that
    // merely contains JSON does not start with it, so it stays content.
    if !(body.starts_with('{') || body.starts_with('[')) {
        return (end, false);
    }
    if !charge(out, body.len()) {
        return (end, false);
    }
    let unclosed: &[Fix] = if closed { &[] } else { &[Fix::UnclosedFence] };
    let taken = match json::values_prefix(body) {
        Ok((values, used)) if body.get(used..).unwrap_or("").trim().is_empty() => {
            take(&values, out, unclosed)
        }
        Ok(_) => false,
        Err(_) if looks_like_call(body, out) => match json::values_prefix_repaired(body) {
            Ok((values, _, mut fixes)) => {
                fixes.extend_from_slice(unclosed);
                take(&values, out, &fixes)
            }
            Err(fail) => {
                out.error(format!(
                    "a tool call written as JSON in a code block could not be read: {}. The text was: {}",
                    fail.message(),
                    snippet(body)
                ));
                true
            }
        },
        Err(_) => false,
    };
    (end, taken)
}

/// A JSON value at `pos`.
fn speculative_json(text: &str, pos: usize, out: &mut Out) -> Look {
    let rest = tail(text, pos);
    if out.budget == 0 {
        return None;
    }
    let (parsed, cost) = json::try_value_prefix(rest);
    // Every attempt costs something, so a text of nothing but brackets stays cheap too.
    charge(out, cost.max(ATTEMPT_COST));
    let Some((value, used)) = parsed else {
        return looks_like_call(rest, out).then(|| broken_call(rest, pos, out));
    };
    if take(std::slice::from_ref(&value), out, &[]) {
        Some(Ok(pos + used))
    } else {
        // Other JSON: step over all of it, so no call-shaped part of an example runs.
        Some(Err(pos + used))
    }
}

/// Broken JSON at `pos` that starts like a call of a known tool: repaired and taken, or
/// reported; either way the text it spans is consumed.
fn broken_call(rest: &str, pos: usize, out: &mut Out) -> Result<usize, usize> {
    match repair::repair(rest) {
        Ok(repaired) => {
            charge(out, repaired.used);
            take(std::slice::from_ref(&repaired.value), out, &repaired.fixes);
            Ok(pos + repaired.used)
        }
        Err(refused) => {
            charge(out, refused.stop);
            let strict = match json::value_prefix(rest) {
                Err(fail) => fail.message(),
                Ok(_) => "it is not valid JSON".to_string(),
            };
            // Where broken JSON ends is unknown: it is taken to run to the next blank line.
            let end = rest
                .get(refused.stop..)
                .and_then(|after| after.find("\n\n"))
                .map_or(rest.len(), |blank| refused.stop + blank);
            out.error(format!(
                "a tool call written as JSON could not be read: {strict}, and it was not repaired: {}. The text was: {}",
                refused.why,
                snippet(rest.get(..end).unwrap_or(rest))
            ));
            Ok(pos + end.max(1))
        }
    }
}

/// Whether `text` starts like a JSON call of a known tool: `{"name": "KNOWN"` (single
/// quotes too, a `[` before it allowed). Cheap: it reads only that far.
fn looks_like_call(text: &str, out: &Out) -> bool {
    let text = text.trim_start();
    let text = text.strip_prefix('[').map_or(text, str::trim_start);
    let Some(text) = text.strip_prefix('{') else {
        return false;
    };
    let Some((key, text)) = quoted(text.trim_start()) else {
        return false;
    };
    if !json::NAME_KEYS.contains(&key) {
        return false;
    }
    let Some(text) = text.trim_start().strip_prefix(':') else {
        return false;
    };
    quoted(text.trim_start()).is_some_and(|(name, _)| out.is_known(&json::clean_name(name)))
}

/// A short quoted word at the start of `text` and the text after it.
fn quoted(text: &str) -> Option<(&str, &str)> {
    let quote = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = text.get(1..)?;
    let (end, _) = body
        .char_indices()
        .take_while(|(offset, _)| *offset < 130)
        .find(|(_, c)| *c == quote)?;
    Some((body.get(..end)?, body.get(end + 1..)?))
}

/// `[` followed by `{`: maybe a JSON list of calls.
fn starts_object_list(text: &str, pos: usize) -> bool {
    tail(text, pos + 1).trim_start().starts_with('{')
}

/// A pythonic list of calls at `pos`, taken when every call names a known tool.
fn pythonic_list(text: &str, pos: usize, out: &mut Out) -> Look {
    let (calls, end) = pythonic::parse_list(text, pos).ok()?;
    charge(out, end.saturating_sub(pos));
    if calls.is_empty() || !calls.iter().all(|call| out.is_known(&call.name)) {
        return Some(Err(end));
    }
    for call in calls {
        out.call(&call.name, call.arguments);
    }
    Some(Ok(end))
}

/// Takes the calls in `values` (read after `repairs`) if they are calls of known tools;
/// whether it did.
fn take(values: &[Value], out: &mut Out, repairs: &[Fix]) -> bool {
    let mut all = Vec::new();
    for value in values {
        match json::calls_in_value(value, true) {
            Some(found) => all.extend(found),
            None => return false,
        }
    }
    let any_known = all.iter().any(|found| match found {
        Ok(call) => out.is_known(&call.name),
        Err(_) => false,
    });
    // A broken call counts when it names a known tool: it was meant.
    let broken_known = values.iter().any(|value| names_known(value, out));
    if !(any_known || broken_known) {
        return false;
    }
    out.found(all, "JSON", repairs);
    true
}

/// Whether a call-shaped value names a known tool (even if its arguments are broken).
fn names_known(value: &Value, out: &Out) -> bool {
    match value {
        Value::Array(items) => items.iter().any(|item| names_known(item, out)),
        Value::Object(map) => [
            "name",
            "tool",
            "tool_name",
            "function",
            "action",
            "tool_call",
        ]
        .iter()
        .any(|key| match map.get(*key) {
            Some(Value::String(name)) => out.is_known(&json::clean_name(name)),
            Some(inner @ Value::Object(_)) => names_known(inner, out),
            _ => false,
        }),
        _ => false,
    }
}

/// Spends `cost` of the budget; false when it is used up.
fn charge(out: &mut Out, cost: usize) -> bool {
    if out.budget == 0 {
        return false;
    }
    out.budget = out.budget.saturating_sub(cost);
    true
}

/// The generic format's answer, `{"response": "TEXT"}`, when it is the whole reply.
pub(crate) fn generic_response(text: &str) -> Option<String> {
    let text = text.trim();
    if !text.starts_with('{') || !text.contains("\"response\"") {
        return None;
    }
    match serde_json::from_str::<Value>(text).ok()? {
        Value::Object(map) if map.len() == 1 => match map.get("response")? {
            Value::String(answer) => Some(answer.clone()),
            _ => None,
        },
        _ => None,
    }
}
