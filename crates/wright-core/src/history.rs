//! The history the model sees, as a pure function of the event log. Because it depends on
//! nothing else, replaying a log gives the same bytes, and because events are only ever
//! appended, each rendering extends the previous one — until a condensation, after which
//! the condensed history is again only extended.

use crate::taught::attach;
use crate::taught::lasting;
use crate::taught::shown;
use std::collections::HashSet;
use wright_llm::ChatMessage;
use wright_llm::ToolCall;
use wright_protocol::count;
use wright_protocol::render_plan;
use wright_protocol::CheckMoment;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::ToolCalling;

/// The line between the workspace map and the user's own words.
pub const MAP_END: &str = "# Task";

/// Observations the condenser masked keep this many lines at each end.
const MASK_KEEP_LINES: usize = 6;
/// Each kept line is cut at this many characters (a minified file has long lines).
const MASK_LINE_CHARS: usize = 200;
/// Single-line outputs keep this many characters at each end.
const MASK_KEEP_CHARS: usize = 600;
/// Masking an observation must save at least this many bytes: less is not worth it.
const MASK_SAVES_AT_LEAST: usize = 400;

/// Renders the events into chat messages, system prompt first.
///
/// Native mode: all tool calls of one step form one assistant turn with `tool_calls`,
/// followed by one `tool` message per result, even though the log interleaves each action
/// with its observation. Text mode: the assistant turn is the reply as the model wrote it,
/// and the results (with any notes from wright) form one user message of
/// `<tool_response>` blocks.
///
/// After a condensation the model sees the system prompt, the task (with the summary of
/// the earlier work appended), then the events from the condensation's `keep_from` on.
pub fn render_history(events: &[Event]) -> Vec<ChatMessage> {
    let last_condensation = events.iter().rev().find_map(|e| match &e.body {
        EventBody::Condensation(c) => Some(c),
        _ => None,
    });
    let Some(condensation) = last_condensation else {
        return render_view(events.iter(), &HashSet::new(), None);
    };
    let task_id = events
        .iter()
        .find(|e| e.source == Source::User && matches!(e.body, EventBody::Message { .. }))
        .map(|e| e.id);
    let view = events.iter().filter(|e| {
        matches!(e.body, EventBody::Start(_))
            || Some(e.id) == task_id
            || lasting(e)
            || (e.id >= condensation.keep_from && !matches!(e.body, EventBody::Condensation(_)))
    });
    let masked: HashSet<u64> = condensation.masked.iter().copied().collect();
    // The plan as it stood where the kept events begin: the calls that made it are gone
    // from the view, the plan must not be (those after `keep_from` still show).
    let plan = events
        .iter()
        .take_while(|e| e.id < condensation.keep_from)
        .filter_map(|e| match &e.body {
            EventBody::Plan { tasks, .. } => Some(tasks),
            _ => None,
        })
        .last()
        .map(|tasks| {
            format!(
                "[Your plan (task_tracker) at that point:]\n{}",
                render_plan(tasks)
            )
        });
    let carried = match (condensation.summary.as_deref(), plan) {
        (Some(summary), Some(plan)) => Some(format!("{summary}\n\n{plan}")),
        (Some(summary), None) => Some(summary.to_string()),
        (None, plan) => plan,
    };
    render_view(view, &masked, carried.as_deref())
}

/// Whether masking `output` makes it much shorter (what the condenser masks).
pub fn worth_masking(output: &str) -> bool {
    output.len() >= masked_output(output).len() + MASK_SAVES_AT_LEAST
}

