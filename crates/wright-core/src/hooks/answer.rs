//! What a hook's exit code and output mean, in both formats: exit 0 lets the action go
//! on, exit 2 blocks it (stderr is the reason), any other code is a failure reported to
//! the user (not fatal); on exit 0 a JSON answer on stdout may still block —
//! `{"decision": "deny" | "block", "reason"}`, `{"hookSpecificOutput":
//! {"permissionDecision": "deny", "permissionDecisionReason"}}`, `{"continue": false,
//! "stopReason"}` — and add context for the model (`additionalContext`, top level or in
//! `hookSpecificOutput`). For `SessionStart` and `UserPromptSubmit`, plain text on stdout
//! is context, as Claude Code takes it.

use super::HookProcess;
use serde_json::Value;
use wright_protocol::HookEvent;
use wright_protocol::HookOutcome;

/// What goes back to the model, or to the user, is cut at this many characters.
const MAX_TEXT: usize = 4_000;

/// A hook's answer, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub outcome: HookOutcome,
    /// Why it blocked (for the model), or what went wrong (for the user).
    pub reason: Option<String>,
    /// Context for the model.
    pub context: Option<String>,
}

/// Reads what a hook's process said about `event`.
pub fn read_answer(event: HookEvent, process: &HookProcess) -> Answer {
    let stdout = String::from_utf8_lossy(&process.stdout).trim().to_string();
    let stderr = String::from_utf8_lossy(&process.stderr).trim().to_string();
    if process.timed_out {
        return Answer {
            outcome: HookOutcome::TimedOut,
            reason: Some("it ran past its timeout and was stopped".into()),
            context: None,
        };
    }
    match process.code {
        Some(0) => {}
        Some(2) => {
            return Answer {
                outcome: HookOutcome::Blocked,
                reason: Some(bounded(if stderr.is_empty() { &stdout } else { &stderr }))
                    .filter(|r| !r.is_empty())
                    .or_else(|| Some("a hook blocked it (exit 2)".into())),
                context: None,
            }
        }
        other => {
            let code = other.map_or("a signal".to_string(), |code| format!("exit {code}"));
            let said = if stderr.is_empty() { &stdout } else { &stderr };
            return Answer {
                outcome: HookOutcome::Failed,
                reason: Some(match said.is_empty() {
                    true => format!("it failed ({code})"),
                    false => format!("it failed ({code}): {}", bounded(said)),
                }),
                context: None,
            };
        }
    }
    let Ok(Value::Object(json)) = serde_json::from_str::<Value>(&stdout) else {
        let context = matches!(event, HookEvent::SessionStart | HookEvent::UserPromptSubmit)
            .then(|| bounded(&stdout))
            .filter(|c| !c.is_empty());
        return Answer {
            outcome: HookOutcome::Allowed,
            reason: None,
            context,
        };
    };
    let specific = &json
        .get("hookSpecificOutput")
        .cloned()
        .unwrap_or(Value::Null);
    let text = |value: &Value| value.as_str().map(bounded).filter(|t| !t.is_empty());
    let decision = json
        .get("decision")
        .and_then(Value::as_str)
        .or_else(|| specific["permissionDecision"].as_str())
        .or_else(|| specific["decision"]["behavior"].as_str())
        .map(str::to_ascii_lowercase);
    // "ask" wants a person's yes, which a hook's answer cannot stand for: it blocks.
    let blocked = matches!(decision.as_deref(), Some("deny" | "block" | "ask"))
        || json.get("continue").and_then(Value::as_bool) == Some(false);
    let reason = json
        .get("reason")
        .and_then(text)
        .or_else(|| text(&specific["permissionDecisionReason"]))
        .or_else(|| json.get("stopReason").and_then(text));
    let context = json
        .get("additionalContext")
        .and_then(text)
        .or_else(|| text(&specific["additionalContext"]));
    Answer {
        outcome: match blocked {
            true => HookOutcome::Blocked,
            false => HookOutcome::Allowed,
        },
        reason: match blocked {
            true => reason.or_else(|| Some("a hook blocked it".into())),
            false => reason,
        },
        context,
    }
}

fn bounded(text: &str) -> String {
    crate::skills::cut(text.trim(), MAX_TEXT).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn answer(event: HookEvent, code: i32, stdout: &str, stderr: &str) -> Answer {
        read_answer(
            event,
            &HookProcess {
                code: Some(code),
                stdout: stdout.as_bytes().to_vec(),
                stderr: stderr.as_bytes().to_vec(),
                timed_out: false,
            },
        )
    }

    fn blocked(reason: &str) -> Answer {
        Answer {
            outcome: HookOutcome::Blocked,
            reason: Some(reason.into()),
            context: None,
        }
    }

    #[test]
    fn every_way_of_saying_no() {
        let pre = HookEvent::PreToolUse;
        assert_eq!(answer(pre, 2, "", "no rm -rf\n"), blocked("no rm -rf"));
        assert_eq!(
            answer(pre, 0, r#"{"decision": "deny", "reason": "not here"}"#, ""),
            blocked("not here")
        );
        assert_eq!(
            answer(
                pre,
                0,
                r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "dangerous"}}"#,
                ""
            ),
            blocked("dangerous")
        );
        assert_eq!(
            answer(
                HookEvent::Stop,
                0,
                r#"{"decision": "block", "reason": "the tests do not pass"}"#,
                ""
            ),
            blocked("the tests do not pass")
        );
        assert_eq!(
            answer(pre, 0, r#"{"continue": false, "stopReason": "halt"}"#, ""),
            blocked("halt")
        );
    }

    #[test]
    fn yes_context_and_failures() {
        let allowed = |context: Option<&str>| Answer {
            outcome: HookOutcome::Allowed,
            reason: None,
            context: context.map(str::to_string),
        };
        assert_eq!(answer(HookEvent::PreToolUse, 0, "ok", ""), allowed(None));
        assert_eq!(
            answer(HookEvent::UserPromptSubmit, 0, "branch main", ""),
            allowed(Some("branch main"))
        );
        assert_eq!(
            answer(
                HookEvent::PostToolUse,
                0,
                r#"{"hookSpecificOutput": {"additionalContext": "lint: 2 warnings"}}"#,
                ""
            ),
            allowed(Some("lint: 2 warnings"))
        );
        assert_eq!(
            answer(HookEvent::PreToolUse, 1, "", "jq: not found"),
            Answer {
                outcome: HookOutcome::Failed,
                reason: Some("it failed (exit 1): jq: not found".into()),
                context: None
            }
        );
        let slow = read_answer(
            HookEvent::Stop,
            &HookProcess {
                timed_out: true,
                ..HookProcess::default()
            },
        );
        assert_eq!(slow.outcome, HookOutcome::TimedOut);
    }
}
