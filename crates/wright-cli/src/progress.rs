//! What the user sees while the agent works: either the event lines themselves on stdout
//! (`--json`), or live progress on stderr — streamed model text, each action with a short
//! observation, and per-step token counts; on a terminal also the live area (`live`):
//! how long the model has been reading or writing, and a running command's last lines.

mod left_out;

use crate::live::Live;
use serde_json::Value;
use wright_core::Observer;
use wright_llm::StreamDelta;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;

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
                step,
                tool,
                arguments,
                risk,
                ..
            } => {
                self.in_reasoning = false;
                self.live.idle();
                // wright's own action (the first look), not the model's.
                let by = match event.source {
                    Source::Environment if *step > 0 => "wright runs the tests now: ",
                    Source::Environment => "wright runs the tests first: ",
                    _ => "",
                };
                // The event's id, for `wright fork --at` (at an action: before it ran).
                self.line(&format!(
                    "  → {by}{tool} {}  #{}{}",
                    describe_arguments(tool, arguments),
                    event.id,
                    risk_tag(*risk)
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
                let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
                let mut shown = clip_lines(&lines, LIVE_HEAD, LIVE_TAIL)
                    .iter()
                    .map(|l| format!("    {}", clip(l, 160)))
                    .collect::<Vec<_>>()
                    .join("\n");
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
            EventBody::SecondLook(look) => {
                self.live.idle();
                self.line(&format!("  [{}]", look.heading()));
                for finding in &look.findings {
                    self.line(&format!("    - {finding}"));
                }
            }
            EventBody::Condensation(c) => {
                // A summary carried over from an earlier condensation was not made now.
                let how = if c.summary_prompt_tokens.is_some() {
                    "summarized the earlier steps"
                } else {
                    "masked old outputs"
                };
                self.line(&format!(
                    "  [condensed the history: {how}; ~{} → ~{} tokens]",
                    c.tokens_before, c.tokens_after
                ));
            }
            EventBody::Plan { tasks, .. } => {
                let plan = wright_protocol::render_plan(tasks);
                let lines: Vec<String> = plan
                    .lines()
                    .map(|l| format!("    {}", clip(l, 160)))
                    .collect();
                self.line(&format!("  [plan]\n{}", lines.join("\n")));
            }
            EventBody::Together { call_ids, .. } => {
                self.line(&format!("  [{} ran together]", together(call_ids.len())));
            }
            EventBody::Flagged { flag, .. } => {
                self.line(&format!("  [flagged: {flag}]"));
            }
            EventBody::Confirmation {
                decision, reason, ..
            } => {
                self.line(&format!(
                    "  [{}]",
                    confirmation_words(*decision, reason.as_deref())
                ));
            }
            EventBody::Skill { name, cause, .. } => {
                self.line(&format!("  [skill {name} added: {cause}]"));
            }
            EventBody::Hook(run) => {
                if let Some(line) = hook_line(run) {
                    self.live.idle();
                    self.line(&format!("  [{line}]"));
                }
            }
            EventBody::Network(connection) => {
                self.live.idle();
                self.line(&format!("  [{}]", network_line(connection)));
            }
            EventBody::HandedBack(handed) => {
                self.live.idle();
                self.line(&format!("[{}]", handed.summary()));
            }
            EventBody::State { .. } => self.live.idle(),
            EventBody::ModelSwitch(switch) => {
                self.live.idle();
                self.line(&format!(
                    "[{}]",
                    wright_session::settings::fleet::switch_line(switch)
                ));
            }
            EventBody::SideQuestion(side) => {
                self.live.idle();
                self.line(&format!("  [aside] {}", side.answer.trim()));
            }
            EventBody::Reading(reading) => {
                self.live.idle();
                match &reading.failed {
                    None => self.line(&format!(
                        "  → wright asks the model apart which line of {} fails:\n    {}",
                        reading.path,
                        reading.answer.trim()
                    )),
                    Some(why) => self.line(&format!(
                        "  → wright asked the model apart which line of {} fails; no answer: {why}",
                        reading.path
                    )),
                }
            }
            EventBody::Candidate(candidate) => {
                self.live.idle();
                self.line(&format!("  → {}", candidate.summary()));
            }
            EventBody::Check(check) => {
                self.live.idle();
                self.line(&format!("  → {}", check.summary()));
            }
            EventBody::Assist(decision) => {
                self.live.idle();
                self.line(&format!("  → {}", decision.summary()));
            }
            EventBody::Account(account) => {
                self.live.idle();
                self.line(&format!("  → {}", account.summary()));
            }
            // The route is in the header.
            EventBody::Route(_) => {}
            // A retry is shown from its delta, as it starts; the changes by the report.
            EventBody::Message { .. }
            | EventBody::Start(_)
            | EventBody::Retry { .. }
            | EventBody::Changes(_) => {}
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

/// After an action's line, its risk when the user would be asked about it in `risky`.
pub fn risk_tag(risk: Option<wright_protocol::Risk>) -> String {
    match risk {
        Some(risk) if risk >= wright_protocol::Risk::Unknown => format!("  (risk {risk})"),
        _ => String::new(),
    }
}

/// The user's answer about a pending action, in words.
pub fn confirmation_words(decision: wright_protocol::Decision, reason: Option<&str>) -> String {
    use wright_protocol::Decision;
    match (decision, reason) {
        (Decision::Approved, _) => "you said yes".to_string(),
        (Decision::Always, _) => {
            "you said yes, and always for this tool in this conversation".to_string()
        }
        (Decision::Rejected, Some(reason)) => format!("you said no: {reason}"),
        (Decision::Rejected, None) => "you said no".to_string(),
    }
}

/// A hook's run on one line, when there is something to say: it blocked, failed, timed
/// out or added context, or it was the setup script (an allowed hook that said nothing
/// is in the log only).
pub fn hook_line(run: &wright_protocol::HookRun) -> Option<String> {
    use wright_protocol::HookEvent;
    use wright_protocol::HookOutcome;
    let whose = match run.origin {
        wright_protocol::HookOrigin::User => "yours",
        wright_protocol::HookOrigin::Repository => "the repository's",
    };
    let what = match run.event {
        HookEvent::Setup => format!("setup script {}", run.command),
        event => format!("hook {event} ({whose}: {})", clip(&run.command, 60)),
    };
    let reason = run.reason.as_deref().unwrap_or_default();
    match run.outcome {
        HookOutcome::Blocked => Some(format!("{what} blocked it: {}", clip(reason, 200))),
        HookOutcome::Failed | HookOutcome::TimedOut => {
            Some(format!("{what}: {}", clip(reason, 200)))
        }
        HookOutcome::Allowed if run.event == HookEvent::Setup => Some(format!("{what} ran")),
        HookOutcome::Allowed if run.context.is_some() => Some(format!("{what} added context")),
        HookOutcome::Allowed => None,
    }
}

/// How a group of concurrent calls is named: "these 3 calls".
pub fn together(calls: usize) -> String {
    format!("these {calls} read-only calls")
}

/// The plan on one line: how far it is, and the task under way (or the next one).
pub fn plan_line(tasks: &[wright_protocol::PlanTask]) -> String {
    use wright_protocol::TaskStatus;
    let done = tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Done)
        .count();
    let current = tasks
        .iter()
        .find(|t| t.status == TaskStatus::Doing)
        .map(|t| format!("; doing: {}", t.title))
        .or_else(|| {
            tasks
                .iter()
                .find(|t| t.status == TaskStatus::Todo)
                .map(|t| format!("; next: {}", t.title))
        })
        .unwrap_or_default();
    clip(
        &format!("plan: {done} of {} done{current}", tasks.len()),
        160,
    )
}

/// Lines of an output shown live: the first and the last (where a test run says why it
/// failed).
const LIVE_HEAD: usize = 2;
const LIVE_TAIL: usize = 4;

/// The lines of an output to show: all of them when they fit in `head + tail + 1`, else
/// the first `head`, a line saying how many were left out (those the tool's own cut
/// omitted too, see `left_out`), and the last `tail` — the end of a test run is where its
/// failure is. Used live and by `wright show`.
pub fn clip_lines(lines: &[&str], head: usize, tail: usize) -> Vec<String> {
    if lines.len() <= head + tail + 1 {
        return lines.iter().map(|l| l.to_string()).collect();
    }
    let left_out = left_out::count(&lines[head..lines.len() - tail], head + tail);
    let mut shown: Vec<String> = lines[..head].iter().map(|l| l.to_string()).collect();
    shown.push(format!("… {left_out} lines left out …"));
    shown.extend(lines[lines.len() - tail..].iter().map(|l| l.to_string()));
    shown
}

/// `text` cut to `max` characters, with `…` when it was longer.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// One connection through wright's proxy or by `fetch`, for people.
pub fn network_line(connection: &wright_protocol::NetConnection) -> String {
    use wright_protocol::NetVerdict;
    let via = match connection.via {
        wright_protocol::NetVia::Proxy => "network",
        wright_protocol::NetVia::Fetch => "fetch",
    };
    let host = wright_protocol::printable(&connection.host);
    match connection.verdict {
        NetVerdict::Allowed => format!(
            "{via}: {host}:{} allowed, {} B sent, {} B received",
            connection.port, connection.bytes_sent, connection.bytes_received
        ),
        NetVerdict::Refused { reason } => format!(
            "{via}: {host}:{} refused ({})",
            connection.port,
            reason.words()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_with_what_was_left_out() {
        let lines: Vec<String> = (1..=16).map(|n| format!("line {n}")).collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        assert_eq!(
            clip_lines(&lines, 2, 3),
            vec![
                "line 1",
                "line 2",
                "… 11 lines left out …",
                "line 14",
                "line 15",
                "line 16"
            ]
        );
        // One line is never replaced by a line saying so.
        assert_eq!(clip_lines(&lines[..6], 2, 3), lines[..6].to_vec());
        assert_eq!(clip_lines(&[], 2, 3), Vec::<String>::new());
    }
}
