//! JSON-shaped calls, whatever carried them: reading JSON values off the front of a text,
//! and recognising which objects are calls.
//!
//! A call object is `{"name": N, "arguments": A}` with `parameters` (Llama 3.1, Gemma),
//! `args`, `tool_input`, `tool_args`, `input` or `action_input` for `arguments` and `tool`,
//! `tool_name` or `action` for `name`; `{"function": {...}}` (an OpenAI `tool_calls` entry)
//! and `{"tool_calls": [...]}` wrap them. `arguments` may be a JSON string holding the object.

use serde_json::Map;
use serde_json::Value;

use super::repair;
use super::repair::Fix;
use super::scan::snippet;
use super::Out;
use super::TextCall;

/// Why JSON could not be read.
#[derive(Debug)]
pub(crate) enum JsonFail {
    /// The text ended inside the value: the model was cut off (or never closed it).
    Cut(String),
    /// Not JSON at this point.
    Bad(String),
    /// Not JSON, and repairing it would have been a guess.
    Refused { strict: String, why: String },
}

impl JsonFail {
    pub fn message(&self) -> String {
        match self {
            JsonFail::Cut(why) => format!("the JSON is cut off before its end ({why})"),
            JsonFail::Bad(why) => format!("it is not valid JSON ({why})"),
            JsonFail::Refused { strict, why } => {
                format!("it is not valid JSON ({strict}) and was not repaired: {why}")
            }
        }
    }

    fn detail(&self) -> String {
        match self {
            JsonFail::Cut(why) | JsonFail::Bad(why) => why.clone(),
            JsonFail::Refused { strict, .. } => strict.clone(),
        }
    }
}

/// One JSON value at the start of `text` (leading whitespace allowed) and the bytes used.
pub(crate) fn value_prefix(text: &str) -> Result<(Value, usize), JsonFail> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => Ok((value, values.byte_offset())),
        Some(Err(err)) if err.is_eof() => Err(JsonFail::Cut(err.to_string())),
        Some(Err(err)) => Err(JsonFail::Bad(err.to_string())),
        None => Err(JsonFail::Cut("no JSON at all".to_string())),
    }
}

/// A JSON value at the start of `text` if there is one, and how many bytes the parser
/// looked at either way (for work budgets). Failures are not described: this is for
/// speculative reading, which fails at most places it is tried.
pub(crate) fn try_value_prefix(text: &str) -> (Option<(Value, usize)>, usize) {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => {
            let used = values.byte_offset();
            (Some((value, used)), used)
        }
        Some(Err(err)) if err.is_eof() => (None, text.len()),
        Some(Err(err)) => (None, error_offset(text, err.line(), err.column())),
        None => (None, text.len()),
    }
}

/// The byte offset of a 1-based line and column. Reads only as far as that line: the
/// offset is charged to a work budget, so finding it must not cost more than it says.
fn error_offset(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for _ in 1..line {
        match text.get(offset..).and_then(|rest| rest.find('\n')) {
            Some(newline) => offset += newline + 1,
            None => return text.len(),
        }
    }
    (offset + column).min(text.len())
}

/// The JSON values at the start of `text`, one after another (separated by whitespace, `,`
/// or `;`, as models list several calls), up to the first thing that does not start one.
/// A code fence around them is looked through. Returns the values and the bytes used;
/// fails only when a value that started could not be read.
pub(crate) fn values_prefix(text: &str) -> Result<(Vec<Value>, usize), JsonFail> {
    let (inner, offset, fence_end) = unfence(text);
    let mut values = Vec::new();
    let mut pos = 0;
    loop {
        let rest = inner.get(pos..).unwrap_or("");
        let trimmed = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',' || c == ';');
        let skipped = pos + (rest.len() - trimmed.len());
        if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
            break;
        }
        match value_prefix(trimmed) {
            Ok((value, used)) => {
                values.push(value);
                pos = skipped + used;
            }
            Err(fail) if values.is_empty() => return Err(fail),
            Err(_) => break,
        }
    }
    if values.is_empty() {
        return Err(JsonFail::Bad(format!(
            "expected a JSON object, found `{}`",
            snippet(inner)
        )));
    }
    let used = match fence_end {
        Some(end) if inner.get(pos..).unwrap_or("").trim().is_empty() => end,
        _ => offset + pos,
    };
    Ok((values, used))
}

