//! What the user sees while the agent works: either the event lines themselves on stdout
//! (`--json`), or live progress on stderr — streamed model text, each action with a short
//! observation, and per-step token counts.

use serde_json::Value;
use std::io::Write;
use wright_core::Observer;
use wright_llm::StreamDelta;
use wright_protocol::Event;
use wright_protocol::EventBody;

/// `--json`: each event as its log line on stdout, flushed at once.
pub struct JsonLines;

impl Observer for JsonLines {
    fn event(&mut self, event: &Event) {
        if let Ok(line) = event.to_line() {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(line.as_bytes());
            let _ = out.flush();
        }
    }

    fn delta(&mut self, _delta: &StreamDelta) {}
}

/// Live progress for a person, on stderr.
#[derive(Default)]
pub struct Progress {
    at_line_start: bool,
    in_reasoning: bool,
}

impl Progress {
    pub fn new() -> Self {
        Self {
            at_line_start: true,
            in_reasoning: false,
        }
    }

    fn print(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        crate::screen::err(text);
        self.at_line_start = text.ends_with('\n');
    }

    fn line(&mut self, text: &str) {
        if !self.at_line_start {
            self.print("\n");
        }
        self.print(&format!("{text}\n"));
    }
}

impl Observer for Progress {
    fn delta(&mut self, delta: &StreamDelta) {
        match delta {
            StreamDelta::Text(text) => {
                if self.in_reasoning {
                    self.in_reasoning = false;
                    self.line("");
                }
                self.print(text);
            }
            StreamDelta::Reasoning(text) => {
                if !self.in_reasoning {
                    self.in_reasoning = true;
                    self.line("(thinking)");
                }
                self.print(text);
            }
            StreamDelta::ToolCallStarted { .. } => {}
            StreamDelta::Retrying { attempt, reason } => {
                self.line(&format!("  [retry {attempt}: {reason}]"));
            }
        }
    }

    fn event(&mut self, event: &Event) {
        match &event.body {
            EventBody::Action {
                tool, arguments, ..
            } => {
                self.in_reasoning = false;
                // The event's id, for `wright fork --at` (at an action: before it ran).
                self.line(&format!(
                    "  → {tool} {}  #{}",
                    describe_arguments(tool, arguments),
                    event.id
                ));
            }
            EventBody::Observation {
                output,
                is_error,
                exit_code,
                ..
            } => {
                let mut lines: Vec<&str> =
                    output.lines().filter(|l| !l.trim().is_empty()).collect();
                let more = lines.len().saturating_sub(3);
                lines.truncate(3);
                let mut shown = lines
                    .iter()
                    .map(|l| format!("    {}", clip(l, 160)))
                    .collect::<Vec<_>>()
                    .join("\n");
                if more > 0 {
                    shown.push_str(&format!("\n    … {more} more lines"));
                }
                if *is_error {
                    shown = format!("    error: {}", shown.trim_start());
                } else if let Some(code) = exit_code.filter(|c| *c != 0) {
                    shown.push_str(&format!("\n    (exit {code})"));
                }
                if !shown.trim().is_empty() {
                    self.line(&shown);
                }
            }
            EventBody::Usage(usage) => {
                let cached = usage
                    .cached_tokens
                    .map(|c| format!(" ({c} cached)"))
                    .unwrap_or_default();
                let secs =
                    (usage.prefill_ms.unwrap_or(0.0) + usage.generation_ms.unwrap_or(0.0)) / 1000.0;
                self.line(&format!(
                    "  [step {} · {} prompt tokens{cached} · {} generated · {secs:.1} s]",
                    usage.step, usage.prompt_tokens, usage.completion_tokens
                ));
            }
            EventBody::Error { message } => self.line(&format!("error: {message}")),
            EventBody::Review(review) => {
                for line in review.lines() {
                    self.line(&format!("  [review: {line}]"));
                }
            }
            EventBody::Condensation(c) => {
                let how = if c.summary.is_some() {
                    "summarized the earlier steps"
                } else {
                    "masked old outputs"
                };
                self.line(&format!(
                    "  [condensed the history: {how}; ~{} → ~{} tokens]",
                    c.tokens_before, c.tokens_after
                ));
            }
            EventBody::Message { .. } | EventBody::State { .. } | EventBody::Start(_) => {}
        }
    }
}

/// The gist of a call's arguments on one line.
pub fn describe_arguments(tool: &str, arguments: &Value) -> String {
    let field = |key: &str| arguments.get(key).and_then(Value::as_str).unwrap_or("");
    let text = match tool {
        "terminal" | "execute_bash" | "bash" => {
            let input = if arguments
                .get("is_input")
                .is_some_and(|v| v == true || v == "true")
            {
                "(input) "
            } else {
                ""
            };
            format!("{input}{}", field("command"))
        }
        "file_editor" | "str_replace_editor" => format!("{} {}", field("command"), field("path")),
        "finish" => String::new(),
        "think" => field("thought").to_string(),
        _ => arguments.to_string(),
    };
    clip(text.lines().next().unwrap_or(""), 120)
}

pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
