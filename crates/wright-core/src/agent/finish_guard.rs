//! What stands between the model's `finish` and the run's end, after the check of the
//! work (see `retest`): the review of the changes (tests edited, removed or skipped;
//! files the task never names), said to the model once, then the strategies' say (see
//! `crate::strategy`), the Stop hooks and the second look.

use super::*;
use crate::strategy::AtFinish;
use crate::strategy::Finish;

impl Conversation {
    /// What else stands between a `finish` and the run's end, once the check (if any)
    /// passed: the strategies — the review of the changes first — (told whether the check
    /// `passed`), the Stop hooks, the second look.
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
        match self.strategies_at_finish(observer, finish).await? {
            AtFinish::Continue => {}
            decided => return Ok(decided),
        }
        if let Some(reason) = self.stop_hooks(observer, Some(call_id)).await? {
            return Ok(AtFinish::SendBack(format!("A hook refused the finish: {reason}. The task is not done yet: deal with that, then call finish again.")));
        }
        Ok(match self.second_look(observer).await? {
            Some(findings) => AtFinish::SendBack(findings),
            None => AtFinish::Continue,
        })
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