/// [`values_prefix`], and when that fails, the one value [`repair`] can make of the whole
/// text (a fence around it allowed): the values, the bytes used and the repairs made.
pub(crate) fn values_prefix_repaired(
    text: &str,
) -> Result<(Vec<Value>, usize, Vec<Fix>), JsonFail> {
    let fail = match values_prefix(text) {
        Ok((values, used)) => return Ok((values, used, Vec::new())),
        Err(fail) => fail,
    };
    let (inner, offset, fence_end) = unfence(text);
    if !inner.trim_start().starts_with(['{', '[']) {
        return Err(fail);
    }
    let refused = |why: String| JsonFail::Refused {
        strict: fail.detail(),
        why,
    };
    let repaired = repair::repair(inner).map_err(|refused_| refused(refused_.why))?;
    let rest = inner.get(repaired.used..).unwrap_or("");
    if !rest.trim().is_empty() {
        return Err(refused(format!(
            "more text follows it, `{}`, so where it ends is a guess",
            snippet(rest)
        )));
    }
    let used = fence_end.unwrap_or(offset + inner.len());
    Ok((vec![repaired.value], used, repaired.fixes))
}

/// `text` without a surrounding ``` fence: (inner, offset of inner, end of closing fence).
fn unfence(text: &str) -> (&str, usize, Option<usize>) {
    let trimmed = text.trim_start();
    let lead = text.len() - trimmed.len();
    let Some(after_ticks) = trimmed.strip_prefix("```") else {
        return (text, 0, None);
    };
    let Some(newline) = after_ticks.find('\n') else {
        return (text, 0, None);
    };
    let start = lead + 3 + newline + 1;
    let body = text.get(start..).unwrap_or("");
    match body.find("```") {
        Some(close) => (
            body.get(..close).unwrap_or(""),
            start,
            Some(start + close + 3),
        ),
        None => (body, start, None),
    }
}

/// Keys a bare (marker-less) JSON call may have; anything else means it is other JSON.
const CALL_KEYS: &[&str] = &[
    "name",
    "tool",
    "tool_name",
    "function",
    "action",
    "arguments",
    "parameters",
    "args",
    "tool_input",
    "tool_args",
    "input",
    "action_input",
    "type",
    "id",
    "call_id",
];
/// Keys of a tool definition (the model echoing its tools), never of a call.
const DEFINITION_KEYS: &[&str] = &["description", "properties", "required", "returns", "strict"];
pub(crate) const NAME_KEYS: &[&str] = &["name", "tool", "tool_name", "function", "action"];
const ARG_KEYS: &[&str] = &[
    "arguments",
    "parameters",
    "args",
    "tool_input",
    "tool_args",
    "input",
    "action_input",
];

/// One call found in JSON: read, or recognisably meant but broken.
pub(crate) type Found = Result<TextCall, String>;

/// The calls `value` holds, or `None` when it is not call-shaped. Without `arguments`, the
/// object's other keys are the arguments (`{"name": "read_file", "path": "x"}`). `strict`
/// (no marker vouches for it) refuses objects with an `arguments` and other keys a call
/// does not have, and objects that look like a tool's definition.
pub(crate) fn calls_in_value(value: &Value, strict: bool) -> Option<Vec<Found>> {
    match value {
        Value::Array(items) if !items.is_empty() => {
            let mut all = Vec::new();
            for item in items {
                all.extend(calls_in_value(item, strict)?);
            }
            Some(all)
        }
        Value::Object(map) => call_in_object(map, strict),
        _ => None,
    }
}

fn call_in_object(map: &Map<String, Value>, strict: bool) -> Option<Vec<Found>> {
    if let Some(list @ Value::Array(_)) = map.get("tool_calls") {
        if map.len() == 1 || !strict {
            return calls_in_value(list, strict);
        }
        return None;
    }
    // The generic answer format: {"tool_call": {"name": …, "arguments": …}}.
    if let Some(Value::Object(inner)) = map.get("tool_call") {
        if map.len() == 1 || !strict {
            return call_in_object(inner, strict);
        }
        return None;
    }
    if let Some(Value::Object(inner)) = map.get("function") {
        if strict && map.keys().any(|key| !CALL_KEYS.contains(&key.as_str())) {
            return None;
        }
        return call_in_object(inner, strict);
    }
    let has_arguments = ARG_KEYS.iter().any(|key| map.contains_key(*key));
    let has_other_keys = map.keys().any(|key| !CALL_KEYS.contains(&key.as_str()));
    // Without a marker, other keys are the arguments only when there is no `arguments`
    // and nothing says this is a tool's definition rather than a call of it.
    if strict
        && has_other_keys
        && (has_arguments
            || map
                .keys()
                .any(|key| DEFINITION_KEYS.contains(&key.as_str())))
    {
        return None;
    }
    let (name_key, name) = NAME_KEYS.iter().find_map(|key| match map.get(*key) {
        Some(Value::String(name)) => Some((*key, name)),
        _ => None,
    })?;
    let name = clean_name(name);
    if strict && is_schema(map) {
        return None;
    }
    let found = if name.is_empty() {
        Err(format!("`{name_key}` is empty"))
    } else {
        arguments_of(map, name_key).map(|arguments| TextCall {
            name: name.clone(),
            arguments,
            repairs: Vec::new(),
        })
    };
    Some(vec![found.map_err(|why| {
        if name.is_empty() {
            format!("the call has no name: {why}")
        } else {
            format!("the call to `{name}` is unreadable: {why}")
        }
    })])
}

