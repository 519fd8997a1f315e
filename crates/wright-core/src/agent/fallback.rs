//! Going on with the next model of a fallback list when the one in use cannot: its server
//! is down or stays overloaded after the client's retries, refuses the request's size, or
//! the model is stuck. The conversation is the same — same log, same history, same
//! rendering of tool calls (text or native, as it started) — so the next model's first
//! request carries the history byte for byte; only the model, its server and its prices
//! change, logged as a `model_switch` event with the reason and the step.
//!
//! Which profiles may be used is the front end's to decide (the egress policy is checked
//! before a profile is put in the list); this module only walks the list in order.

use super::Conversation;
use super::Observer;
use super::INITIAL_TOKENS_PER_BYTE;
use crate::store::StoreError;
use std::collections::VecDeque;
use wright_llm::Client;
use wright_llm::LlmError;
use wright_protocol::EventBody;
use wright_protocol::ModelAt;
use wright_protocol::ModelSwitch;
use wright_protocol::Source;
use wright_protocol::SwitchReason;

/// A profile the conversation may go on with: its client (not yet asked anything), its
/// prices and its window when known.
#[derive(Clone)]
pub struct Alternate {
    pub profile: String,
    pub client: Client,
    pub price: Option<wright_protocol::Price>,
    pub context_window: Option<u64>,
}

/// The profile in use, its prices, and those after it.
#[derive(Default)]
pub(super) struct Chain {
    pub(super) current: Option<String>,
    /// The prices of the model in use, for the cost of each request and `max_cost`.
    pub(super) price: Option<wright_protocol::Price>,
    pub(super) next: VecDeque<Alternate>,
}

/// Why a failed request calls for the next model, if it does: a server that cannot be
/// reached or stays overloaded (after the retries), or one that refuses the request's
/// size. Anything else (a bad key, an unknown model, a reply wright cannot read) is the
/// user's to fix and fails the run as before.
pub fn switch_reason(err: &LlmError) -> Option<SwitchReason> {
    match err.last() {
        LlmError::Unreachable { .. } => Some(SwitchReason::Unreachable),
        // Only when connecting: a profile that names no server, and none answers here.
        LlmError::NoServerFound { .. }
        | LlmError::NothingToRun { .. }
        | LlmError::SeveralStoredModels { .. } => Some(SwitchReason::Unreachable),
        LlmError::IdleTimeout { .. } => Some(SwitchReason::Overloaded),
        LlmError::Http {
            status, message, ..
        } => match status {
            413 => Some(SwitchReason::TooLarge),
            400 | 422 if says_too_large(message) => Some(SwitchReason::TooLarge),
            429 | 502 | 503 | 504 => Some(SwitchReason::Overloaded),
            500 if says_too_large(message) => Some(SwitchReason::TooLarge),
            _ => None,
        },
        _ => None,
    }
}

/// How servers word a request longer than their context (llama.cpp, vLLM, OpenAI, Ollama).
fn says_too_large(message: &str) -> bool {
    let message = message.to_lowercase();
    [
        "context size",
        "context length",
        "context window",
        "maximum context",
        "too many tokens",
        "prompt is too long",
        "exceeds the",
    ]
    .iter()
    .any(|words| message.contains(words))
}

impl Conversation {
    /// The profile in use (`current`, when the model came from one) and the profiles to
    /// go on with, in order.
    pub fn set_fallback(&mut self, current: Option<String>, next: Vec<Alternate>) {
        self.fallback = Chain {
            current,
            // The prices set for the model in use stay.
            price: self.fallback.price,
            next: next.into(),
        };
    }

    /// The profile in use, when known.
    pub fn profile(&self) -> Option<&str> {
        self.fallback.current.as_deref()
    }

    /// The model in use now (after any switch).
    pub fn model(&self) -> &str {
        &self.client.config().model
    }

    /// Logs how the conversation's profile was chosen (after its start).
    pub fn log_route(&mut self, route: wright_protocol::Route) -> Result<(), StoreError> {
        self.append_quietly(Source::Environment, EventBody::Route(route))
    }

    /// Where the conversation's model is now: its profile, model and server.
    pub fn model_at(&self) -> ModelAt {
        model_at(self.fallback.current.clone(), &self.client)
    }

    /// Logs a switch made before the conversation's next step, by whoever chose its
    /// client: the profile `from` did not answer when the session was prepared, so the
    /// conversation goes on with `to` from that step on. Nothing is sent; the switch is
    /// in the log (for the report, `wright show` and a resume) as one made in the loop.
    pub fn log_switch_before_step(
        &mut self,
        from: ModelAt,
        to: ModelAt,
        reason: SwitchReason,
        detail: String,
    ) -> Result<(), StoreError> {
        let switch = ModelSwitch {
            step: self.step + 1,
            from,
            to,
            reason,
            detail,
        };
        self.append_quietly(Source::Environment, EventBody::ModelSwitch(switch))
    }

    pub(super) fn can_switch(&self) -> bool {
        !self.fallback.next.is_empty()
    }

    /// Goes on with the next profile from step `step` on, logged with why.
    pub(super) fn switch_model(
        &mut self,
        observer: &mut dyn Observer,
        step: u32,
        reason: SwitchReason,
        detail: String,
    ) -> Result<bool, StoreError> {
        let Some(next) = self.fallback.next.pop_front() else {
            return Ok(false);
        };
        let from = model_at(self.fallback.current.take(), &self.client);
        let to = model_at(Some(next.profile.clone()), &next.client);
        self.client = next.client;
        self.fallback.price = next.price;
        self.window.context_window = next.context_window;
        if let Some(tokens) = next.context_window {
            self.tools.fit_window(tokens);
        }
        // The last model's calibration says nothing of this one's tokenizer.
        self.window.tokens_per_byte = INITIAL_TOKENS_PER_BYTE;
        self.fallback.current = Some(next.profile);
        self.append(
            observer,
            Source::Environment,
            EventBody::ModelSwitch(ModelSwitch {
                step,
                from,
                to,
                reason,
                detail,
            }),
        )?;
        Ok(true)
    }
}

/// `client`'s model and server, under `profile`.
fn model_at(profile: Option<String>, client: &Client) -> ModelAt {
    ModelAt {
        profile,
        model: client.config().model.clone(),
        base_url: client.config().base_url.clone(),
        destination: wright_llm::destination(&client.config().base_url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, message: &str) -> LlmError {
        LlmError::Http {
            url: "http://127.0.0.1:1/v1".into(),
            status,
            message: message.into(),
        }
    }

    #[test]
    fn only_a_server_that_cannot_serve_the_request_calls_for_the_next_model() {
        let gave_up = LlmError::GaveUp {
            last: Box::new(http(503, "Loading model")),
            attempts: 4,
            elapsed: std::time::Duration::from_secs(3),
        };
        assert_eq!(switch_reason(&gave_up), Some(SwitchReason::Overloaded));
        let refused = LlmError::Unreachable {
            url: "x".into(),
            reason: wright_llm::Unreachable::Refused,
        };
        assert_eq!(switch_reason(&refused), Some(SwitchReason::Unreachable));
        assert_eq!(
            switch_reason(&http(
                400,
                "the request exceeds the available context size (4096 tokens)"
            )),
            Some(SwitchReason::TooLarge)
        );
        assert_eq!(switch_reason(&http(400, "unknown field tool_choice")), None);
        assert_eq!(switch_reason(&http(401, "bad key")), None);
    }
}
