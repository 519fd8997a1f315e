//! Tool calls written as text, for models that do not use native function calling (or a
//! server that did not parse them): the reply's text is read for the call formats open
//! models are trained on, and split into the calls, the reasoning and the remaining content.
//!
//! Formats: Qwen3-Coder / OpenHands XML (`<function=NAME><parameter=K>V</parameter>`),
//! Hermes / Qwen2.5 (`<tool_call>{json}</tool_call>`), GLM-4.5 (`<arg_key>`/`<arg_value>`),
//! Mistral (`[TOOL_CALLS]`), Llama 3.x (`<|python_tag|>`, `<function=NAME>{json}`, the
//! pythonic `[f(a=1)]` list), DeepSeek V3 / V3.1 / R1 and the V3.2 / V4 DSML, Kimi K2 and
//! K3 (XTML), Gemma (```` ```tool_code ````) and Gemma 4 (`<|tool_call>call:f{…}`),
//! MiniMax M2 / M3 (`<minimax:tool_call>`), Cohere Command R7B / A (`<|START_ACTION|>`),
//! Apertus (`<|tools_prefix|>`), Functionary v3.2 (`>>>NAME`), gpt-oss harmony channels,
//! JSON lists between template tokens (Granite 3 `<|tool_call|>`, Nemotron Nano v2
//! `<TOOLCALL>`, FireFunction v2 `functools[`, Apriel `<tool_calls>`, GigaChat 3 / 3.1),
//! LFM2 (`<|tool_call_start|>[f(a=1)]`), Seed-OSS (`<seed:tool_call>`), FunctionGemma
//! (`<start_function_call>`), `<function name="…">` (Hermes variant, MiniCPM `<param>`),
//! `<function_calls><invoke name=…>`, and bare or fenced JSON call objects (also in the
//! wrappers Hermes-style models use instead of `<tool_call>`: `<tool>`, `<response>`,
//! `<json>`, `<function_call>`, …, and the generic `{"tool_call": …}`). Reasoning blocks
//! (`<think>` and the like) are split off first and never read for calls — except that a
//! reply ending in nothing but calls made inside an unclosed block runs them; closed blocks
//! between content and calls are reasoning too.
//!
//! JSON that does not parse is repaired when the repair is sure (see [`Fix`]); each call
//! says what it took.
//!
//! Guarantees:
//! - never panics, on any input, and runs in time about linear in the text;
//! - calls come out in the order they appear, each with a JSON object as `arguments`;
//! - text that is not part of a call stays in `content`;
//! - a call that was recognisably attempted but cannot be read becomes a message in
//!   `errors` saying what was wrong, never silently dropped;
//! - JSON without a marker counts as a call only when its name is one of the known tools,
//!   so that JSON shown as an example is not executed.
//!
//! Argument values from XML-ish formats stay strings; [`coerce_arguments`] converts them
//! to the types of the tool's JSON schema.

mod bare;
mod coerce;
mod deepseek;
mod functionary;
mod gemma;
mod gemma4;
mod glm;
mod harmony;
mod invoke;
mod json;
mod json_block;
mod kimi;
mod llama;
mod mistral;
mod named;
mod pythonic;
mod repair;
mod scan;
mod tagged;
mod think;
mod wrapper;
mod xml;
mod xtml;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod vectors;
#[cfg(test)]
mod vectors_coerce;
#[cfg(test)]
mod vectors_formats;
#[cfg(test)]
mod vectors_json;
#[cfg(test)]
mod vectors_repair;
#[cfg(test)]
mod vectors_templates;
#[cfg(test)]
mod vectors_tokens;
#[cfg(test)]
mod vectors_wrappers;

pub use coerce::coerce_arguments;
pub use repair::Fix;

use scan::Src;

