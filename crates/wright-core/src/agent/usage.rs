//! What one model reply cost: its tokens, prefill and generation time and price added to
//! the conversation's totals, and logged as a `usage` event of its step.

use super::*;

impl Conversation {
    /// Adds one request's tokens, and their price when known, to the conversation's
    /// totals; the price added, if any.
    pub(super) fn add_to_totals(&mut self, usage: &wright_llm::TokenUsage) -> Option<f64> {
        self.totals.prompt_tokens += usage.prompt_tokens;
        self.totals.completion_tokens += usage.completion_tokens;
        self.totals.cached_tokens += usage.cached_tokens.unwrap_or(0);
        let cost = self
            .price
            .map(|price| price.of(usage.prompt_tokens, usage.completion_tokens));
        self.totals.cost += cost.unwrap_or(0.0);
        cost
    }

    pub(super) fn record_usage(
        &mut self,
        observer: &mut dyn Observer,
        step: u32,
        response: &Response,
    ) -> Result<(), StoreError> {
        let usage = response.usage.clone().unwrap_or_default();
        let cost = self.add_to_totals(&usage);
        self.totals.model_ms += response.first_byte_ms + response.generation_ms;
        let prefill_ms = usage.prompt_ms.unwrap_or(response.first_byte_ms);
        let generation_ms = usage.predicted_ms.unwrap_or(response.generation_ms);
        self.totals.prefill_ms += prefill_ms;
        self.totals.generation_ms += generation_ms;
        self.append(
            observer,
            Source::Environment,
            EventBody::Usage(Usage {
                step,
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                cached_tokens: usage.cached_tokens,
                prefill_ms: Some(prefill_ms),
                generation_ms: Some(generation_ms),
                destination: Some(wright_llm::destination(&self.client.config().base_url)),
                cost,
            }),
        )
    }
}
