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
//! The closing token may be missing at the end of the reply.

use serde_json::Value;

use super::json;
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
}

pub(crate) struct Block {
    pub open: &'static str,
    pub close: &'static str,
    form: &'static str,
    shape: Shape,
}

pub(crate) const COHERE: Block = Block {
    open: "<|START_ACTION|>",
    close: "<|END_ACTION|>",
    form: "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"NAME\", \"parameters\": {…}}]<|END_ACTION|>",
    shape: Shape::CallObjects,
};

pub(crate) const APERTUS: Block = Block {
    open: "<|tools_prefix|>",
    close: "<|tools_suffix|>",
    form: "<|tools_prefix|>[{\"NAME\": {\"key\": \"value\"}}]<|tools_suffix|>",
    shape: Shape::NameKeyed,
};

/// Reads the block whose opening token is at `at`; returns where it ends.
pub(crate) fn parse(src: &mut Src, at: usize, block: &Block, out: &mut Out) -> usize {
    let body = at + block.open.len();
    let limit = src.find_first_or_end(&[block.close, block.open], body);
    let end = if src.starts(limit, block.close) {
        limit + block.close.len()
    } else {
        limit
    };
    let text = src.slice(body, limit);
    let (values, fixes) = match json::values_prefix_repaired(text) {
        Ok((values, used, fixes)) if text.get(used..).unwrap_or("").trim().is_empty() => {
            (values, fixes)
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
    match block.shape {
        Shape::CallObjects => json::record(&values, out, block.open, text, &fixes),
        Shape::NameKeyed => {
            for value in &values {
                name_keyed(value, out, block, &fixes);
            }
        }
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