/// One call found in text.
#[derive(Debug, Clone, PartialEq)]
pub struct TextCall {
    pub name: String,
    /// Always a JSON object.
    pub arguments: serde_json::Value,
    /// What had to be repaired to read the call (empty for a call written right).
    pub repairs: Vec<Fix>,
}

/// What a reply's text held.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedText {
    /// The text around the calls (calls and their markers removed, trimmed), kept as the
    /// assistant's message.
    pub content: String,
    /// `<think>…</think>` (also unterminated at the start, and `<|channel|>analysis` for
    /// gpt-oss harmony) split off as reasoning.
    pub reasoning: String,
    pub calls: Vec<TextCall>,
    /// Calls that were recognisably attempted but could not be read (e.g. broken JSON): a
    /// message for the model saying exactly what was wrong. Never silently dropped.
    pub errors: Vec<String>,
}

/// `known_tools`: the tool names on offer (plus aliases). Bare JSON objects only count as
/// calls when their name is a known tool (so that JSON the model shows as an example in
/// prose is not executed); explicit markers (`<tool_call>`, `<function=…>`, `[TOOL_CALLS]`,
/// `<|python_tag|>`, etc.) count whatever the name (an unknown name is then reported by the
/// caller).
pub fn parse_text_calls(text: &str, known_tools: &[&str]) -> ParsedText {
    let mut out = Out::new(known_tools, text.len());
    // MiniMax M3 puts this token before each tag of its calls; it carries nothing else.
    let unprefixed;
    let text = if text.contains(MINIMAX_M3_PREFIX) {
        unprefixed = text.replace(MINIMAX_M3_PREFIX, "");
        unprefixed.as_str()
    } else {
        text
    };
    let rest = wrapper::unwrap_reply(think::split(text, &mut out));
    if let Some(answer) = bare::generic_response(rest) {
        out.text(&answer);
        return out.finish();
    }
    if xtml::detect(rest) {
        xtml::parse(rest, &mut out);
    } else if harmony::detect(rest) {
        harmony::parse(rest, &mut out);
    } else if let Some(whole) = functionary::leading(rest, &out) {
        scan_calls(&whole, &mut out);
    } else {
        scan_calls(rest, &mut out);
    }
    out.finish()
}

const MINIMAX_M3_PREFIX: &str = "]<]minimax[>[";

