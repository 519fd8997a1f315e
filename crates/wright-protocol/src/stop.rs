//! Why a run stopped, as a typed value: what front ends and programs match on, instead of
//! comparing sentences. Its `Display` is the plain fact (no flag, no command: those are
//! the front end's words, rendered from the variant). In the log it is the `stop` field
//! of a `state` event, beside `reason`, the same fact in words; a log written before
//! `stop` existed reads as `StopReason::Other` with its `reason` (`StopReason::logged`).

use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StopReason {
    /// The model called `finish`.
    Finished,
    /// In a chat, the model answered (a reply without a tool call).
    Answered,
    /// The run's step budget was used up.
    MaxSteps { limit: u32 },
    /// Prompt and completion tokens reached the budget.
    MaxTokens { limit: u64, used: u64 },
    /// The cost at the profile's prices reached the cap.
    MaxCost { limit: f64, spent: f64 },
    /// The run's time budget ran out (its length, when known at that point).
    MaxTime {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        secs: Option<u64>,
    },
    /// The agent's files grew past the disk limit.
    MaxDisk { grew_mib: u64, limit_mib: u64 },
    /// Stopped from outside: the user (Ctrl-C), or a signal (`why`, the front end's words).
    Interrupted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<String>,
    },
    /// In a run, the model replied twice without a tool call.
    NoToolCall,
    /// The stuck detector saw the same pattern again after nudging the model.
    Stuck { pattern: String },
    /// The history had to be condensed at every step.
    CondensingEveryStep,
    /// The next request cannot be made to fit the context window (`what` did not fit).
    WindowTooSmall { what: String },
    /// The model server failed (after its retries); the remedy is the outcome's.
    ModelError { message: String },
    /// A tool failed in a way the run cannot go on from.
    ToolFailed { tool: String, message: String },
    /// An action waits for the user's confirmation, and nobody could answer (no
    /// terminal): it did not run, and the next run asks again.
    NobodyToConfirm { tool: String, risk: crate::Risk },
    /// A hook refused the user's message (`UserPromptSubmit`): the model never saw it.
    PromptRefused { reason: String },
    /// The model called `finish` again and again while the command the first look found
    /// failing still failed (`command`, run by wright before each `finish`): the work is
    /// kept, the task not done.
    ChecksFail { command: String, finishes: u32 },
    /// The model called `finish` again and again saying it made a change while the
    /// workspace had none (wright read its diff before each `finish`): nothing was done.
    NothingChanged { finishes: u32 },
    /// A reason in words only: from a log written before reasons were typed.
    Other { text: String },
}

impl StopReason {
    /// The `tool` of a `ToolFailed` when the workspace itself could not be made (the
    /// agent's clone not checked out): nothing ran, and there is nothing to resume in.
    pub const WORKSPACE: &'static str = "workspace";

    /// The typed reason of a logged `state` event: its `stop`, else its words.
    pub fn logged(stop: Option<&StopReason>, reason: Option<&str>) -> Option<StopReason> {
        stop.cloned().or_else(|| {
            reason.map(|text| StopReason::Other {
                text: text.to_string(),
            })
        })
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Finished => write!(f, "the model called finish"),
            StopReason::Answered => write!(f, "the model replied without a tool call"),
            StopReason::MaxSteps { limit } => write!(f, "the step limit ({limit}) was reached"),
            StopReason::MaxTokens { limit, used } => {
                write!(f, "the token budget ({limit}) was spent ({used} tokens)")
            }
            StopReason::MaxCost { limit, spent } => write!(
                f,
                "the spending cap ({limit}) was reached ({spent:.4} spent at the profile's prices)"
            ),
            StopReason::MaxTime { secs: Some(secs) } => {
                write!(f, "the time limit ({secs} s) was reached")
            }
            StopReason::MaxTime { secs: None } => write!(f, "the time limit was reached"),
            StopReason::MaxDisk {
                grew_mib,
                limit_mib,
            } => write!(
                f,
                "the agent's files grew by {grew_mib} MiB, past the disk limit of {limit_mib} MiB"
            ),
            StopReason::Interrupted { why } => {
                write!(f, "{}", why.as_deref().unwrap_or("interrupted by the user"))
            }
            StopReason::NoToolCall => write!(
                f,
                "the model replied twice without a tool call, so nothing says the task is done; its reply is above"
            ),
            StopReason::Stuck { pattern } => write!(f, "{pattern}, even after being told"),
            StopReason::CondensingEveryStep => write!(
                f,
                "stuck: the history had to be condensed at every step; the steps themselves are too large for the context window. Use a model server with a larger window (or a model made for one), or give a narrower task"
            ),
            StopReason::WindowTooSmall { what } => {
                write!(f, "{what}; wright does not send what the server would cut")
            }
            StopReason::ModelError { message } => write!(f, "{message}"),
            StopReason::ToolFailed { tool, message } => write!(f, "{tool} failed: {message}"),
            StopReason::NobodyToConfirm { tool, risk } => write!(
                f,
                "a {tool} call (risk {risk}) waits for your confirmation, and nobody could answer here; it did not run"
            ),
            StopReason::PromptRefused { reason } => {
                write!(f, "a hook refused the message: {reason}")
            }
            StopReason::ChecksFail { command, finishes } => write!(
                f,
                "the model called finish {finishes} times while `{command}` still failed; the task is not done"
            ),
            StopReason::NothingChanged { finishes } => write!(
                f,
                "the model called finish {finishes} times saying it made a change, but no file changed; the task is not done"
            ),
            StopReason::Other { text } => write!(f, "{text}"),
        }
    }
}

