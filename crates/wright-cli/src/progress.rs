//! What the user sees while the agent works: either the event lines themselves on stdout
//! (`--json`), or live progress on stderr — streamed model text, each action with a short
//! observation, and per-step token counts; on a terminal also the live area (`live`):
//! how long the model has been reading or writing, and a running command's last lines.

use crate::live::Live;
use serde_json::Value;
use wright_core::Observer;
use wright_llm::StreamDelta;
use wright_protocol::Event;
use wright_protocol::EventBody;

/// `--json`: each event as its log line on stdout, flushed at once.
pub struct JsonLines;

impl Observer for JsonLines {
    fn event(&mut self, event: &Event) {
        // Escaped JSON: `printable` leaves it as it is.
        if let Ok(line) = event.to_line() {
            crate::screen::out(&line);
        }
    }

    fn delta(&mut self, _delta: &StreamDelta) {}
}

/// Live progress for a person, on stderr; on a terminal, with the live area (`live`)
/// under it.
pub struct Progress {
    live: Live,
    in_reasoning: bool,
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

impl Progress {
    pub fn new() -> Self {
        Self {
            live: Live::new(),
            in_reasoning: false,
        }
    }

    fn print(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.live.print(text);
    }

    fn line(&mut self, text: &str) {
        if !self.live.at_line_start() {
            self.print("\n");
        }
        self.print(&format!("{text}\n"));
    }
}

impl Observer for Progress {
    fn delta(&mut self, delta: &StreamDelta) {
        match delta {
            StreamDelta::Text(text) => {
                self.live.piece();
                if self.in_reasoning {
                    self.in_reasoning = false;
                    self.line("");
                }
                self.print(text);
            }
            StreamDelta::Reasoning(text) => {
                self.live.piece();
                if !self.in_reasoning {
                    self.in_reasoning = true;
                    self.line("(thinking)");
                }
                self.print(text);
            }
            StreamDelta::ToolCallStarted { name } => {
                // Room under the text for the live line while the call is written.
                if self.live.enabled() && !self.live.at_line_start() {
                    self.print("\n");
                }
                self.live.writing(name);
            }
            StreamDelta::ToolCallArguments(_) => self.live.piece(),
            StreamDelta::PromptProgress(progress) => self.live.prefill(*progress),
            StreamDelta::Retrying { attempt, reason } => {
                self.line(&format!("  [retry {attempt}: {reason}]"));
            }
        }
    }

    fn model_request(&mut self, step: u32) {
        self.live.model_request(step);
    }

    fn command_output(&mut self, bytes: &[u8]) {
        self.live.output(bytes);
    }

    fn event(&mut self, event: &Event) {
        match &event.body {
            EventBody::Action {
                tool, arguments, ..
            } => {
                self.in_reasoning = false;
                self.live.idle();
                self.line(&format!(
                    "  → {tool} {}",
                    describe_arguments(tool, arguments)
                ));
                self.live.tool(tool);
            }
            EventBody::Observation {
                output,
                is_error,
                exit_code,
                ..
            } => {
                self.live.idle();
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
                self.live.idle();
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
            EventBody::Error { message } => {
                self.live.idle();
                self.line(&format!("error: {message}"));
            }
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
            EventBody::State { .. } => self.live.idle(),
            EventBody::Message { .. } | EventBody::Start(_) => {}
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