/// What a marker found in the text starts.
#[derive(Clone, Copy)]
enum Kind {
    ToolCallTag,
    FunctionTag,
    Mistral,
    PythonTag,
    DeepSeek,
    Kimi,
    GemmaFence,
    Gemma4(&'static gemma4::Dialect),
    /// MiniMax `<minimax:tool_call>` and DeepSeek DSML.
    Invoke,
    /// A JSON (or Python) list of calls between a template's tokens.
    Block(&'static json_block::Block),
    Functionary,
    /// `<function name="NAME">` (Hermes variant, MiniCPM).
    NamedFunction,
    /// A closing or end-of-turn token with nothing to open: dropped from the content.
    Stray,
}

const MARKERS: &[(&str, Kind)] = &[
    ("<tool_call>", Kind::ToolCallTag),
    ("<function=", Kind::FunctionTag),
    ("[TOOL_CALLS]", Kind::Mistral),
    ("<|python_tag|>", Kind::PythonTag),
    ("<｜tool▁calls▁begin｜>", Kind::DeepSeek),
    ("<｜tool▁call▁begin｜>", Kind::DeepSeek),
    ("<｜tool▁calls｜>", Kind::DeepSeek),
    ("<|tool▁calls▁begin|>", Kind::DeepSeek),
    ("<|tool▁call▁begin|>", Kind::DeepSeek),
    ("<|tool_calls_begin|>", Kind::DeepSeek),
    ("<|tool_call_begin|>", Kind::Kimi),
    ("<|tool_calls_section_begin|>", Kind::Kimi),
    ("<|tool_call_section_begin|>", Kind::Kimi),
    ("```tool_code", Kind::GemmaFence),
    ("```tool_call", Kind::GemmaFence),
    (gemma4::GEMMA4.open, Kind::Gemma4(&gemma4::GEMMA4)),
    (
        gemma4::FUNCTION_GEMMA.open,
        Kind::Gemma4(&gemma4::FUNCTION_GEMMA),
    ),
    ("<minimax:tool_call>", Kind::Invoke),
    ("<function_calls>", Kind::Invoke),
    (invoke::NAMESPACED_OPEN, Kind::Invoke),
    ("<function name=", Kind::NamedFunction),
    ("<｜DSML｜function_calls>", Kind::Invoke),
    ("<｜DSML｜tool_calls>", Kind::Invoke),
    ("<｜DSML｜invoke", Kind::Invoke),
    ("<|DSML|function_calls>", Kind::Invoke),
    ("<|DSML|tool_calls>", Kind::Invoke),
    ("<|DSML|invoke", Kind::Invoke),
    ("<|START_ACTION|>", Kind::Block(&json_block::COHERE)),
    ("<|tools_prefix|>", Kind::Block(&json_block::APERTUS)),
    ("<TOOLCALL>", Kind::Block(&json_block::NEMOTRON)),
    ("<tool_calls>", Kind::Block(&json_block::APRIEL)),
    ("<|tool_call|>", Kind::Block(&json_block::GRANITE)),
    ("functools[", Kind::Block(&json_block::FIREFUNCTION)),
    ("<|function_call|>", Kind::Block(&json_block::GIGACHAT)),
    (
        "function call<|role_sep|>",
        Kind::Block(&json_block::GIGACHAT3),
    ),
    ("<|tool_call_start|>", Kind::Block(&json_block::LFM2)),
    (functionary::MARKER, Kind::Functionary),
    ("</tool_call>", Kind::Stray),
    (gemma4::GEMMA4.close, Kind::Stray),
    (gemma4::FUNCTION_GEMMA.close, Kind::Stray),
    ("</minimax:tool_call>", Kind::Stray),
    ("</function_calls>", Kind::Stray),
    (invoke::NAMESPACED_CLOSE, Kind::Stray),
    ("</｜DSML｜function_calls>", Kind::Stray),
    ("</｜DSML｜tool_calls>", Kind::Stray),
    ("</|DSML|function_calls>", Kind::Stray),
    ("</|DSML|tool_calls>", Kind::Stray),
    ("<|END_ACTION|>", Kind::Stray),
    ("<|tools_suffix|>", Kind::Stray),
    ("</TOOLCALL>", Kind::Stray),
    // Seed-OSS wraps Qwen3-Coder's `<function=…>` in its own tags.
    ("<seed:tool_call>", Kind::Stray),
    ("</seed:tool_call>", Kind::Stray),
    ("<|message_sep|>", Kind::Stray),
    ("</tool_calls>", Kind::Stray),
    ("<|tool_call_end|>", Kind::Stray),
    ("</function>", Kind::Stray),
    ("<|tool_calls_section_end|>", Kind::Stray),
    ("<|tool_call_section_end|>", Kind::Stray),
    ("<｜tool▁calls▁end｜>", Kind::Stray),
    ("<|eot_id|>", Kind::Stray),
    ("<|eom_id|>", Kind::Stray),
    ("<|im_end|>", Kind::Stray),
    ("<｜end▁of▁sentence｜>", Kind::Stray),
];

/// End-of-turn tokens that are never content, wherever they turn up.
const END_TOKENS: &[&str] = &[
    "<|eot_id|>",
    "<|eom_id|>",
    "<|im_end|>",
    "<｜end▁of▁sentence｜>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    // Gemma 4, Cohere, Apertus.
    "<turn|>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<|END_OF_TURN_TOKEN|>",
    "<|assistant_end|>",
    // Ling, Cohere2, Command R+, Apriel, Seed-OSS.
    "<|role_end|>",
    "<|START_TEXT|>",
    "<|END_TEXT|>",
    "<|CHATBOT_TOKEN|>",
    "[END FINAL RESPONSE]",
    "<seed:eos>",
    // Gemma 4's channel tokens left over around an empty thought.
    "<channel|>",
    "<|channel>",
];

/// Where the last call marker in `text` starts, and where the last closing token ends
/// (used to tell a stray `</think>` inside a call from the end of reasoning).
fn call_markers_around(text: &str) -> (Option<usize>, Option<usize>) {
    let mut last_open = None;
    let mut last_close = None;
    for (needle, kind) in MARKERS {
        let Some(at) = text.rfind(needle) else {
            continue;
        };
        if matches!(kind, Kind::Stray) {
            last_close = last_close.max(Some(at + needle.len()));
        } else {
            last_open = last_open.max(Some(at));
        }
    }
    (last_open, last_close)
}

/// Where the first explicit call marker in `text` is.
fn first_call_marker(text: &str) -> Option<usize> {
    MARKERS
        .iter()
        .filter(|(_, kind)| !matches!(kind, Kind::Stray))
        .filter_map(|(needle, _)| text.find(needle))
        .min()
}

/// Whether `text` reads as calls and nothing else (no content, no errors).
fn calls_only(text: &str, out: &Out) -> bool {
    let mut trial = Out::new(out.known, text.len());
    scan_calls(text, &mut trial);
    let parsed = trial.finish();
    !parsed.calls.is_empty() && parsed.errors.is_empty() && parsed.content.is_empty()
}

/// Walks the text from marker to marker; what lies between goes to the bare-JSON reader.
fn scan_calls(text: &str, out: &mut Out) {
    let mut needles: Vec<&'static str> = MARKERS.iter().map(|(needle, _)| *needle).collect();
    needles.extend_from_slice(think::INNER_OPEN);
    let mut src = Src::new(text);
    let mut pos = 0;
    while pos < src.len() {
        let Some((at, needle)) = src.find_first(&needles, pos) else {
            bare::scan(src.tail(pos), out);
            break;
        };
        bare::scan(src.slice(pos, at), out);
        if think::INNER_OPEN.contains(&needle) {
            // Reasoning between content and calls (GLM's interleaved thinking); an
            // unclosed one is text.
            pos = match think::block(&mut src, at, needle, out) {
                Some(end) => end,
                None => {
                    out.text(needle);
                    at + needle.len()
                }
            };
            continue;
        }
        let kind = MARKERS
            .iter()
            .find(|(marker, _)| *marker == needle)
            .map_or(Kind::Stray, |(_, kind)| *kind);
        let end = match kind {
            Kind::ToolCallTag => tagged::parse(&mut src, at, out),
            Kind::FunctionTag => xml::parse_function(&mut src, at, out),
            Kind::Mistral => mistral::parse(&mut src, at, out),
            Kind::PythonTag => llama::parse(&mut src, at, out),
            Kind::DeepSeek => deepseek::parse(&mut src, at, needle, out),
            Kind::Kimi => kimi::parse(&mut src, at, needle, out),
            Kind::GemmaFence => gemma::parse(&mut src, at, needle, out),
            Kind::Gemma4(dialect) => gemma4::parse(&mut src, at, dialect, out),
            Kind::Invoke => invoke::parse(&mut src, at, needle, out),
            Kind::Block(block) => json_block::parse(&mut src, at, block, out),
            Kind::Functionary => functionary::parse(&mut src, at, out),
            Kind::NamedFunction => named::parse(&mut src, at, out),
            Kind::Stray => at + needle.len(),
        };
        pos = end.max(at + needle.len());
    }
}

/// What parsing has found so far.
pub(crate) struct Out<'k> {
    known: &'k [&'k str],
    content: String,
    reasoning: String,
    calls: Vec<TextCall>,
    errors: Vec<String>,
    /// Bytes the bare-JSON reader may still try to parse speculatively (keeps it linear).
    pub budget: usize,
    /// Second tries left for JSON that ran into the next opening tag (keeps it linear).
    pub retries: usize,
    /// Errors past [`MAX_ERRORS`], counted instead of listed.
    more_errors: usize,
}

