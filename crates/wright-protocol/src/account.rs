//! wright's own account of a run's work at a `finish` (version 12 on): the files the
//! workspace's diff touches (read by wright, not taken from the model), the versions
//! wright itself kept, and what of the model's closing words they contradict — a change
//! claimed when nothing changed, a file named that the diff does not touch. Logged before
//! the `finish` is taken or sent back, so a resumed run reads the same account; never
//! sent to the model as such (a `finish` sent back says why in its own result).

use serde::Deserialize;
use serde::Serialize;

/// What wright found at one `finish`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// The `finish` call it answers.
    pub call_id: String,
    /// The files the change touches, as git reads the workspace (and the edits logged).
    pub changed: Vec<String>,
    /// What wright itself did to the files, in words (a version it kept, asked apart).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
    /// The model's closing words say it made a change.
    pub claims_change: bool,
    /// Files the model's closing words name that the change does not touch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub named_unchanged: Vec<String>,
    /// The `finish` was sent back (a change claimed, none made).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sent_back: bool,
}

impl Account {
    /// Whether the model's words disagree with the change: a change claimed when there is
    /// none, or a file named that it does not touch.
    pub fn contradicts(&self) -> bool {
        (self.claims_change && self.changed.is_empty()) || !self.named_unchanged.is_empty()
    }

    /// wright's account in words, for the report: what wright did, then what changed.
    pub fn words(&self) -> String {
        let mut said: Vec<String> = self.kept.clone();
        if self.changed.is_empty() {
            said.push("no change was made: the diff is empty".to_string());
        } else {
            said.push(format!("the change touches {}", self.changed.join(", ")));
        }
        if !self.named_unchanged.is_empty() {
            said.push(format!(
                "the model's message names {}, which the change does not touch",
                self.named_unchanged.join(", ")
            ));
        }
        said.join("; ")
    }

    /// One line for people (`wright show`, the progress).
    pub fn summary(&self) -> String {
        let verdict = match (self.contradicts(), self.sent_back) {
            (_, true) => "finish sent back: a change claimed, none made",
            (true, false) => "the model's message disagrees with the change",
            (false, false) => "the change as the model said",
        };
        format!("wright's account: {}; {verdict}", self.words())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_change_claimed_contradicts_and_says_so() {
        let account = Account {
            call_id: "c1".into(),
            changed: vec![],
            kept: vec![],
            claims_change: true,
            named_unchanged: vec![],
            sent_back: false,
        };
        assert!(account.contradicts());
        assert_eq!(account.words(), "no change was made: the diff is empty");
        let fine = Account {
            changed: vec!["a.py".into()],
            ..account
        };
        assert!(!fine.contradicts());
        assert_eq!(fine.words(), "the change touches a.py");
    }
}
