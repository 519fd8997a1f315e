//! What a front end may change on a conversation between steps (model, window, review,
//! condensing threshold), and the bookkeeping of condensations.
//!
//! What a conversation shows of itself (its id, log, events, totals, client, tools) and
//! how events are appended to its log: each shown to the observer once it is on disk,
//! or kept quiet for resume's own bookkeeping.

use super::Conversation;
use super::Observer;
use super::StepGuard;
use super::Totals;
use crate::store::EventLog;
use crate::store::StoreError;
use serde_json::Value;
use std::path::Path;
use wright_llm::Client;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;

impl Conversation {
    /// Talks to another model from the next step on (the history stays as it is).
    pub fn set_client(&mut self, client: Client) {
        self.client = client;
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Notes something the user did (in chat: an undo) so the model knows of it.
    pub fn note_from_user(
        &mut self,
        observer: &mut dyn Observer,
        text: &str,
    ) -> Result<(), StoreError> {
        self.append(
            observer,
            Source::User,
            EventBody::Message {
                text: text.to_string(),
                step: None,
                reasoning: None,
                raw: None,
            },
        )
    }

    /// Masks the secrets of `masker` out of every event from now on (before it is logged,
    /// shown or sent to the model) and out of what commands print as it is shown.
    pub fn set_masker(&mut self, masker: std::sync::Arc<wright_tools::Masker>) {
        let masker = Some(masker).filter(|m| !m.is_empty());
        self.log.set_masker(masker.clone());
        self.masker = masker;
    }

    /// The workspace whose files a failure names: a loop over a failure is then met with
    /// the lines it points at.
    pub fn set_workspace(&mut self, workspace: wright_tools::Workspace) {
        self.workspace = Some(workspace);
    }

    /// Counts what each request costs at `price` (and stops at `Limits::max_cost`).
    pub fn set_price(&mut self, price: Option<wright_protocol::Price>) {
        self.price = price;
    }

    /// Where a front end writes why it cancels the run (say, "stopped by SIGTERM") before
    /// cancelling: the stop is logged with that reason instead of "interrupted by the user".
    pub fn interrupt_reason(&self) -> std::sync::Arc<std::sync::Mutex<Option<String>>> {
        self.interrupt.interrupt_reason.clone()
    }

    /// Checks `guard` before each step; its reason stops the run.
    pub fn add_step_guard(&mut self, guard: Box<dyn StepGuard>) {
        self.guards.push(guard);
    }

    /// Condenses the history before the next request, whatever its size (asked for by
    /// the user): aiming at half of it, masking first, else a summary; when it cannot
    /// shrink, the run goes on with it as it is.
    pub fn condense_first(&mut self) {
        self.window.condense_requested = true;
    }

    /// Condense when a request would pass `share` of the window (0.3 to 0.95).
    pub fn set_condense_at(&mut self, share: f64) {
        self.window.condense_at = share.clamp(0.3, 0.95);
    }

    /// Requests that would not fit in `tokens` (with room kept for the reply) are not
    /// sent: the run stops with the reason instead of being silently truncated. The tools
    /// are told too, so their outputs shrink with the window.
    pub fn set_context_window(&mut self, tokens: u64) {
        self.window.context_window = Some(tokens);
        self.tools.fit_window(tokens);
    }

    pub(crate) fn note_condensation(&mut self, condensation: &wright_protocol::Condensation) {
        self.totals.condensations += 1;
        self.totals.prompt_tokens += condensation.summary_prompt_tokens.unwrap_or(0);
        self.totals.completion_tokens += condensation.summary_completion_tokens.unwrap_or(0);
        if let Some(price) = self.price {
            self.totals.cost += price.of(
                condensation.summary_prompt_tokens.unwrap_or(0),
                condensation.summary_completion_tokens.unwrap_or(0),
            );
        }
        self.window.condensed_at_steps.push(self.step);
    }

    /// Three condensations on three steps in a row: condensing no longer helps.
    pub(super) fn condensation_loop(&self) -> bool {
        let steps = &self.window.condensed_at_steps;
        steps.len() >= 3 && {
            let last = &steps[steps.len() - 3..];
            last[2] == last[1] + 1 && last[1] == last[0] + 1
        }
    }
}

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

    /// Tells the model something at `step`, as wright's own message (logged first, as
    /// every event).
    pub(super) fn tell(
        &mut self,
        observer: &mut dyn Observer,
        step: u32,
        text: String,
    ) -> Result<(), StoreError> {
        let body = EventBody::Message {
            text,
            step: Some(step),
            reasoning: None,
            raw: None,
        };
        self.append(observer, Source::Environment, body)
    }

    /// The token count of a request body of `bytes`, as best known.
    pub(super) fn estimate_tokens(&self, bytes: usize) -> u64 {
        (bytes as f64 * self.window.tokens_per_byte).ceil() as u64
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