/// Errors listed one by one; past this many a reply is garbage and a count says so.
const MAX_ERRORS: usize = 16;

impl<'k> Out<'k> {
    fn new(known: &'k [&'k str], len: usize) -> Self {
        Out {
            known,
            content: String::new(),
            reasoning: String::new(),
            calls: Vec::new(),
            errors: Vec::new(),
            budget: len.saturating_mul(4).saturating_add(1 << 16),
            retries: 8,
            more_errors: 0,
        }
    }

    pub fn is_known(&self, name: &str) -> bool {
        self.known.contains(&name)
    }

    /// Text that is content.
    pub fn text(&mut self, text: &str) {
        self.content.push_str(text);
    }

    pub fn reason(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        if !self.reasoning.is_empty() {
            self.reasoning.push_str("\n\n");
        }
        self.reasoning.push_str(text);
    }

    pub fn call(&mut self, name: &str, arguments: serde_json::Value) {
        self.call_fixed(name, arguments, Vec::new());
    }

    /// A call that was read only after `repairs`.
    pub fn call_fixed(&mut self, name: &str, arguments: serde_json::Value, repairs: Vec<Fix>) {
        self.calls.push(TextCall {
            name: json::clean_name(name),
            arguments,
            repairs,
        });
    }

    pub fn error(&mut self, message: String) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(message);
        } else {
            self.more_errors += 1;
        }
    }

    /// Calls read from JSON (after `repairs`, if any); the broken ones become errors
    /// naming `form`.
    pub fn found(&mut self, found: Vec<json::Found>, form: &str, repairs: &[Fix]) {
        for one in found {
            match one {
                Ok(mut call) => {
                    call.repairs.extend_from_slice(repairs);
                    self.calls.push(call);
                }
                Err(why) => self.error(format!(
                    "a tool call written as {form} could not be read: {why}"
                )),
            }
        }
    }

    fn finish(mut self) -> ParsedText {
        if self.more_errors > 0 {
            self.errors.push(format!(
                "{} more tool calls could not be read either",
                self.more_errors
            ));
        }
        ParsedText {
            content: tidy(&self.content),
            reasoning: self.reasoning,
            calls: self.calls,
            errors: self.errors,
        }
    }
}

