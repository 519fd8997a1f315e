//! The second agent's look at a `finish` (see `crate::second_look`): asked after the
//! test-integrity review and the `Stop` hooks passed, logged whatever it says.

use super::*;

impl Conversation {
    /// Has the reviewer, if there is one, look at the change; returns its findings when
    /// they go back to the model. Logged either way.
    pub(super) async fn second_look(
        &mut self,
        observer: &mut dyn Observer,
    ) -> Result<Option<String>, StoreError> {
        let Some(reviewer) = self.second_look.as_ref().map(|s| s.reviewer.clone()) else {
            return Ok(None);
        };
        let cancel = self.user_cancel.clone().unwrap_or_default();
        let said = reviewer.review(&self.task(), cancel).await;
        let Some(looks) = self.second_look.as_mut() else {
            return Ok(None);
        };
        let look = looks.record(said);
        self.append(
            observer,
            Source::Environment,
            EventBody::SecondLook(look.clone()),
        )?;
        Ok(look
            .sent_back
            .then(|| crate::second_look::findings_for_the_writer(&look)))
    }
}