/// An observation's output as shown once masked: its first and last lines, and how much
/// was cut. Deterministic, so a condensed history renders the same every time.
pub fn masked_output(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    if lines.len() > 2 * MASK_KEEP_LINES {
        let keep = |lines: &[&str]| {
            lines
                .iter()
                .map(|line| clip_line(line))
                .collect::<Vec<_>>()
                .join("\n")
        };
        return format!(
            "{}\n[... {} cut to save context; run the command or view the file again if you need them ...]\n{}",
            keep(&lines[..MASK_KEEP_LINES]),
            count((lines.len() - 2 * MASK_KEEP_LINES) as u64, "line"),
            keep(&lines[lines.len() - MASK_KEEP_LINES..])
        );
    }
    let chars: Vec<char> = output.chars().collect();
    if chars.len() <= 2 * MASK_KEEP_CHARS {
        return output.to_string();
    }
    let head: String = chars[..MASK_KEEP_CHARS].iter().collect();
    let tail: String = chars[chars.len() - MASK_KEEP_CHARS..].iter().collect();
    format!(
        "{head}\n[... {} cut to save context; run the command or view the file again if you need them ...]\n{tail}",
        count((chars.len() - 2 * MASK_KEEP_CHARS) as u64, "character")
    )
}

fn clip_line(line: &str) -> String {
    match line.char_indices().nth(MASK_LINE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

fn render_view<'a>(
    events: impl Iterator<Item = &'a Event> + Clone,
    masked: &HashSet<u64>,
    summary: Option<&str>,
) -> Vec<ChatMessage> {
    let mode = events
        .clone()
        .find_map(|e| match &e.body {
            EventBody::Start(start) => Some(start.tool_calling),
            _ => None,
        })
        .unwrap_or_default();
    let mut summary = summary;
    // The workspace map goes at the head of the first user message: made once, before
    // the first step, it is part of the prefix every later request extends.
    let mut map = events.clone().find_map(|e| match &e.body {
        EventBody::Start(start) => start.workspace_map.clone(),
        _ => None,
    });
    // What the start commit changed: shown once, after the first look, when it failed.
    let mut last_change = events.clone().find_map(|e| match &e.body {
        EventBody::Start(start) => start.last_change.clone(),
        _ => None,
    });
    let mut messages = Vec::new();
    // Commands wright ran itself (the first look), by call id: shown to the model as
    // part of the user's message, not as calls it made.
    let mut environment_calls: Vec<(String, String)> = Vec::new();
    // Whether wright's own call was made after a step of the model's (the first look
    // turned on late) rather than before the first.
    let mut late_look = false;
    // The step whose assistant turn is open, and where that turn is in `messages`.
    let mut open: Option<(u32, usize)> = None;
    // Text mode: the user message of results being assembled.
    let mut results: Option<String> = None;
    // Candidates that failed further on, kept while the next function was tried.
    let mut on_the_way: Vec<&wright_protocol::Candidate> = Vec::new();
    let flush = |messages: &mut Vec<ChatMessage>, results: &mut Option<String>| {
        if let Some(content) = results.take() {
            messages.push(ChatMessage::User { content });
        }
    };
    for event in events {
        match &event.body {
            EventBody::Start(start) => messages.push(ChatMessage::System {
                content: start.system_prompt.clone(),
            }),
            EventBody::Message {
                text, step, raw, ..
            } => match (event.source, mode) {
                (Source::Agent, _) => {
                    flush(&mut messages, &mut results);
                    let content = match mode {
                        ToolCalling::Text => raw.clone().unwrap_or_else(|| text.clone()),
                        ToolCalling::Native => text.clone(),
                    };
                    messages.push(ChatMessage::Assistant {
                        content,
                        tool_calls: Vec::new(),
                    });
                    open = Some((step.unwrap_or(0), messages.len() - 1));
                }
                (Source::Environment, ToolCalling::Text) => {
                    append_result(&mut results, text);
                }
                (Source::User, _) | (Source::Environment, ToolCalling::Native) => {
                    flush(&mut messages, &mut results);
                    // One message, not two in a row: some chat templates insist on turns
                    // alternating.
                    let content = match summary.take() {
                        Some(summary) if event.source == Source::User => format!(
                            "{text}\n\n[Earlier work, condensed to fit the context window:]\n{summary}"
                        ),
                        other => {
                            summary = other;
                            text.clone()
                        }
                    };
                    let content = match map.take() {
                        Some(map) if event.source == Source::User => {
                            format!("{map}\n\n{MAP_END}\n{content}")
                        }
                        other => {
                            map = other;
                            content
                        }
                    };
                    messages.push(ChatMessage::User { content });
                    open = None;
                }
            },
            EventBody::Action {
                call_id,
                arguments,
                step,
                ..
            } if event.source == Source::Environment => {
                let command = arguments["command"].as_str().unwrap_or_default();
                environment_calls.push((call_id.clone(), command.to_string()));
                late_look = *step > 0;
            }
            EventBody::Observation {
                call_id,
                output,
                exit_code,
                ..
            } if environment_calls.iter().any(|(id, _)| id == call_id) => {
                if !late_look {
                    flush(&mut messages, &mut results);
                }
                let command = environment_calls
                    .iter()
                    .find(|(id, _)| id == call_id)
                    .map(|(_, command)| command.as_str())
                    .unwrap_or_default();
                let shown = if masked.contains(&event.id) {
                    masked_output(output)
                } else {
                    output.clone()
                };
                let exit = match exit_code {
                    Some(0) => "; they passed".to_string(),
                    Some(code) => format!("; it exited with code {code}"),
                    None => String::new(),
                };
                let when = if late_look {
                    "After that step"
                } else {
                    "Before your first step"
                };
                let mut text = format!("[{when}, wright ran the tests with `{command}`{exit}:]\n{shown}");
                if exit_code.is_some_and(|code| code != 0) {
                    if let Some(change) = last_change.take() {
                        text.push_str("\n\n");
                        text.push_str(&change);
                    }
                }
                if late_look {
                    // Run after a call of the model (see `wright_strategies::AssistWhenNeeded`):
                    // with that step's results, as a check after an edit is.
                    attach(&mut messages, &mut results, mode, &text);
                    continue;
                }
                match messages.last_mut() {
                    Some(ChatMessage::User { content }) => {
                        content.push_str("\n\n");
                        content.push_str(&text);
                    }
                    _ => messages.push(ChatMessage::User { content: text }),
                }
            }
            // The version of the failing function that passed, asked apart, tried and kept:
            // right after the failure.
            // Versions kept while the failure moved on: shown with the one that passed.
            EventBody::Candidate(candidate)
                if matches!(
                    candidate.outcome,
                    wright_protocol::CandidateOutcome::FailsFurther { .. }
                ) =>
            {
                on_the_way.push(candidate);
            }
            EventBody::Candidate(candidate)
                if candidate.outcome == wright_protocol::CandidateOutcome::Passed
                    && environment_calls.iter().any(|(id, _)| *id == candidate.call_id) =>
            {
                on_the_way.retain(|kept| kept.call_id == candidate.call_id);
                on_the_way.push(candidate);
                if let (Some(ChatMessage::User { content }), Some(offer)) =
                    (messages.last_mut(), offered_versions(&on_the_way))
                {
                    content.push_str("\n\n");
                    content.push_str(&offer);
                }
                on_the_way.clear();
            }
            // A whole file's version kept with the tests passing and nothing checking the
            // task: said as such, so the model looks before it finishes.
            EventBody::Candidate(candidate)
                if candidate.outcome == wright_protocol::CandidateOutcome::Unverified
                    && environment_calls.iter().any(|(id, _)| *id == candidate.call_id) =>
            {
                if let (Some(ChatMessage::User { content }), Some(offer)) =
                    (messages.last_mut(), unverified_version(candidate))
                {
                    content.push_str("\n\n");
                    content.push_str(&offer);
                }
            }
            // The model's own reading of the first look's failure, asked apart: right after
            // that failure, in the same user message.
            EventBody::Reading(reading)
                if reading.failed.is_none()
                    && !reading.answer.is_empty()
                    && environment_calls.iter().any(|(id, _)| *id == reading.call_id) =>
            {
                if let Some(ChatMessage::User { content }) = messages.last_mut() {
                    content.push_str(&format!(
                        "\n\n[Asked apart which line of {} causes this failure, the model answered: {}]",
                        reading.path, reading.answer
                    ));
                }
            }
            EventBody::Action {
                step,
                call_id,
                tool,
                arguments,
                ..
            } => {
                if mode == ToolCalling::Text {
                    // The call is already in the assistant's own text.
                    if open.is_none_or(|(open_step, _)| open_step != *step) {
                        flush(&mut messages, &mut results);
                        messages.push(ChatMessage::Assistant {
                            content: String::new(),
                            tool_calls: Vec::new(),
                        });
                        open = Some((*step, messages.len() - 1));
                    }
                    continue;
                }
                let call =
                    ToolCall::function(call_id.clone(), tool.clone(), render_arguments(arguments));
                match open {
                    Some((open_step, at)) if open_step == *step => {
                        if let Some(ChatMessage::Assistant { tool_calls, .. }) =
                            messages.get_mut(at)
                        {
                            tool_calls.push(call);
                        }
                    }
                    _ => {
                        messages.push(ChatMessage::Assistant {
                            content: String::new(),
                            tool_calls: vec![call],
                        });
                        open = Some((*step, messages.len() - 1));
                    }
                }
            }
            EventBody::Observation {
                call_id,
                tool,
                output,
                is_error,
                ..
            } => {
                let shown = if masked.contains(&event.id) {
                    masked_output(output)
                } else {
                    output.clone()
                };
                let content = if *is_error {
                    format!("ERROR: {shown}")
                } else {
                    shown
                };
                match mode {
                    ToolCalling::Native => messages.push(ChatMessage::Tool {
                        tool_call_id: call_id.clone(),
                        content,
                    }),
                    ToolCalling::Text => append_result(
                        &mut results,
                        &format!("<tool_response name=\"{tool}\">\n{content}\n</tool_response>"),
                    ),
                }
            }
            // wright's check after an edit: its verdict follows the edit's result. One
            // before a `finish` is in the finish's own result.
            EventBody::Check(check) if check.moment == CheckMoment::AfterEdit => {
                attach(&mut messages, &mut results, mode, &check.shown);
            }
            EventBody::Skill { .. } | EventBody::Hook(_) => {
                if let Some(text) = shown(&event.body) {
                    attach(&mut messages, &mut results, mode, &text);
                }
            }
            EventBody::Error { .. }
            | EventBody::State { .. }
            | EventBody::Usage(_)
            | EventBody::Condensation(_)
            | EventBody::Review(_)
            | EventBody::SecondLook(_)
            | EventBody::Retry { .. }
            | EventBody::Changes(_)
            // The plan is in the task_tracker call's own result; `together` is for people.
            | EventBody::Plan { .. }
            | EventBody::Together { .. }
            // The user's answer reaches the model in the call's observation.
            | EventBody::Confirmation { .. }
            | EventBody::Flagged { .. }
            // A switch of model, the route and a side question are never sent: the next
            // model gets the same history, and a side question stays aside.
            | EventBody::ModelSwitch(_)
            | EventBody::Route(_)
            | EventBody::SideQuestion(_)
            // A reading of anything but wright's own first look is not shown (none is made).
            | EventBody::Reading(_)
            // Versions that did not pass are not shown: the failure already says it fails.
            | EventBody::Candidate(_)
            | EventBody::Check(_)
            // The decision is for people; the model gets the help it turned on.
            | EventBody::Assist(_)
            | EventBody::Account(_)
            // A refusal reaches the model in the command's own output.
            | EventBody::Network(_)
            // After the run, for the automation's record: not the model's.
            | EventBody::HandedBack(_) => {}
        }
    }
    flush(&mut messages, &mut results);
    messages
}

/// The versions wright kept, asked apart, as the model is shown them: the one that passed,
/// after those that took the failure further on to the next function (last: `passed`).
/// What the model is told of a whole file's version wright kept unchecked.
fn unverified_version(kept: &wright_protocol::Candidate) -> Option<String> {
    let new = kept.new_str.as_ref()?;
    let fence = if new.contains("```") { "````" } else { "```" };
    Some(format!(
        "[Asked apart, you wrote {path} anew for the task; wright put that version in place: `{command}` still passes with it, but nothing has checked that it does what the task asks. {path} now has:\n{fence}\n{new}\n{fence}\nIf it does what the task asks, call finish now; if not, change {path}.]",
        path = kept.path,
        command = kept.command,
    ))
}

fn offered_versions(kept: &[&wright_protocol::Candidate]) -> Option<String> {
    let passed = kept.last()?;
    let mut versions = Vec::new();
    for candidate in kept {
        let new = candidate.new_str.as_ref()?;
        // The imports it needed went in above it: said first, as the file reads.
        let new = match &candidate.imports {
            Some(imports) => format!("{imports}\n…\n{new}"),
            None => new.clone(),
        };
        let fence = if new.contains("```") { "````" } else { "```" };
        versions.push((candidate, format!("{fence}\n{new}\n{fence}")));
    }
    let command = &passed.command;
    // A file written anew for a task whose tests passed before: no failure to speak of.
    if let ([(only, code)], true) = (&versions[..], passed.name.is_empty()) {
        let check = match passed.check {
            Some(_) => ", and so does a check of the task wright was given",
            None => "",
        };
        return Some(format!(
            "[Asked apart, you wrote {path} anew for the task; wright put that version in place: `{command}` passes with it{check}. {path} now has:\n{code}\nThe work is done: call finish now.]",
            path = only.path,
        ));
    }
    if let [(only, code)] = &versions[..] {
        return Some(format!(
            "[Asked apart, you wrote `{name}` in {path} anew; wright put that version in place, and `{command}` passes now. {path} now has:\n{code}\nThe failure above is fixed: do not edit {path} again. If the task asks for nothing more, call finish now.]",
            name = only.name,
            path = only.path,
        ));
    }
    let names: Vec<String> = versions
        .iter()
        .map(|(candidate, _)| format!("`{}`", candidate.name))
        .collect();
    let mut paths: Vec<&str> = Vec::new();
    for (candidate, _) in &versions {
        if !paths.contains(&candidate.path.as_str()) {
            paths.push(&candidate.path);
        }
    }
    let shown: Vec<String> = versions
        .iter()
        .map(|(candidate, code)| format!("{}:\n{code}", candidate.path))
        .collect();
    Some(format!(
        "[Asked apart, you wrote {names} anew, one after the other (with each, `{command}` failed further on, in the next); wright put those versions in place, and `{command}` passes now. They read:\n{shown}\nThe failure above is fixed: do not edit {paths} again. If the task asks for nothing more, call finish now.]",
        names = names.join(", "),
        shown = shown.join("\n"),
        paths = paths.join(" or "),
    ))
}

pub(crate) fn append_result(results: &mut Option<String>, text: &str) {
    match results {
        Some(content) => {
            content.push('\n');
            content.push_str(text);
        }
        None => *results = Some(text.to_string()),
    }
}

/// Arguments as JSON text. Ones that did not parse were logged as a JSON string; they are
/// sent back wrapped in an object, since servers reject a call whose arguments are not
/// JSON, and the observation beside it already tells the model what was wrong.
fn render_arguments(arguments: &serde_json::Value) -> String {
    match arguments {
        serde_json::Value::Object(_) => arguments.to_string(),
        other => serde_json::json!({ "invalid_arguments": other }).to_string(),
    }
}

#[cfg(test)]
mod tests;