/// Content without end-of-turn tokens, empty code fences left around removed calls, or
/// runs of blank lines; trimmed.
fn tidy(content: &str) -> String {
    let mut text = content.to_string();
    for token in END_TOKENS {
        if text.contains(token) {
            text = text.replace(token, "");
        }
    }
    let all: Vec<&str> = text.lines().collect();
    let blank = |index: usize| all.get(index).is_some_and(|line| line.trim().is_empty());
    let mut lines: Vec<&str> = Vec::new();
    let mut index = 0;
    while let Some(line) = all.get(index) {
        let opens_fence = line
            .trim()
            .strip_prefix("```")
            .is_some_and(|info| info.chars().all(|c| c.is_alphanumeric() || c == '_'));
        if opens_fence {
            let mut next = index + 1;
            while blank(next) {
                next += 1;
            }
            if all.get(next).is_some_and(|line| line.trim() == "```") {
                index = next + 1;
                continue;
            }
        }
        let repeated_blank =
            line.trim().is_empty() && lines.last().is_some_and(|last| last.trim().is_empty());
        if !repeated_blank {
            lines.push(line);
        }
        index += 1;
    }
    let text = lines.join("\n");
    // Mistral's end of sequence, when the server kept special tokens.
    let text = text.trim();
    text.strip_suffix("</s>").unwrap_or(text).trim().to_string()
}
