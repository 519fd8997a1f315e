//! `wright ls` and `wright show`: reading conversations back from their logs.

use crate::progress::clip;
use crate::progress::describe_arguments;
use anyhow::bail;
use anyhow::Context;
use anyhow::Result;
use std::path::PathBuf;
use wright_core::conversations_dir;
use wright_protocol::read_log;
use wright_protocol::EventBody;
use wright_protocol::Source;

fn conversation_ids() -> Result<Vec<String>> {
    let dir = conversations_dir();
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut ids: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .flatten()
        .filter(|e| e.path().join("events.jsonl").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    ids.sort();
    ids.reverse();
    Ok(ids)
}

fn log_path(id: &str) -> PathBuf {
    conversations_dir().join(id).join("events.jsonl")
}

pub fn list() -> Result<()> {
    let ids = conversation_ids()?;
    if ids.is_empty() {
        say!("no conversations yet in {}", conversations_dir().display());
        return Ok(());
    }
    for id in ids {
        let parsed = match read_log(&log_path(&id)) {
            Ok(parsed) => parsed,
            Err(err) => {
                say!("{id}  (unreadable: {err})");
                continue;
            }
        };
        let mut state = "running".to_string();
        let mut task = String::new();
        let mut steps = 0;
        for event in &parsed.events {
            match &event.body {
                EventBody::State { state: s, .. } => state = s.as_str().to_string(),
                EventBody::Message { text, .. }
                    if event.source == Source::User && task.is_empty() =>
                {
                    task = text.lines().next().unwrap_or("").to_string();
                }
                EventBody::Usage(_) => steps += 1,
                _ => {}
            }
        }
        // A log that says "running" is only true while a process holds its lock.
        if state == "running" {
            state = match wright_core::lock_holder(&conversations_dir().join(&id)) {
                Some(_) => "running".to_string(),
                None => "interrupted".to_string(),
            };
        }
        let torn = if parsed.torn.is_some() {
            " (log torn at the end)"
        } else {
            ""
        };
        say!(
            "{id}  {state:<11} {steps:>3} {}  {}{torn}",
            if steps == 1 { "step " } else { "steps" },
            clip(&task, 70)
        );
    }
    Ok(())
}

/// The id a unique prefix names.
pub fn resolve_id(prefix: &str) -> Result<String> {
    let matches: Vec<String> = conversation_ids()?
        .into_iter()
        .filter(|id| id.starts_with(prefix))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!(
            "no conversation '{prefix}' in {}; `wright ls` lists them",
            conversations_dir().display()
        ),
        many => bail!(
            "'{prefix}' matches several conversations: {}",
            many.join(", ")
        ),
    }
}

pub fn conversation_dir(prefix: &str) -> Result<PathBuf> {
    Ok(conversations_dir().join(resolve_id(prefix)?))
}

pub fn show(prefix: &str) -> Result<()> {
    let id = resolve_id(prefix)?;
    let parsed = read_log(&log_path(&id))?;
    for event in &parsed.events {
        // Each event's id in the first column: what `wright fork --at` takes.
        let n = format!("{:>4} ", event.id);
        match &event.body {
            EventBody::Start(start) => say!(
                "{n}conversation {} · model {} on {} · workspace {}",
                start.conversation,
                start.model,
                start.base_url,
                start.workspace
            ),
            EventBody::Message { text, .. } => {
                let who = match event.source {
                    Source::User => "user",
                    Source::Agent => "agent",
                    Source::Environment => "note",
                };
                say!("\n{n}{who}: {}", text.trim());
            }
            EventBody::Action {
                tool, arguments, ..
            } => {
                say!("{n}  → {tool} {}", describe_arguments(tool, arguments));
            }
            EventBody::Observation {
                output,
                is_error,
                exit_code,
                ..
            } => {
                let tag = if *is_error {
                    " (error)".to_string()
                } else {
                    exit_code
                        .filter(|c| *c != 0)
                        .map(|c| format!(" (exit {c})"))
                        .unwrap_or_default()
                };
                let lines: Vec<&str> = output.lines().take(6).collect();
                say!("{n}    {}{tag}", lines.join("\n         "));
            }
            EventBody::Error { message } => say!("{n}error: {message}"),
            EventBody::Review(review) => {
                for line in review.lines() {
                    say!("{n}  [review: {line}]");
                }
            }
            EventBody::Condensation(c) => say!(
                "{n}  [condensed: kept from event {}, {} outputs masked{}]",
                c.keep_from,
                c.masked.len(),
                if c.summary.is_some() {
                    ", earlier steps summarized"
                } else {
                    ""
                }
            ),
            EventBody::State { state, reason } => {
                if let Some(reason) = reason {
                    say!("{n}[{}: {reason}]", state.as_str());
                }
            }
            EventBody::Usage(usage) => say!(
                "{n}  [step {} · {} prompt tokens · {} generated]",
                usage.step,
                usage.prompt_tokens,
                usage.completion_tokens
            ),
        }
    }
    if let Some(torn) = parsed.torn {
        say!("[the log ends in a torn line ({} bytes at line {}): the process was killed while writing]", torn.bytes, torn.line);
    }
    Ok(())
}
