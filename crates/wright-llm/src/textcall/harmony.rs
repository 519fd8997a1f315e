//! gpt-oss harmony messages (openai/harmony `docs/format.md`). A reply is a run of
//! messages `[<|start|>assistant]<|channel|>CHANNEL[ to=RECIPIENT][ <|constrain|>json]<|message|>BODY`
//! ended by `<|end|>`, `<|call|>` or `<|return|>` (or by the next message, or the end of
//! the text). The recipient may sit in the role part instead (`<|start|>assistant to=functions.f<|channel|>commentary`).
//!
//! - `analysis` is reasoning;
//! - a message with `to=functions.NAME` is a call of NAME with the JSON body as arguments
//!   (other recipients, such as the built-in `browser.search`, are calls of that name);
//! - `final`, and `commentary` without a recipient (a preamble meant for the user), are content.
//!
//! Variants read too: `<|constrain|>json` with or without a space before it, or missing;
//! a call on the `analysis` channel (built-in tools go there); a space after each header
//! token (LLM-jp's harmony dialect: `<|channel|> final<|message|> text`); and a reply whose
//! first header lost its `<|channel|>` to the prompt (`analysis<|message|>…`).

use super::json;
use super::scan::snippet;
use super::scan::Src;
use super::Out;

const START: &str = "<|start|>";
const CHANNEL: &str = "<|channel|>";
const MESSAGE: &str = "<|message|>";
const HEADS: &[&str] = &[START, CHANNEL, MESSAGE];
const ENDS: &[&str] = &["<|end|>", "<|call|>", "<|return|>"];
const BODY_LIMIT: &[&str] = &["<|end|>", "<|call|>", "<|return|>", START, CHANNEL];
const FORM: &str =
    "<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>";

/// Whether `text` is written in harmony.
pub(crate) fn detect(text: &str) -> bool {
    text.contains(CHANNEL) || (text.contains(START) && text.contains(MESSAGE)) || headless(text)
}

/// A reply whose first header lost its `<|channel|>` to the prompt (a generation prompt
/// that ends with it): `analysis<|message|>…`, `commentary to=functions.f <|constrain|>json<|message|>…`.
fn headless(text: &str) -> bool {
    let Some(message) = text.find(MESSAGE) else {
        return false;
    };
    let head = text.get(..message).unwrap_or("").trim_start();
    let channel = head
        .split(|c: char| c.is_whitespace() || c == '<')
        .next()
        .unwrap_or("");
    matches!(channel, "analysis" | "commentary" | "final") && !head.contains(START)
}

/// Reads all of `text` as harmony messages.
pub(crate) fn parse(text: &str, out: &mut Out) {
    if headless(text) {
        parse_messages(&format!("{CHANNEL}{text}"), out);
    } else {
        parse_messages(text, out);
    }
}

fn parse_messages(text: &str, out: &mut Out) {
    let mut src = Src::new(text);
    let mut pos = 0;
    while pos < src.len() {
        let Some((at, _)) = src.find_first(HEADS, pos) else {
            out.text(src.tail(pos));
            return;
        };
        // ` to=functions.f<|channel|>…` at the start: the role part of a header whose
        // `<|start|>assistant` was in the prompt.
        let lead = src.slice(pos, at);
        let header_from =
            if pos == 0 && lead.trim_start().starts_with("to=") && !lead.contains('\n') {
                0
            } else {
                out.text(lead);
                at
            };
        let Some(message) = src.find(MESSAGE, at) else {
            // A header the model never finished.
            let header = src.tail(header_from);
            if let Some(recipient) = recipient(header) {
                out.error(format!(
                    "the call to `{}` is cut off before its `<|message|>` and arguments. Write it as {FORM}",
                    recipient.strip_prefix("functions.").unwrap_or(recipient)
                ));
            }
            return;
        };
        let header = src.slice(header_from, message);
        let body_start = message + MESSAGE.len();
        let body_end = src.find_first_or_end(BODY_LIMIT, body_start);
        let body = src.slice(body_start, body_end);
        pos = match src.starts_any(body_end, ENDS) {
            Some(end) => body_end + end.len(),
            None => body_end,
        };
        if let Some(recipient) = recipient(header) {
            let name = recipient.strip_prefix("functions.").unwrap_or(recipient);
            match json::arguments_from_text(body) {
                Ok((arguments, fixes)) => out.call_fixed(name, arguments, fixes),
                Err(why) => out.error(format!(
                    "the arguments of the call to `{name}` could not be read: {why}. The text was: {}. Write it as {FORM}",
                    snippet(body)
                )),
            }
        } else if channel(header) == Some("analysis") {
            out.reason(body);
        } else {
            out.text(body);
        }
        // Keep separate messages apart in the content.
        if !body.is_empty() {
            out.text("\n");
        }
    }
}

/// The channel named in a header.
fn channel(header: &str) -> Option<&str> {
    // LLM-jp writes a space after each header token.
    // The last one: a header may repeat it (`<|channel|>commentary to=assistant<|channel|>analysis`).
    let after = header
        .get(header.rfind(CHANNEL)? + CHANNEL.len()..)?
        .trim_start();
    let name = after
        .split(|c: char| c.is_whitespace() || c == '<')
        .next()
        .unwrap_or("");
    (!name.is_empty()).then_some(name)
}

/// The `to=` recipient in a header.
fn recipient(header: &str) -> Option<&str> {
    let after = header.get(header.find("to=")? + 3..)?;
    let name = after
        .split(|c: char| c.is_whitespace() || c == '<')
        .next()
        .unwrap_or("");
    // `to=assistant` / `to=user` address the conversation, not a tool.
    (!name.is_empty() && !matches!(name, "assistant" | "user")).then_some(name)
}
