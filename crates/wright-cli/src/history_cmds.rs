//! Finding conversations (an id, a unique prefix, or the latest of this repository) and
//! reading them back: `wright show` prints a log readably, `wright diff` the change a
//! conversation handed over.

use crate::listing::repository_of;
use crate::listing::worked_on;
use crate::listing::Summary;
use crate::progress::clip_lines;
use crate::progress::describe_arguments;
use anyhow::bail;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use wright_core::conversations_dir;
use wright_protocol::count;
use wright_protocol::read_log;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_session::working_copy::Record;

/// Output lines `wright show` prints of each output without `--full`: the first and the
/// last (where a test run says why it failed).
const SHOW_HEAD: usize = 5;
const SHOW_TAIL: usize = 10;

pub use wright_session::stored::conversation_ids;

fn log_path(id: &str) -> PathBuf {
    conversations_dir().join(id).join("events.jsonl")
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

/// The conversation `prefix` names; without one, the latest conversation on the
/// repository of the current directory (said on stderr).
pub fn pick(prefix: Option<&str>) -> Result<PathBuf> {
    if let Some(prefix) = prefix {
        return conversation_dir(prefix);
    }
    let here = repository_of(Path::new("."))?;
    // Ids sort by the second they were made in: among those of the newest second on this
    // repository, the one whose log began last.
    let mut newest: Vec<String> = Vec::new();
    for id in conversation_ids()? {
        if newest
            .first()
            .is_some_and(|first| first.get(..15) != id.get(..15))
        {
            break;
        }
        // The record alone says where it worked: no log is read.
        match Record::read(&conversations_dir().join(&id)) {
            Ok(record) if worked_on(&record) == here.as_path() => newest.push(id),
            Ok(_) | Err(_) => {}
        }
    }
    let Some(id) = newest.into_iter().max_by_key(|id| started_at(id)) else {
        bail!(
            "no conversation on {} yet; name one (`wright ls` lists them)",
            here.display()
        )
    };
    let task = Summary::read(&id).map(|s| s.task).unwrap_or_default();
    tell!(
        "wright: conversation {id}, the latest on {} ({})",
        here.display(),
        crate::progress::clip(&task, 60)
    );
    Ok(conversations_dir().join(id))
}

/// When a conversation's log began (its first event's time, to the millisecond).
fn started_at(id: &str) -> String {
    use std::io::BufRead;
    use std::io::Read;
    let Ok(file) = std::fs::File::open(log_path(id)) else {
        return String::new();
    };
    let mut first = String::new();
    let _ = std::io::BufReader::new(file.take(1 << 20)).read_line(&mut first);
    serde_json::from_str::<serde_json::Value>(&first)
        .ok()
        .and_then(|event| event.get("ts")?.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// `wright diff [ID]`: the change the conversation handed over — its branch against the
/// commit it started from, or the commit wright made in place — read from the user's
/// repository as the end of a run shows it (no textconv, no external diff, bounded).
pub fn diff(prefix: Option<&str>) -> Result<()> {
    use wright_session::handed_over::Handed;
    use wright_session::handed_over::Missing;
    let dir = pick(prefix)?;
    let id = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match wright_session::handed_over::handed_over(&dir)? {
        Handed::Diff(text) => crate::screen::out(&text),
        Handed::NoChanges => say!("conversation {id} made no changes"),
        Handed::Missing(Missing::NotGit(workspace)) => bail!(
            "conversation {id} worked in {}, which is not a git repository, and kept no snapshot of it (--no-snapshot): there is no diff to show",
            workspace.display()
        ),
        Handed::Missing(Missing::NoBranch { branch, change }) => {
            bail!(
                "conversation {id} has no branch {branch}: {}",
                change.why_no_branch(&id)
            )
        }
        Handed::Missing(Missing::LeftInTree(repo_root)) => bail!(
            "conversation {id} left its changes uncommitted in {}, among changes of yours: wright made no commit of its own to show",
            repo_root.display()
        ),
        Handed::Missing(Missing::NoCommit) => bail!(
            "conversation {id} worked in place and has no record of a commit wright made (its run did not end, or an older wright ran it)"
        ),
    }
    Ok(())
}

/// `wright show ID [--full]`: the conversation readably; each output cut to its head and
/// tail unless `full`; the model's finish message always whole.
pub fn show(prefix: &str, full: bool) -> Result<()> {
    let id = resolve_id(prefix)?;
    show_log(&id, read_log(&log_path(&id))?, full)
}

/// Prints conversation `id`'s log, read from a file or from the database.
pub fn show_log(id: &str, parsed: wright_protocol::ParsedLog, full: bool) -> Result<()> {
    let mut cut = false;
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
            } if tool == "finish" => {
                let message = arguments
                    .get("message")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("");
                say!("{n}  → finish\n\nagent (finish): {}", message.trim());
            }
            EventBody::Action {
                tool,
                arguments,
                risk,
                ..
            } => {
                let by = match event.source {
                    Source::Environment => "wright runs the tests first: ",
                    _ => "",
                };
                say!(
                    "{n}  → {by}{tool} {}{}",
                    describe_arguments(tool, arguments),
                    crate::progress::risk_tag(*risk)
                );
            }
            // What finish answers adds nothing to its message, printed above.
            EventBody::Observation { tool, is_error, .. } if tool == "finish" && !is_error => {}
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
                let lines: Vec<&str> = output.lines().collect();
                let shown = if full {
                    lines.iter().map(|l| l.to_string()).collect()
                } else {
                    clip_lines(&lines, SHOW_HEAD, SHOW_TAIL)
                };
                cut |= shown.len() < lines.len();
                say!("{n}    {}{tag}", shown.join("\n         "));
            }
            EventBody::Error { message } => say!("{n}error: {message}"),
            EventBody::Skill { name, cause, .. } => say!("{n}  [skill {name} added: {cause}]"),
            EventBody::Hook(run) => {
                let line = crate::progress::hook_line(run)
                    .unwrap_or_else(|| format!("hook {} ({}): allowed", run.event, run.command));
                say!("{n}  [{line}]");
            }
            EventBody::Plan { tasks, .. } => say!("{n}  [{}]", crate::progress::plan_line(tasks)),
            EventBody::Network(connection) => {
                say!("{n}  [{}]", crate::progress::network_line(connection))
            }
            EventBody::HandedBack(handed) => say!("{n}  [{}]", handed.summary()),
            EventBody::Together { call_ids, .. } => {
                say!(
                    "{n}  [{} ran together]",
                    crate::progress::together(call_ids.len())
                )
            }
            EventBody::Review(review) => {
                for line in review.lines() {
                    say!("{n}  [review: {line}]");
                }
            }
            EventBody::SecondLook(look) => {
                say!("{n}  [{}]", look.heading());
                for finding in &look.findings {
                    say!("{n}    - {finding}");
                }
            }
            EventBody::Condensation(c) => say!(
                "{n}  [condensed: kept from event {}, {} masked{}]",
                c.keep_from,
                count(c.masked.len() as u64, "output"),
                if c.summary_prompt_tokens.is_some() {
                    ", earlier steps summarized"
                } else if c.summary.is_some() {
                    ", the earlier summary kept"
                } else {
                    ""
                }
            ),
            EventBody::Flagged { flag, .. } => say!("{n}  [flagged: {flag}]"),
            EventBody::Confirmation {
                decision, reason, ..
            } => say!(
                "{n}  [{}]",
                crate::progress::confirmation_words(*decision, reason.as_deref())
            ),
            EventBody::State {
                state: wright_protocol::AgentState::AwaitingConfirmation,
                stop: None,
                ..
            } => say!("{n}[awaiting_confirmation: waiting for your answer]"),
            EventBody::State {
                state,
                reason,
                stop,
                ..
            } => {
                // Typed where the log has it (worded here, with what to do), else its words.
                if let Some(stop) =
                    wright_protocol::StopReason::logged(stop.as_ref(), reason.as_deref())
                {
                    let words =
                        crate::hints::stop_words(&stop, None, crate::hints::Front::CommandLine, id);
                    say!("{n}[{}: {words}]", state.as_str());
                }
            }
            EventBody::Retry {
                attempt, reason, ..
            } => say!("{n}  [retry {attempt}: {reason}]"),
            EventBody::Changes(changes) => say!(
                "[changes: {}{}]",
                changes.outcome.as_str(),
                changes
                    .branch
                    .as_ref()
                    .map(|b| format!(" on branch {b}"))
                    .unwrap_or_default()
            ),
            EventBody::Usage(usage) => say!(
                "{n}  [step {} · {} prompt tokens · {} generated]",
                usage.step,
                usage.prompt_tokens,
                usage.completion_tokens
            ),
            EventBody::ModelSwitch(switch) => say!(
                "{n}[{}]",
                wright_session::settings::fleet::switch_line(switch)
            ),
            EventBody::Route(route) => say!(
                "{n}  [{}]",
                wright_session::settings::fleet::route_line(route)
            ),
            EventBody::SideQuestion(side) => {
                say!("\n{n}user (aside): {}", side.question.trim());
                say!("{n}agent (aside): {}", side.answer.trim());
            }
            EventBody::Reading(reading) => match &reading.failed {
                None => say!(
                    "{n}reading (asked apart which line of {} fails): {}",
                    reading.path,
                    reading.answer.trim()
                ),
                Some(why) => say!("{n}reading of {}: not answered ({why})", reading.path),
            },
            EventBody::Check(check) => say!("{n}  [{}]", check.summary()),
            EventBody::Candidate(candidate) => say!("{n}  [{}]", candidate.summary()),
            EventBody::Assist(decision) => say!("{n}  [{}]", decision.summary()),
            EventBody::Account(account) => say!("{n}  [{}]", account.summary()),
        }
    }
    for line in wright_session::settings::fleet::share_lines(&parsed.events) {
        say!("{line}");
    }
    // After a switch, the model it goes on with.
    if let Some(at) = parsed.events.iter().rev().find_map(|e| match &e.body {
        EventBody::ModelSwitch(switch) => Some(&switch.to),
        _ => None,
    }) {
        say!(
            "model now: {} on {}",
            wright_session::settings::fleet::model_words(at),
            at.base_url
        );
    }
    if let Some(torn) = parsed.torn {
        say!(
            "[the log ends in a torn line ({} at line {}): the process was killed while writing]",
            count(torn.bytes as u64, "byte"),
            torn.line
        );
    }
    if cut {
        say!("\n[long outputs were cut to their first and last lines: `wright show --full {id}` prints them whole]");
    }
    Ok(())
}