/// Whether the arguments of a call object are a JSON schema: a tool's definition.
fn is_schema(map: &Map<String, Value>) -> bool {
    ARG_KEYS.iter().any(|key| {
        map.get(*key)
            .and_then(Value::as_object)
            .is_some_and(|arguments| {
                arguments.contains_key("type") && arguments.contains_key("properties")
            })
    })
}

/// The arguments object of a call object.
fn arguments_of(map: &Map<String, Value>, name_key: &str) -> Result<Value, String> {
    let Some((key, raw)) = ARG_KEYS
        .iter()
        .find_map(|key| map.get(*key).map(|value| (*key, value)))
    else {
        let rest: Map<String, Value> = map
            .iter()
            .filter(|(key, _)| {
                !matches!(key.as_str(), "type" | "id" | "call_id") && *key != name_key
            })
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        return Ok(Value::Object(rest));
    };
    arguments_value(raw).map_err(|why| format!("`{key}` {why}"))
}

/// Arguments as given: an object, a JSON string holding one, or nothing.
pub(crate) fn arguments_value(raw: &Value) -> Result<Value, String> {
    match raw {
        Value::Object(_) => Ok(raw.clone()),
        Value::Null => Ok(Value::Object(Map::new())),
        Value::String(text) if text.trim().is_empty() => Ok(Value::Object(Map::new())),
        Value::String(text) => match serde_json::from_str::<Value>(text.trim()) {
            Ok(object @ Value::Object(_)) => Ok(object),
            // Encoded twice: a JSON string holding a JSON string holding the object.
            Ok(Value::String(inner)) if inner.trim_start().starts_with('{') => {
                arguments_value(&Value::String(inner))
            }
            Ok(_) => Err(format!(
                "is a string that does not hold a JSON object: `{}`",
                snippet(text)
            )),
            Err(err) => Err(format!(
                "is a string that does not hold valid JSON ({err}): `{}`",
                snippet(text)
            )),
        },
        Value::Array(_) => Err("must be a JSON object of named arguments, not a list".to_string()),
        Value::Bool(_) | Value::Number(_) => {
            Err("must be a JSON object of named arguments, not a single value".to_string())
        }
    }
}

/// `functions.read_file` (a habit of harmony-trained models) is `read_file`.
pub(crate) fn clean_name(name: &str) -> String {
    let name = name.trim();
    name.strip_prefix("functions.").unwrap_or(name).to_string()
}

/// Records what an explicit marker's JSON held: its calls, and an error per broken one
/// or when it holds no call at all. `form` names the format for the messages; `repairs`
/// are what it took to read the JSON.
pub(crate) fn record(values: &[Value], out: &mut Out, form: &str, source: &str, repairs: &[Fix]) {
    let mut any = false;
    for value in values {
        match calls_in_value(value, false) {
            Some(found) => {
                any = true;
                out.found(found, form, repairs);
            }
            None => out.error(format!(
                "a tool call written as {form} could not be read: the JSON has no \"name\" of a tool to call. The text was: {}",
                snippet(source)
            )),
        }
    }
    if values.is_empty() && !any {
        out.error(format!(
            "a tool call written as {form} could not be read: it holds no JSON. The text was: {}",
            snippet(source)
        ));
    }
}

/// Reads the JSON arguments object of a call whose name came from markup, repairing it
/// if need be: the arguments and the repairs made.
pub(crate) fn arguments_from_text(text: &str) -> Result<(Value, Vec<Fix>), String> {
    if text.trim().is_empty() {
        return Ok((Value::Object(Map::new()), Vec::new()));
    }
    let (values, _, fixes) = values_prefix_repaired(text).map_err(|fail| fail.message())?;
    match values.as_slice() {
        [value @ Value::Object(_)] => Ok((value.clone(), fixes)),
        [_] => Err("the arguments must be one JSON object of named arguments".to_string()),
        _ => Err("the arguments must be one JSON object, found several values".to_string()),
    }
}
