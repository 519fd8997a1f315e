//! What stands between the model's `finish` and the run's end, after the check of the
//! work (see `retest`): the review of the changes (tests edited, removed or skipped;
//! files the task never names) and the reminder when the last command failed — each said
//! to the model once — then the Stop hooks and the second look.

use super::*;

impl Conversation {
    /// What else stands between a `finish` and the run's end, once the check (if any)
    /// passed: the review of the changes, a command that just failed (unless the check
    /// `passed`: the command that matters passes), the Stop hooks, the second look. The
    /// words it is sent back with, if it is.
    pub(super) async fn guard_finish(
        &mut self,
        observer: &mut dyn Observer,
        call_id: &str,
        passed: bool,
    ) -> Result<Option<String>, StoreError> {
        if let Some(review) = self.review_before_finish(observer)? {
            return Ok(Some(review));
        }
        if !passed {
            if let Some(failure) = self.finish_after_failure() {
                return Ok(Some(failure));
            }
        }
        if let Some(reason) = self.stop_hooks(observer, Some(call_id)).await? {
            return Ok(Some(format!("A hook refused the finish: {reason}. The task is not done yet: deal with that, then call finish again.")));
        }
        self.second_look(observer).await
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

    /// In a run, the first `finish` that comes right after a failing command is sent back
    /// once, quoting the command: small models "finish" with the tests still failing. A
    /// second `finish` is taken.
    pub(super) fn finish_after_failure(&mut self) -> Option<String> {
        if !self.require_finish || self.asked_after_failure {
            return None;
        }
        let events = self.log.events();
        let (call_id, code) = events.iter().rev().find_map(|e| match &e.body {
            EventBody::Observation {
                tool,
                call_id,
                exit_code,
                ..
            } if tool != "finish" && tool != "think" => Some((call_id.clone(), *exit_code)),
            _ => None,
        })?;
        let code = code.filter(|c| *c != 0)?;
        let command = events.iter().rev().find_map(|e| match &e.body {
            EventBody::Action {
                call_id: id,
                arguments,
                ..
            } if *id == call_id => arguments["command"].as_str().map(str::to_string),
            _ => None,
        })?;
        self.asked_after_failure = true;
        let shown: String = command.chars().take(200).collect();
        Some(format!(
            "The last command failed (exit {code}): {shown}. If the task needs it to pass, the task is not done: fix the cause and run it again. If the task is done anyway, call finish again."
        ))
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
