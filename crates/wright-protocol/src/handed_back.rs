//! What wright did with a run's result after the run ended, for the automation that
//! started it: the branch pushed to the repository's remote, a pull request opened or
//! updated, a comment left on the issue — or why one of them failed. Logged by the
//! server into the conversation's log (version 13 on), never shown to the model.

use serde::Deserialize;
use serde::Serialize;

/// One thing handed back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandedBack {
    /// The automation's name.
    pub automation: String,
    /// The firing's id (its record in `GET /api/automations`).
    pub firing: String,
    pub what: HandBack,
    /// The branch pushed, the pull request's or the comment's address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// In words: what, or what failed and why.
    pub detail: String,
}

/// What was handed back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandBack {
    /// The branch went to the repository's remote.
    Pushed,
    PullRequestOpened,
    PullRequestUpdated,
    /// A comment was left on the issue that fired it (or on the issue a schedule opened
    /// before).
    Commented,
    /// An issue was opened saying the tests fail (`result.issue`).
    IssueOpened,
    /// A push, a pull request or a comment failed, or was not made (`detail`: why).
    Failed,
}

impl HandedBack {
    /// One line for people.
    pub fn summary(&self) -> String {
        let what = match self.what {
            HandBack::Pushed => "pushed",
            HandBack::PullRequestOpened => "pull request opened",
            HandBack::PullRequestUpdated => "pull request updated",
            HandBack::Commented => "commented on the issue",
            HandBack::IssueOpened => "issue opened",
            HandBack::Failed => "failed",
        };
        format!("automation {}: {what}: {}", self.automation, self.detail)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::Event;
    use crate::EventBody;

    #[test]
    fn a_handed_back_line_reads_and_writes_back_the_same() {
        let line = r#"{"id":14,"ts":"2026-12-06T22:19:38.571Z","source":"environment","kind":"handed_back","automation":"fix","firing":"20261206-221936-4186","what":"pull_request_updated","url":"https://github.com/o/r/pull/1","detail":"pull request #1"}"#;
        let event: Event = serde_json::from_str(line).unwrap();
        let EventBody::HandedBack(handed) = &event.body else {
            panic!("{event:?}");
        };
        assert_eq!(handed.what, super::HandBack::PullRequestUpdated);
        assert_eq!(
            handed.summary(),
            "automation fix: pull request updated: pull request #1"
        );
        assert_eq!(event.to_line().unwrap().trim_end(), line);
    }
}
