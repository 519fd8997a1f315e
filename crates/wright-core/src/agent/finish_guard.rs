//! What stands between the model's `finish` and the run's end, after the check of the
//! work (see `retest`): the review of the changes (tests edited, removed or skipped;
//! files the task never names), said to the model once, then the strategies' say (see
//! `crate::strategy`), the Stop hooks and the second look.

use super::*;
use crate::strategy::AtFinish;
use crate::strategy::Finish;

impl Conversation {
    /// What else stands between a `finish` and the run's end, once the check (if any)
    /// passed: the review of the changes, the strategies (told whether the check
    /// `passed`), the Stop hooks, the second look.
    pub(super) async fn guard_finish(
        &mut self,
        observer: &mut dyn Observer,
        call_id: &str,
        passed: bool,
    ) -> Result<AtFinish, StoreError> {
        if let Some(review) = self.review_before_finish(observer)? {
            return Ok(AtFinish::SendBack(review));
        }
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

    /// Reviews the changes when `finish` is called: the first time suspicious changes are
    /// found, the call is sent back with them; the review is logged either way.
    pub(super) fn review_before_finish(
        &mut self,
        observer: &mut dyn Observer,
    ) -> Result<Option<String>, StoreError> {
        let Some(inspector) = &self.inspector else {
            return Ok(None);
        };
        let review = crate::review::analyze(&self.review_text(), &inspector.changes());
        if review.is_empty() {
            return Ok(None);
        }
        self.append(
            observer,
            Source::Environment,
            EventBody::Review(review.clone()),
        )?;
        self.last_review = Some(review.clone());
        if review.is_suspicious() && !self.reviewed {
            self.reviewed = true;
            return Ok(Some(crate::review::request_justification(&review)));
        }
        Ok(None)
    }

    /// What the review reads the places the work belongs in from: every message of the
    /// user's (in a chat each one is a task), and what wright's own test runs (the first
    /// look, the check) printed — a failing test names its files.
    fn review_text(&self) -> String {
        let events = self.log.events();
        let wrights: Vec<&str> = events
            .iter()
            .filter_map(|e| match (&e.body, e.source) {
                (EventBody::Action { call_id, .. }, Source::Environment) => Some(call_id.as_str()),
                _ => None,
            })
            .collect();
        events
            .iter()
            .filter_map(|e| match (&e.body, e.source) {
                (EventBody::Message { text, .. }, Source::User) => Some(text.as_str()),
                (
                    EventBody::Observation {
                        call_id, output, ..
                    },
                    _,
                ) if wrights.contains(&call_id.as_str()) => Some(output.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Reviews the changes as they are now (after the user reverted some, say): the
    /// earlier review no longer holds. Returns it, `None` when nothing is left to say;
    /// suspicious changes made from now on are sent back again.
    pub fn review_again(&mut self) -> Option<Review> {
        let inspector = self.inspector.as_ref()?;
        let review = crate::review::analyze(&self.review_text(), &inspector.changes());
        self.last_review = Some(review).filter(|r| !r.is_empty());
        if !self.last_review.as_ref().is_some_and(Review::is_suspicious) {
            self.reviewed = false;
        }
        self.last_review.clone()
    }
}
