//! How a run's state moves and how it ends: the state logged (with the words for people
//! and the typed reason for programs), the user's message added, and the outcome built,
//! its summary and review masked as the log is.

use super::*;

impl Conversation {
    pub(super) fn set_state(
        &mut self,
        observer: &mut dyn Observer,
        state: AgentState,
        stop: Option<StopReason>,
    ) -> Result<(), StoreError> {
        // The words for people and older readers, the value for programs.
        let reason = stop.as_ref().map(ToString::to_string);
        self.append(
            observer,
            Source::Environment,
            EventBody::State {
                state,
                reason,
                stop,
                call_id: None,
                confirm: None,
            },
        )
    }

    pub(super) fn end(
        &mut self,
        observer: &mut dyn Observer,
        state: AgentState,
        stop: StopReason,
        summary: Option<String>,
    ) -> Result<Outcome, StoreError> {
        self.set_state(observer, state, Some(stop.clone()))?;
        self.outcome(state, stop, summary)
    }

    /// What a run ends with, its state already logged.
    pub(super) fn outcome(
        &mut self,
        state: AgentState,
        stop: StopReason,
        summary: Option<String>,
    ) -> Result<Outcome, StoreError> {
        let last_review = self.last_review();
        // The end report is the model's words and the review's quotes: masked as the log.
        let (summary, review) = match &self.masker {
            Some(masker) => (
                summary.map(|text| masker.mask(&text)),
                match &last_review {
                    Some(review) => Some(crate::store::masked(masker, review)?),
                    None => None,
                },
            ),
            None => (summary, last_review),
        };
        Ok(Outcome {
            state,
            stop,
            review,
            summary,
            totals: self.totals.clone(),
            remedy: None,
            flags: self.flags.clone(),
            second_look: self
                .strategy_mut::<crate::strategy::SecondLookAtFinish>(
                    crate::strategy::SecondLookAtFinish::NAME,
                )
                .and_then(|looks| looks.last().cloned()),
        })
    }

    pub(super) fn interrupted(
        &mut self,
        observer: &mut dyn Observer,
    ) -> Result<Outcome, StoreError> {
        let reason = self.cancel_reason();
        self.end(observer, AgentState::Stopped, reason, None)
    }
}
