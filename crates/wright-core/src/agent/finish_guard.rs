//! What stands between the model's `finish` and the run's end, after the check of the
//! work (see `retest`): the review of the changes (tests edited, removed or skipped;
//! files the task never names), said to the model once, a command that just failed, the
//! Stop hooks and the second look — each a strategy (see `crate::strategy`).

use super::*;
use crate::strategy::AtFinish;
use crate::strategy::Finish;

impl Conversation {
    /// What else stands between a `finish` and the run's end, once the check (if any)
    /// passed: the strategies, in order (told whether the check `passed`): the review of
    /// the changes, a command that just failed, the Stop hooks, the second look.
    pub(super) async fn guard_finish(
        &mut self,
        observer: &mut dyn Observer,
        call_id: &str,
        passed: bool,
    ) -> Result<AtFinish, StoreError> {
        let finish = Finish {
            call_id: call_id.to_string(),
            check_passed: passed,
        };
        self.strategies_at_finish(observer, finish).await
    }

    /// Reviews the changes as they are now (after the user reverted some, say): the
    /// earlier review no longer holds. Returns it, `None` when nothing is left to say;
    /// suspicious changes made from now on are sent back again.
    pub fn review_again(&mut self) -> Option<Review> {
        let events = self.log.events();
        self.strategies
            .named(crate::strategy::ReviewChanges::NAME, events)?
            .as_any_mut()?
            .downcast_mut::<crate::strategy::ReviewChanges>()?
            .again(events)
    }

    /// The last review that found something.
    pub(super) fn last_review(&mut self) -> Option<Review> {
        self.strategy_mut::<crate::strategy::ReviewChanges>(crate::strategy::ReviewChanges::NAME)?
            .last()
            .cloned()
    }
}
