//! JSON lists of calls between a pair of special tokens:
//!
//! - Cohere Command R7B / Command A (their chat templates; llama.cpp `command-r7b`):
//!   `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "NAME", "parameters": {…}}]<|END_ACTION|>`,
//!   with the plan in `<|START_THINKING|>…<|END_THINKING|>` and the answer in
//!   `<|START_RESPONSE|>…<|END_RESPONSE|>`;
//! - Apertus (swiss-ai Apertus chat template): `<|tools_prefix|>[{"NAME": {…}}, …]<|tools_suffix|>`,
//!   each call an object whose one key is the function's name, with the reasoning in
//!   `<|inner_prefix|>…<|inner_suffix|>`.
//!
//! - JSON lists of `{"name", "arguments"}` objects between a template's own tokens: IBM
//!   Granite 3.x (`<|tool_call|>[…]`, no closing token), NVIDIA Nemotron Nano v2
//!   (`<TOOLCALL>[…]</TOOLCALL>`), FireFunction v2 (` functools[…]`), ServiceNow Apriel 1.5
//!   (`<tool_calls>[…]</tool_calls>`), GigaChat 3.1 (`<|function_call|>{…}`) and GigaChat 3
//!   (`<|message_sep|>\n\nfunction call<|role_sep|>\n{…}`);
//! - LiquidAI LFM2 (its chat template and model card): `<|tool_call_start|>[f(a=1)]<|tool_call_end|>`,
//!   a Python list of calls (or, with JSON tools, a JSON list).
//!
//! The closing token may be missing at the end of the reply; a block whose format has no
//! closing token ends with its JSON, and the text after it is content.

use serde_json::Value;

use super::json;
use super::pythonic;
use super::repair::Fix;
use super::scan::snippet;
use super::scan::Src;
use super::Out;
use super::TextCall;

/// How the calls are written inside the list.
#[derive(Clone, Copy)]
enum Shape {
    /// `{"tool_name": …, "parameters": …}` (any call object [`json`] knows).
    CallObjects,
    /// `{"NAME": {arguments}}`.
    NameKeyed,
    /// A Python list of calls `[f(a=1)]`, or call objects in JSON.
    Pythonic,
}

pub(crate) struct Block {
    pub open: &'static str,
    /// Empty when the format has none: the block ends with its JSON.
    pub close: &'static str,
    form: &'static str,
    shape: Shape,
    /// The token is an ordinary word or tag too (`<TOOLCALL>`, `functools[`): when no
    /// JSON follows it, it was prose and stays text.
    prose_too: bool,
}

pub(crate) const COHERE: Block = Block {
    open: "<|START_ACTION|>",
    close: "<|END_ACTION|>",
    form: "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"NAME\", \"parameters\": {…}}]<|END_ACTION|>",
    shape: Shape::CallObjects,
    prose_too: false,
};

pub(crate) const APERTUS: Block = Block {
    open: "<|tools_prefix|>",
    close: "<|tools_suffix|>",
    form: "<|tools_prefix|>[{\"NAME\": {\"key\": \"value\"}}]<|tools_suffix|>",
    shape: Shape::NameKeyed,
    prose_too: false,
};

pub(crate) const NEMOTRON: Block = Block {
    open: "<TOOLCALL>",
    close: "</TOOLCALL>",
    form: "<TOOLCALL>[{\"name\": \"NAME\", \"arguments\": {…}}]</TOOLCALL>",
    shape: Shape::CallObjects,
    prose_too: true,
};

pub(crate) const APRIEL: Block = Block {
    open: "<tool_calls>",
    close: "</tool_calls>",
    form: "<tool_calls>[{\"name\": \"NAME\", \"arguments\": {…}}]</tool_calls>",
    shape: Shape::CallObjects,
    prose_too: true,
};

pub(crate) const GRANITE: Block = Block {
    open: "<|tool_call|>",
    close: "",
    form: "<|tool_call|>[{\"name\": \"NAME\", \"arguments\": {…}}]",
    shape: Shape::CallObjects,
    prose_too: true,
};

pub(crate) const FIREFUNCTION: Block = Block {
    open: "functools[",
    close: "",
    form: "functools[{\"name\": \"NAME\", \"arguments\": {…}}]",
    shape: Shape::CallObjects,
    prose_too: true,
};

pub(crate) const GIGACHAT: Block = Block {
    open: "<|function_call|>",
    close: "",
    form: "<|function_call|>{\"name\": \"NAME\", \"arguments\": {…}}",
    shape: Shape::CallObjects,
    prose_too: true,
};