/// Reads a `state` event's `stop` leniently: one this wright does not know (a newer
/// variant, a damaged field) is absent, and the event's words stand for it.
pub(crate) fn lenient<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<StopReason>, D::Error> {
    let value = Option::<serde_json::Value>::deserialize(deserializer)?;
    Ok(value.and_then(|value| serde_json::from_value(value).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_reads_back_as_written() {
        let reasons = [
            StopReason::Finished,
            StopReason::MaxSteps { limit: 3 },
            StopReason::MaxTime { secs: None },
            StopReason::Interrupted { why: None },
            StopReason::WindowTooSmall { what: "x".into() },
            StopReason::ChecksFail {
                command: "pytest".into(),
                finishes: 3,
            },
        ];
        for reason in reasons {
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(serde_json::from_str::<StopReason>(&json).unwrap(), reason);
        }
        assert_eq!(
            serde_json::to_string(&StopReason::MaxSteps { limit: 3 }).unwrap(),
            r#"{"kind":"max_steps","limit":3}"#
        );
    }

    #[test]
    fn an_older_log_and_a_newer_reason_still_read() {
        let read = |line: &str| match serde_json::from_str::<crate::Event>(line).unwrap().body {
            crate::EventBody::State { reason, stop, .. } => {
                StopReason::logged(stop.as_ref(), reason.as_deref())
            }
            other => panic!("{other:?}"),
        };
        let old = r#"{"id":5,"ts":"2026-01-01T00:00:00.000Z","source":"environment","kind":"state","state":"stopped","reason":"the step limit (3) was reached; raise it with --max-steps"}"#;
        assert_eq!(
            read(old),
            Some(StopReason::Other {
                text: "the step limit (3) was reached; raise it with --max-steps".into()
            })
        );
        let typed = r#"{"id":5,"ts":"2026-01-01T00:00:00.000Z","source":"environment","kind":"state","state":"stopped","reason":"the step limit (3) was reached","stop":{"kind":"max_steps","limit":3}}"#;
        assert_eq!(read(typed), Some(StopReason::MaxSteps { limit: 3 }));
        let newer = r#"{"id":5,"ts":"2026-01-01T00:00:00.000Z","source":"environment","kind":"state","state":"stopped","reason":"a reason to come","stop":{"kind":"to_come"}}"#;
        assert_eq!(
            read(newer),
            Some(StopReason::Other {
                text: "a reason to come".into()
            })
        );
    }

    #[test]
    fn no_reason_names_a_flag() {
        let reasons = [
            StopReason::MaxSteps { limit: 3 },
            StopReason::MaxTokens { limit: 3, used: 4 },
            StopReason::MaxCost {
                limit: 1.0,
                spent: 2.0,
            },
            StopReason::MaxTime { secs: Some(3) },
            StopReason::MaxDisk {
                grew_mib: 3,
                limit_mib: 2,
            },
            StopReason::NoToolCall,
            StopReason::CondensingEveryStep,
            StopReason::NothingChanged { finishes: 2 },
        ];
        for reason in reasons {
            assert!(!reason.to_string().contains("--"), "{reason}");
        }
    }
}
