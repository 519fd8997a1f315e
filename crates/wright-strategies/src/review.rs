//! The review of the changes at `finish` (tests edited, removed or skipped; files the task
//! never names): logged each time it finds something, and the first time the changes look
//! suspicious the `finish` is sent back for the model to account for them. Its state is
//! the process's, as the user's undo in a chat is not in the log (see `again`): a resumed
//! conversation may be asked once more.

use wright_core::strategy::AtFinish;
use wright_core::strategy::Context;
use wright_core::strategy::Finish;
use wright_core::strategy::Strategy;
use wright_core::Inspector;
use wright_core::StoreError;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Review;
use wright_protocol::Source;

/// The review before `finish`; without an inspector it has nothing to read and says
/// nothing.
#[derive(Default)]
pub struct ReviewChanges {
    /// Reads the workspace's changes.
    inspector: Option<Box<dyn Inspector>>,
    /// Whether the model was already asked to account for its changes.
    asked: bool,
    /// The last review (shown to the user first).
    last: Option<Review>,
}

impl ReviewChanges {
    pub const NAME: &'static str = "review";

    pub fn new(inspector: Box<dyn Inspector>) -> Self {
        Self {
            inspector: Some(inspector),
            ..Self::default()
        }
    }

    /// The last review, if any found something.
    pub fn last(&self) -> Option<&Review> {
        self.last.as_ref()
    }

    /// Reviews the changes as they are now (after the user reverted some, say): the
    /// earlier review no longer holds. Returns it, `None` when nothing is left to say;
    /// suspicious changes made from now on are sent back again.
    pub fn again(&mut self, events: &[Event]) -> Option<Review> {
        let inspector = self.inspector.as_ref()?;
        let review = wright_core::review_changes(&review_text(events), &inspector.changes());
        self.last = Some(review).filter(|r| !r.is_empty());
        if !self.last.as_ref().is_some_and(Review::is_suspicious) {
            self.asked = false;
        }
        self.last.clone()
    }
}

#[async_trait::async_trait]
impl Strategy for ReviewChanges {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn add_to_outcome(&self, outcome: &mut wright_core::Outcome) {
        outcome.review = self.last().cloned();
    }

    async fn at_finish(
        &mut self,
        cx: &mut Context<'_>,
        _finish: &Finish,
    ) -> Result<AtFinish, StoreError> {
        let Some(inspector) = &self.inspector else {
            return Ok(AtFinish::Continue);
        };
        let review =
            wright_core::review_changes(&review_text(cx.view().events()), &inspector.changes());
        if review.is_empty() {
            return Ok(AtFinish::Continue);
        }
        cx.log(Source::Environment, EventBody::Review(review.clone()))?;
        self.last = Some(review.clone());
        if review.is_suspicious() && !self.asked {
            self.asked = true;
            return Ok(AtFinish::SendBack(wright_core::request_justification(
                &review,
            )));
        }
        Ok(AtFinish::Continue)
    }
}

/// What the review reads the places the work belongs in from: every message of the
/// user's (in a chat each one is a task), and what wright's own test runs (the first
/// look, the check) printed — a failing test names its files.
fn review_text(events: &[Event]) -> String {
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
