//! The second agent's look at a `finish` (see `wright_core::second_look`): asked after the
//! review, the reminder of a failed command and the user's `Stop` hooks, logged whatever
//! it says. The reviewer's rounds are the process's, as its conversation is.

use std::sync::Arc;
use wright_core::second_look::NoVerdict;
use wright_core::second_look::Opinion;
use wright_core::second_look::Reviewer;
use wright_core::strategy::AtFinish;
use wright_core::strategy::Context;
use wright_core::strategy::Finish;
use wright_core::strategy::Strategy;
use wright_core::StoreError;
use wright_protocol::EventBody;
use wright_protocol::SecondLook;
use wright_protocol::Source;
use wright_protocol::Verdict;

/// The reviewer's look at each `finish`; without a reviewer it says nothing.
#[derive(Default)]
pub struct SecondLookAtFinish {
    looks: Option<SecondLooks>,
}

impl SecondLookAtFinish {
    pub const NAME: &'static str = "second-look";

    /// `reviewer` looks at the change at each `finish`; its findings go back to the model
    /// at most `rounds` times.
    pub fn new(reviewer: Arc<dyn Reviewer>, rounds: u32) -> Self {
        Self {
            looks: Some(SecondLooks::new(reviewer, rounds)),
        }
    }

    /// Its last verdict, shown before the diff.
    pub fn last(&self) -> Option<&SecondLook> {
        self.looks.as_ref()?.last.as_ref()
    }
}

#[async_trait::async_trait]
impl Strategy for SecondLookAtFinish {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn add_to_outcome(&self, outcome: &mut wright_core::Outcome) {
        outcome.second_look = self.last().cloned();
    }

    async fn at_finish(
        &mut self,
        cx: &mut Context<'_>,
        _finish: &Finish,
    ) -> Result<AtFinish, StoreError> {
        let Some(looks) = self.looks.as_mut() else {
            return Ok(AtFinish::Continue);
        };
        let reviewer = looks.reviewer.clone();
        let (task, cancel) = (cx.view().task(), cx.cancel_token());
        let said = reviewer.review(&task, cancel).await;
        let look = looks.record(said);
        cx.log(Source::Environment, EventBody::SecondLook(look.clone()))?;
        Ok(match look.sent_back {
            true => AtFinish::SendBack(findings_for_the_writer(&look)),
            false => AtFinish::Continue,
        })
    }
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
    use tokio_util::sync::CancellationToken;
    use wright_core::second_look::NoVerdict;
    use wright_core::second_look::Opinion;
    use wright_protocol::Verdict;

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