/// GigaChat 3: the call is a message of its own, after `<|message_sep|>`.
pub(crate) const GIGACHAT3: Block = Block {
    open: "function call<|role_sep|>",
    close: "",
    form: "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"NAME\", \"arguments\": {…}}",
    shape: Shape::CallObjects,
    prose_too: true,
};

pub(crate) const LFM2: Block = Block {
    open: "<|tool_call_start|>",
    close: "<|tool_call_end|>",
    form: "<|tool_call_start|>[NAME(key=\"value\")]<|tool_call_end|>",
    shape: Shape::Pythonic,
    prose_too: false,
};

/// Reads the block whose opening token is at `at`; returns where it ends.
pub(crate) fn parse(src: &mut Src, at: usize, block: &Block, out: &mut Out) -> usize {
    // `functools[`: the list starts at its `[`.
    let body = at + block.open.len() - usize::from(block.open.ends_with('['));
    let limit = if block.close.is_empty() {
        src.find_first_or_end(&[block.open], body)
    } else {
        src.find_first_or_end(&[block.close, block.open], body)
    };
    let end = if !block.close.is_empty() && src.starts(limit, block.close) {
        limit + block.close.len()
    } else {
        limit
    };
    let text = src.slice(body, limit);
    if block.prose_too && !text.trim_start().starts_with(['[', '{']) {
        out.text(block.open);
        return at + block.open.len();
    }
    if matches!(block.shape, Shape::Pythonic) && !json_list_ahead(text) {
        return pythonic_block(text, block, end, out);
    }
    let (values, fixes) = match json::values_prefix_repaired(text) {
        Ok((values, used, fixes)) if text.get(used..).unwrap_or("").trim().is_empty() => {
            (values, fixes)
        }
        // No closing token: what follows the JSON is content.
        Ok((values, used, fixes)) if block.close.is_empty() => {
            record(&values, out, block, text, &fixes);
            return body + used;
        }
        Ok(_) => {
            out.error(format!(
                "a `{}` block holds more than a JSON list of calls: {}. Write it as {}",
                block.open,
                snippet(text),
                block.form
            ));
            return end;
        }
        Err(fail) => {
            out.error(format!(
                "the calls in a `{}` block could not be read: {}. The text was: {}. Write them as {}",
                block.open,
                fail.message(),
                snippet(text),
                block.form
            ));
            return end;
        }
    };
    record(&values, out, block, text, &fixes);
    end
}

fn record(values: &[Value], out: &mut Out, block: &Block, text: &str, fixes: &[Fix]) {
    match block.shape {
        Shape::CallObjects | Shape::Pythonic => json::record(values, out, block.open, text, fixes),
        Shape::NameKeyed => {
            for value in values {
                name_keyed(value, out, block, fixes);
            }
        }
    }
}

/// Whether a list opens with a JSON object (`[{`) rather than a Python call (`[f(`).
fn json_list_ahead(text: &str) -> bool {
    let text = text.trim_start();
    text.starts_with('{')
        || text
            .strip_prefix('[')
            .is_some_and(|rest| rest.trim_start().starts_with('{'))
}

/// LFM2: a Python list of calls.
fn pythonic_block(text: &str, block: &Block, end: usize, out: &mut Out) -> usize {
    match pythonic::parse_sequence(text) {
        Ok(calls) => {
            for call in calls {
                out.call(&call.name, call.arguments);
            }
        }
        Err(why) => out.error(format!(
            "the calls in a `{}` block could not be read: {why}. The text was: {}. Write them as {}",
            block.open,
            snippet(text),
            block.form
        )),
    }
    end
}

/// Apertus: a list (or one) of `{"NAME": {arguments}}`.
fn name_keyed(value: &Value, out: &mut Out, block: &Block, fixes: &[Fix]) {
    let items = match value {
        Value::Array(items) => items.as_slice(),
        other => std::slice::from_ref(other),
    };
    for item in items {
        let call = match item {
            Value::Object(map) if map.len() == 1 => map.iter().next().map(|(name, raw)| {
                json::arguments_value(raw).map(|arguments| TextCall {
                    name: json::clean_name(name),
                    arguments,
                    repairs: Vec::new(),
                })
            }),
            // A model that wrote a call object after all.
            other => json::calls_in_value(other, false).and_then(|mut found| found.pop()),
        };
        match call {
            Some(found) => out.found(vec![found], block.open, fixes),
            None => out.error(format!(
                "a call in a `{}` block is not {{\"NAME\": {{arguments}}}}: {}. Write it as {}",
                block.open,
                snippet(&item.to_string()),
                block.form
            )),
        }
    }
}
