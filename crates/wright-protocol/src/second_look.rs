//! A second agent's judgement of the first one's change (`--review PROFILE`): the verdict
//! and findings of a reviewer that saw only the task, the repository and the diff, logged
//! in the writer's conversation as a `second_look` event (version 6 on).

use serde::Deserialize;
use serde::Serialize;

/// What the reviewer decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The change does what the task asks; nothing to mend.
    Approve,
    /// The findings must be dealt with first.
    RequestChanges,
}

impl Verdict {
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Approve => "approved",
            Verdict::RequestChanges => "changes requested",
        }
    }
}

/// One review of the writer's change, made when it called `finish`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecondLook {
    /// 1 for the first review of this conversation.
    pub round: u32,
    /// The reviewer's model, as its server names it.
    pub model: String,
    /// The reviewer's own conversation (its log), when it got that far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// Absent when the reviewer gave none (it failed or stopped: see `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// Whether the findings went back to the writer (else its `finish` was taken).
    pub sent_back: bool,
    /// Why there is no verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl SecondLook {
    /// The heading line: "reviewer MODEL: changes requested (round 1)".
    pub fn heading(&self) -> String {
        let said = match (&self.verdict, &self.error) {
            (Some(verdict), _) => verdict.words().to_string(),
            (None, Some(error)) => format!("no verdict ({error})"),
            (None, None) => "no verdict".to_string(),
        };
        format!("reviewer {}: {said} (round {})", self.model, self.round)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Event;
    use crate::EventBody;
    use crate::Source;

    #[test]
    fn a_second_look_is_a_line_of_its_own_kind_and_reads_back() {
        let look = SecondLook {
            round: 1,
            model: "judge".into(),
            reviewer: Some("r1".into()),
            verdict: Some(Verdict::RequestChanges),
            findings: vec!["calc.py: off by one".into()],
            sent_back: true,
            error: None,
        };
        let event = Event::new(7, Source::Environment, EventBody::SecondLook(look.clone()));
        let line = event.to_line().unwrap();
        assert!(
            line.contains(r#""kind":"second_look""#)
                && line.contains(r#""verdict":"request_changes""#),
            "{line}"
        );
        let back: Event = serde_json::from_str(&line).unwrap();
        assert_eq!(back.body, EventBody::SecondLook(look));
        // One that gave no verdict says why, and nothing else.
        let failed: SecondLook = serde_json::from_str(
            r#"{"round": 2, "model": "judge", "sent_back": false, "error": "down"}"#,
        )
        .unwrap();
        assert_eq!(
            failed.heading(),
            "reviewer judge: no verdict (down) (round 2)"
        );
    }
}
