//! Gemma 4 calls (google/gemma-4 chat template, `format_argument`):
//! `<|tool_call>call:NAME{key:<|"|>text<|"|>,n:3,flag:true,xs:[1,2],o:{k:<|"|>v<|"|>}}<tool_call|>`.
//! Keys are bare; strings sit between two `<|"|>` and are taken literally (no escapes);
//! numbers, booleans and null are bare; objects and lists nest. A JSON-quoted string is
//! read too. The reasoning channel (`<|channel>thought…<channel|>`) is split off by
//! [`super::think`].
//!
//! FunctionGemma (google/functiongemma-270m-it model card and chat template) writes the
//! same call syntax between `<start_function_call>` and `<end_function_call>`, with
//! `<escape>` around strings.

use serde_json::Value;

use super::scan::plausible_name;
use super::scan::snippet;
use super::scan::Src;
use super::Out;

/// One spelling of the call's delimiters.
pub(crate) struct Dialect {
    pub open: &'static str,
    pub close: &'static str,
    quote: &'static str,
    form: &'static str,
}

pub(crate) const GEMMA4: Dialect = Dialect {
    open: "<|tool_call>",
    close: "<tool_call|>",
    quote: "<|\"|>",
    form: "<|tool_call>call:NAME{key:<|\"|>value<|\"|>}<tool_call|>",
};

pub(crate) const FUNCTION_GEMMA: Dialect = Dialect {
    open: "<start_function_call>",
    close: "<end_function_call>",
    quote: "<escape>",
    form: "<start_function_call>call:NAME{key:<escape>value<escape>}<end_function_call>",
};

const CALL: &str = "call:";

/// Reads the block whose opening token is at `at`; returns where it ends.
pub(crate) fn parse(src: &mut Src, at: usize, dialect: &Dialect, out: &mut Out) -> usize {
    let (open, close, form) = (dialect.open, dialect.close, dialect.form);
    let block_end = src.find_first_or_end(&[close, open], at + open.len());
    let end = if src.starts(block_end, close) {
        block_end + close.len()
    } else {
        block_end
    };
    let mut pos = src.skip_ws(at + open.len());
    let mut read = 0;
    while src.starts(pos, CALL) && pos < block_end {
        match one_call(src.slice(pos + CALL.len(), block_end), dialect.quote) {
            Ok((name, arguments, used)) => {
                out.call(name, arguments);
                pos = src.skip_ws(pos + CALL.len() + used);
                read += 1;
            }
            Err(why) => {
                out.error(format!(
                    "a Gemma tool call could not be read: {why}. The text was: {}. Write it as {form}",
                    snippet(src.slice(pos, block_end))
                ));
                return end;
            }
        }
    }
    if read == 0 {
        out.error(format!(
            "a `{open}` does not hold `call:NAME{{…}}`: {}. Write it as {form}",
            snippet(src.slice(at + open.len(), block_end))
        ));
    } else if !src.slice(pos, block_end).trim().is_empty() {
        out.error(format!(
            "after the call, a `{open}` holds more that is not a call: {}",
            snippet(src.slice(pos, block_end))
        ));
    }
    end
}

/// `NAME{…}` at the start of `text`: the name, the arguments and the bytes used.
fn one_call<'t>(text: &'t str, quote: &str) -> Result<(&'t str, Value, usize), String> {
    let brace = text
        .find('{')
        .ok_or_else(|| "no `{` of arguments after the name".to_string())?;
    let name = text.get(..brace).unwrap_or("").trim();
    if !plausible_name(name) {
        return Err(format!("`{}` is not a function name", snippet(name)));
    }
    let (json, used) = to_json(text.get(brace..).unwrap_or(""), quote)?;
    let arguments: Value = serde_json::from_str(&json)
        .map_err(|err| format!("the arguments are not readable ({err})"))?;
    if !arguments.is_object() {
        return Err("the arguments are not an object".into());
    }
    Ok((name, arguments, brace + used))
}

/// Rewrites Gemma's argument syntax from the `{` at the start of `text` to its matching
/// `}` as JSON; returns the JSON and the bytes used.
fn to_json(text: &str, quote: &str) -> Result<(String, usize), String> {
    let mut json = String::with_capacity(text.len() + 16);
    let mut depth = 0usize;
    let mut pos = 0;
    while pos < text.len() {
        let rest = text.get(pos..).unwrap_or("");
        if let Some(inner) = rest.strip_prefix(quote) {
            let close = inner
                .find(quote)
                .ok_or_else(|| format!("a `{quote}` string is never closed"))?;
            let body = inner.get(..close).unwrap_or("");
            json.push_str(&Value::String(body.to_string()).to_string());
            pos += quote.len() + close + quote.len();
            continue;
        }
        let Some(c) = rest.chars().next() else {
            break;
        };
        match c {
            '"' => {
                let mut values = serde_json::Deserializer::from_str(rest).into_iter::<String>();
                match values.next() {
                    Some(Ok(string)) => {
                        json.push_str(&Value::String(string).to_string());
                        pos += values.byte_offset();
                    }
                    _ => return Err("a quoted string is broken".into()),
                }
            }
            '{' | '[' => {
                depth += 1;
                json.push(c);
                pos += 1;
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                json.push(c);
                pos += 1;
                if depth == 0 {
                    return Ok((json, pos));
                }
            }
            c if c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '+') => {
                let word_len = rest
                    .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '+')))
                    .unwrap_or(rest.len());
                let word = rest.get(..word_len).unwrap_or("");
                let is_key = rest
                    .get(word_len..)
                    .unwrap_or("")
                    .trim_start()
                    .starts_with(':');
                if is_key {
                    json.push_str(&Value::String(word.to_string()).to_string());
                } else {
                    json.push_str(word);
                }
                pos += word_len;
            }
            c => {
                json.push(c);
                pos += c.len_utf8();
            }
        }
    }
    Err("the arguments' `{` is never closed".into())
}
