//! A check of the work (version 7 on): the command wright's first look found failing, run
//! again by wright itself in the sandbox — after an edit of the code, and before a
//! `finish` is taken — and what it printed. Logged as a `check` event right after the
//! call it follows; the history shows the model the verdict after an edit, and a
//! `finish` sent back quotes it, so a resumed run sends the same bytes.

use serde::Deserialize;
use serde::Serialize;

/// When wright ran the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckMoment {
    /// After a call that edited a file of the code (not a test).
    AfterEdit,
    /// When the model called `finish`, before it was taken.
    BeforeFinish,
}

/// One run of the check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The call it follows: the edit, or the `finish`.
    pub call_id: String,
    pub moment: CheckMoment,
    pub command: String,
    /// The command's exit code; `None` when it did not finish (timed out, cancelled).
    pub exit_code: Option<i32>,
    /// What the command printed (masked, bounded as any command's output).
    pub output: String,
    /// What the model is shown of it: the verdict and, when it fails, its first failure.
    pub shown: String,
    /// The edit it follows made it fail where it passed before, and wright undid that
    /// edit (version 9 on).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undone: bool,
}

impl Check {
    /// Whether the command passed.
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// One line for people: when, the command, the verdict, the output's last line.
    pub fn summary(&self) -> String {
        let when = match self.moment {
            CheckMoment::AfterEdit => "after the edit",
            CheckMoment::BeforeFinish => "before finish",
        };
        let verdict = match self.exit_code {
            Some(0) => "passes".to_string(),
            Some(code) => format!("still fails (exit {code})"),
            None => "did not finish".to_string(),
        };
        let last: String = self
            .output
            .lines()
            .rev()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .map(|line| format!(": {}", line.chars().take(120).collect::<String>()))
            .unwrap_or_default();
        let undone = if self.undone {
            " (it passed before this edit: wright undid the edit)"
        } else {
            ""
        };
        format!("check {when}: `{}` {verdict}{last}{undone}", self.command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Event;
    use crate::EventBody;
    use crate::Source;

    #[test]
    fn a_check_is_logged_and_read_back_whole() {
        let check = Check {
            call_id: "call_3".into(),
            moment: CheckMoment::AfterEdit,
            command: "python3 -m pytest -q".into(),
            exit_code: Some(1),
            output: "1 failed".into(),
            shown: "[still fails]".into(),
            undone: true,
        };
        let event = Event::new(9, Source::Environment, EventBody::Check(check.clone()));
        let line = serde_json::to_string(&event).unwrap();
        assert!(line.contains("\"kind\":\"check\""), "{line}");
        assert!(line.contains("\"moment\":\"after_edit\""), "{line}");
        let back: Event = serde_json::from_str(&line).unwrap();
        assert_eq!(back.body, EventBody::Check(check.clone()));
        assert!(!check.passed());
        assert_eq!(
            check.summary(),
            "check after the edit: `python3 -m pytest -q` still fails (exit 1): 1 failed (it passed before this edit: wright undid the edit)"
        );
        let kept = Check {
            undone: false,
            ..check
        };
        assert_eq!(
            kept.summary(),
            "check after the edit: `python3 -m pytest -q` still fails (exit 1): 1 failed"
        );
    }
}
