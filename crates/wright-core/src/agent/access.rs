//! What a conversation shows of itself (its id, log, events, totals, client, tools) and
//! how events are appended to its log: each shown to the observer once it is on disk,
//! or kept quiet for resume's own bookkeeping.

use super::*;

impl Conversation {
    pub(crate) fn client_ref(&self) -> &Client {
        &self.client
    }

    pub(crate) fn request_tools_ref(&self) -> &[Value] {
        &self.request_tools
    }

    pub(crate) fn estimate(&self, bytes: usize) -> u64 {
        self.estimate_tokens(bytes)
    }

    pub(crate) fn append_event(
        &mut self,
        observer: &mut dyn Observer,
        source: Source,
        body: EventBody,
    ) -> Result<(), StoreError> {
        self.append(observer, source, body)
    }

    /// The token count of a request body of `bytes`, as best known.
    pub(super) fn estimate_tokens(&self, bytes: usize) -> u64 {
        (bytes as f64 * self.tokens_per_byte).ceil() as u64
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn log_path(&self) -> &Path {
        self.log.path()
    }

    pub fn events(&self) -> &[Event] {
        self.log.events()
    }

    /// Ends the conversation and gives back its log, for what a front end records after
    /// the run (where the changes went); the model client and tools are dropped.
    pub fn into_log(self) -> EventLog {
        self.log
    }

    pub(super) fn append(
        &mut self,
        observer: &mut dyn Observer,
        source: Source,
        body: EventBody,
    ) -> Result<(), StoreError> {
        let event = self.log.append(source, body)?;
        observer.event(event);
        Ok(())
    }

    /// Appends an event no observer needs to see (resume's own bookkeeping).
    pub(crate) fn append_quietly(
        &mut self,
        source: Source,
        body: EventBody,
    ) -> Result<(), StoreError> {
        self.log.append(source, body).map(|_| ())
    }

    pub fn totals(&self) -> &Totals {
        &self.totals
    }
}
