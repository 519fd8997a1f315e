//! GLM-4.5 / 4.6 / 4.7 calls inside `<tool_call>`: the function name, then one
//! `<arg_key>K</arg_key><arg_value>V</arg_value>` pair per argument, with or without
//! newlines between them (GLM-4.5 and GLM-4.7 chat templates; zai-org). Values are raw
//! text (the template writes strings as they are and other values as JSON), left as
//! strings for [`super::coerce_arguments`]. GLM-4's older `NAME\n{json}` body is read too.

use serde_json::Map;
use serde_json::Value;

use super::json;
use super::scan::plausible_name;
use super::scan::snippet;
use super::scan::trim_one_newline;
use super::scan::Src;
use super::Out;

const KEY: &str = "<arg_key>";
const KEY_CLOSE: &str = "</arg_key>";
const VALUE: &str = "<arg_value>";
const VALUE_CLOSE: &str = "</arg_value>";
const CLOSE: &str = "</tool_call>";
const OPEN: &str = "<tool_call>";
const FORM: &str = "<tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value></tool_call>";

/// Reads the body whose name starts at `at` (just inside `<tool_call>`); returns where
/// the call ends (before its `</tool_call>`, which the caller consumes).
pub(crate) fn parse(src: &mut Src, at: usize, out: &mut Out) -> usize {
    let block_end = src.find_first_or_end(&[CLOSE, OPEN], at);
    let name_end = src
        .find_first(&[KEY, "\n", "{", CLOSE, OPEN], at)
        .map_or(src.len(), |(pos, _)| pos);
    let name = src.slice(at, name_end).trim();
    if !plausible_name(name) {
        out.error(format!(
            "a `<tool_call>` could not be read: it holds neither a JSON object nor a function name followed by arguments. The text was: {}. Write it as {{\"name\": …, \"arguments\": {{…}}}} inside <tool_call></tool_call>",
            snippet(src.slice(at, block_end))
        ));
        return block_end;
    }
    let mut arguments = Map::new();
    let mut pos = name_end;
    loop {
        let next = src.skip_ws(pos);
        if src.starts(next, KEY) {
            let key_start = next + KEY.len();
            let Some(key_end) = src
                .find(KEY_CLOSE, key_start)
                .filter(|end| *end <= block_end)
            else {
                out.error(format!(
                    "in the call to `{name}`, an `<arg_key>` is not closed by `</arg_key>`. Write it as {FORM}"
                ));
                return block_end;
            };
            let key = src.slice(key_start, key_end).trim().to_string();
            let value_tag = src.skip_ws(key_end + KEY_CLOSE.len());
            if !src.starts(value_tag, VALUE) {
                out.error(format!(
                    "in the call to `{name}`, the argument `{key}` has no `<arg_value>` after its `</arg_key>`. Write it as {FORM}"
                ));
                return block_end;
            }
            let value_start = value_tag + VALUE.len();
            let (value_end, after) = src.value_end(value_start, VALUE_CLOSE, &[KEY, CLOSE, OPEN]);
            let value = trim_one_newline(src.slice(value_start, value_end));
            arguments.insert(key, Value::String(value.to_string()));
            pos = after;
        } else if src.starts(next, "{") {
            match json::arguments_from_text(src.slice(next, block_end)) {
                Ok((Value::Object(more), _)) => arguments.extend(more),
                Ok(_) => {}
                Err(why) => {
                    out.error(format!(
                        "the arguments of the call to `{name}` could not be read: {why}. The text was: {}",
                        snippet(src.slice(next, block_end))
                    ));
                    return block_end;
                }
            }
            pos = block_end;
            break;
        } else if next >= src.len() || src.starts(next, CLOSE) || src.starts(next, OPEN) {
            pos = next;
            break;
        } else {
            // Stray text: skip to the next argument or the end of the block.
            pos = src.find_first_or_end(&[KEY, CLOSE, OPEN], next);
            if pos <= next {
                pos = block_end;
                break;
            }
        }
    }
    out.call(name, Value::Object(arguments));
    pos
}
