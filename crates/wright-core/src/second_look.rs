//! A second agent's look at the change before `finish` is taken (`--review`): the loop
//! asks a `Reviewer` — which sees only the task, the repository and the diff, never this
//! conversation's history — for a verdict and findings, logs them as a `second_look`
//! event, and sends the findings back to the model as long as rounds are left. When no
//! round is left, or the reviewer approves or gives no verdict, the `finish` is taken.
//! This adds judgement; the test-integrity review (`review`) runs before it, unchanged.

use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_protocol::SecondLook;
use wright_protocol::Verdict;

/// What a reviewer said.
#[derive(Debug, Clone, PartialEq)]
pub struct Opinion {
    pub verdict: Verdict,
    pub findings: Vec<String>,
    /// The reviewer's own conversation.
    pub conversation: Option<String>,
}

/// Why a reviewer gave no verdict.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct NoVerdict {
    pub message: String,
    /// The reviewer's own conversation, when it was started.
    pub conversation: Option<String>,
}

/// Reviews the change of a conversation; the front end's session library implements it
/// (it knows the sandbox, the clone and the reviewer's model).
#[async_trait::async_trait]
pub trait Reviewer: Send + Sync {
    /// The reviewer's model, for the log and the report.
    fn model(&self) -> String;
    /// Reviews the workspace's change against the start, for `task`.
    async fn review(&self, task: &str, cancel: CancellationToken) -> Result<Opinion, NoVerdict>;
}

/// A conversation's reviewer and what it has said so far.
pub(crate) struct SecondLooks {
    pub(crate) reviewer: Arc<dyn Reviewer>,
    /// How many times findings may go back to the model.
    pub(crate) rounds: u32,
    pub(crate) sent_back: u32,
    /// The reviews made so far, the last one shown to the user.
    pub(crate) made: u32,
    pub(crate) last: Option<SecondLook>,
}

impl SecondLooks {
    pub(crate) fn new(reviewer: Arc<dyn Reviewer>, rounds: u32) -> Self {
        Self {
            reviewer,
            rounds,
            sent_back: 0,
            made: 0,
            last: None,
        }
    }

    /// The event for what the reviewer said at this `finish`; whether its findings go
    /// back is decided here: changes requested, with findings, and a round left.
    pub(crate) fn record(&mut self, said: Result<Opinion, NoVerdict>) -> SecondLook {
        self.made += 1;
        let model = self.reviewer.model();
        let look = match said {
            Ok(opinion) => {
                let sent_back = opinion.verdict == Verdict::RequestChanges
                    && !opinion.findings.is_empty()
                    && self.sent_back < self.rounds;
                SecondLook {
                    round: self.made,
                    model,
                    reviewer: opinion.conversation,
                    verdict: Some(opinion.verdict),
                    findings: opinion.findings,
                    sent_back,
                    error: None,
                }
            }
            Err(none) => SecondLook {
                round: self.made,
                model,
                reviewer: none.conversation,
                verdict: None,
                findings: Vec::new(),
                sent_back: false,
                error: Some(none.message),
            },
        };
        if look.sent_back {
            self.sent_back += 1;
        }
        self.last = Some(look.clone());
        look
    }
}

/// What the model is told when the reviewer's findings go back.
pub fn findings_for_the_writer(look: &SecondLook) -> String {
    let findings: Vec<String> = look.findings.iter().map(|f| format!("- {f}")).collect();
    format!(
        "Before finishing: a reviewer who did not see your work read the task and your diff, and asks for changes:\n{}\nDeal with each finding (or, if one is wrong, say why in your finish message), check your work again, then call finish.",
        findings.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;

    #[async_trait::async_trait]
    impl Reviewer for Fixed {
        fn model(&self) -> String {
            "judge".into()
        }
        async fn review(&self, _: &str, _: CancellationToken) -> Result<Opinion, NoVerdict> {
            unreachable!("the rounds are counted without asking")
        }
    }

    fn asks(findings: &[&str]) -> Result<Opinion, NoVerdict> {
        Ok(Opinion {
            verdict: Verdict::RequestChanges,
            findings: findings.iter().map(|f| f.to_string()).collect(),
            conversation: Some("r1".into()),
        })
    }

    #[test]
    fn findings_go_back_only_while_rounds_are_left() {
        let mut looks = SecondLooks::new(Arc::new(Fixed), 1);
        let first = looks.record(asks(&["off by one in total()"]));
        assert!(first.sent_back);
        assert_eq!(first.round, 1);
        let second = looks.record(asks(&["still wrong"]));
        assert!(
            !second.sent_back,
            "one round only: the second finish is taken"
        );
        assert_eq!(looks.last.as_ref().map(|l| l.round), Some(2));
        // No findings, or no verdict at all: never sent back.
        let mut looks = SecondLooks::new(Arc::new(Fixed), 3);
        assert!(!looks.record(asks(&[])).sent_back);
        let failed = looks.record(Err(NoVerdict {
            message: "the reviewer's server is down".into(),
            conversation: None,
        }));
        assert_eq!((failed.verdict, failed.sent_back), (None, false));
        assert!(findings_for_the_writer(&first).contains("- off by one in total()"));
    }
}
