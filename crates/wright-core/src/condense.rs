//! Condensing the history before it outgrows the context window, cheapest first:
//!
//! 1. mask: old large observations are cut to their first and last lines (no model call);
//! 2. summarize: if that is not enough, the model writes a structured summary of the
//!    forgotten middle (task, done, files, failed hypotheses, pending, plan), and the
//!    history becomes: system prompt, task + summary, the most recent steps verbatim.
//!
//! Each condensation is one event in the log; the history is append-only again after it,
//! so the server's prefix cache works from there on. The system prompt and the task are
//! always kept verbatim.

use crate::agent::Conversation;
use crate::agent::Observer;
use crate::history::render_history;
use crate::store::StoreError;
use wright_llm::ChatMessage;
use wright_protocol::Condensation;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;

/// Steps always kept verbatim (fewer only if they alone do not fit).
const KEEP_RECENT_STEPS: usize = 4;
/// Observations longer than this (characters) are masked first.
const MASK_ABOVE: usize = 1500;
/// What the summarizer sees of one observation.
const TRANSCRIPT_OUTPUT: usize = 1200;

/// The summarizer's instructions (the test server recognizes summary requests by them).
pub const SUMMARY_PROMPT: &str = "You condense the history of a coding agent's work so that it can go on without the details. Write only what the agent needs, under these headings: TASK (the user's request), DONE (what was tried and found, with the commands and results that matter), FILES (files changed or read, and their state), FAILED (hypotheses ruled out, so they are not tried again), PENDING, PLAN (the next concrete steps). Be specific and short.";

pub(crate) enum Condensed {
    /// The condensed history fits; here is the request body.
    Fits(Vec<u8>),
    /// Even condensed it does not fit.
    TooBig(String),
}

impl Conversation {
    /// The body of the request for `events` plus a hypothetical condensation.
    fn body_with(&self, condensation: &Condensation) -> Vec<u8> {
        let mut events: Vec<Event> = self.events().to_vec();
        events.push(Event::new(
            events.len() as u64,
            Source::Environment,
            EventBody::Condensation(condensation.clone()),
        ));
        let messages = render_history(&events);
        self.client_ref()
            .request_body(&messages, self.request_tools_ref())
    }

    /// Condenses the history so that the next request fits under `limit` tokens.
    pub(crate) async fn condense(
        &mut self,
        observer: &mut dyn Observer,
        limit: u64,
        tokens_before: u64,
    ) -> Result<Condensed, StoreError> {
        let events = self.events();
        let previous = events.iter().rev().find_map(|e| match &e.body {
            EventBody::Condensation(c) => Some(c.clone()),
            _ => None,
        });
        let first_step = events
            .iter()
            .find(|e| matches!(e.body, EventBody::Usage(_)))
            .map_or(0, |e| e.id);
        let keep_from = previous.as_ref().map_or(first_step, |c| c.keep_from);
        let step_starts: Vec<u64> = events
            .iter()
            .filter(|e| matches!(e.body, EventBody::Usage(_)) && e.id >= keep_from)
            .map(|e| e.id)
            .collect();

        // 1. Mask large observations older than the recent steps.
        let recent_start = step_starts
            .len()
            .checked_sub(KEEP_RECENT_STEPS)
            .and_then(|at| step_starts.get(at))
            .copied()
            .unwrap_or(keep_from);
        let mut masked: Vec<u64> = previous
            .as_ref()
            .map(|c| c.masked.clone())
            .unwrap_or_default();
        masked.extend(events.iter().filter_map(|e| match &e.body {
            EventBody::Observation { output, .. }
                if e.id >= keep_from
                    && e.id < recent_start
                    && output.chars().count() > MASK_ABOVE =>
            {
                Some(e.id)
            }
            _ => None,
        }));
        masked.sort_unstable();
        masked.dedup();
        let mut candidate = Condensation {
            keep_from,
            masked: masked.clone(),
            summary: previous.as_ref().and_then(|c| c.summary.clone()),
            tokens_before,
            ..Condensation::default()
        };
        let body = self.body_with(&candidate);
        let estimate = self.estimate(body.len());
        if estimate <= limit && masked.len() > previous.as_ref().map_or(0, |c| c.masked.len()) {
            candidate.tokens_after = estimate;
            self.record(observer, candidate)?;
            return Ok(Condensed::Fits(body));
        }

        // 2. Summarize everything before the most recent steps that fit.
        for keep in (1..=KEEP_RECENT_STEPS.min(step_starts.len())).rev() {
            let new_keep_from = step_starts[step_starts.len() - keep];
            let mut trial = Condensation {
                keep_from: new_keep_from,
                masked: masked
                    .iter()
                    .copied()
                    .filter(|id| *id >= new_keep_from)
                    .collect(),
                summary: Some(String::new()),
                tokens_before,
                ..Condensation::default()
            };
            // Leave room for the summary itself (at most ~600 tokens).
            if self.estimate(self.body_with(&trial).len()) + 600 > limit {
                continue;
            }
            let transcript = self.transcript(keep_from, new_keep_from, previous.as_ref(), limit);
            let Some((summary, prompt_tokens, completion_tokens)) =
                self.summarize(&transcript).await
            else {
                return Ok(Condensed::TooBig(
                    "the model could not summarize the history".into(),
                ));
            };
            trial.summary = Some(summary);
            trial.summary_prompt_tokens = Some(prompt_tokens);
            trial.summary_completion_tokens = Some(completion_tokens);
            trial.summary_destination = Some(wright_llm::destination(
                &self.client_ref().config().base_url,
            ));
            let body = self.body_with(&trial);
            trial.tokens_after = self.estimate(body.len());
            if trial.tokens_after > limit {
                continue;
            }
            self.record(observer, trial)?;
            return Ok(Condensed::Fits(body));
        }
        Ok(Condensed::TooBig(format!(
            "even condensed to the task and the last step, the history needs more than {limit} tokens"
        )))
    }

    fn record(
        &mut self,
        observer: &mut dyn Observer,
        condensation: Condensation,
    ) -> Result<(), StoreError> {
        self.note_condensation(&condensation);
        self.append_event(
            observer,
            Source::Environment,
            EventBody::Condensation(condensation),
        )
    }

    /// The forgotten events as plain text for the summarizer, clipped to fit.
    fn transcript(
        &self,
        from: u64,
        to: u64,
        previous: Option<&Condensation>,
        limit: u64,
    ) -> String {
        let mut out = String::new();
        let events = self.events();
        if let Some(task) = events
            .iter()
            .find(|e| e.source == Source::User && matches!(e.body, EventBody::Message { .. }))
        {
            if let EventBody::Message { text, .. } = &task.body {
                out.push_str(&format!("The user's task:\n{text}\n\n"));
            }
        }
        if let Some(summary) = previous.and_then(|c| c.summary.as_deref()) {
            out.push_str(&format!("Summary of the work before:\n{summary}\n\n"));
        }
        out.push_str("What happened next:\n");
        for event in events.iter().filter(|e| e.id >= from && e.id < to) {
            match &event.body {
                EventBody::Message { text, .. } if !text.is_empty() => {
                    let who = match event.source {
                        Source::Agent => "agent",
                        Source::User => "user",
                        Source::Environment => "note",
                    };
                    out.push_str(&format!("{who}: {}\n", clip(text, TRANSCRIPT_OUTPUT)));
                }
                EventBody::Action {
                    tool, arguments, ..
                } => {
                    out.push_str(&format!(
                        "called {tool} {}\n",
                        clip(&arguments.to_string(), 600)
                    ));
                }
                EventBody::Observation {
                    output,
                    is_error,
                    exit_code,
                    ..
                } => {
                    let status = match (is_error, exit_code) {
                        (true, _) => " (error)".to_string(),
                        (false, Some(code)) if *code != 0 => format!(" (exit {code})"),
                        _ => String::new(),
                    };
                    out.push_str(&format!(
                        "result{status}:\n{}\n",
                        clip(output, TRANSCRIPT_OUTPUT)
                    ));
                }
                _ => {}
            }
        }
        // The summary request must fit too: about three characters per token, half the window.
        let budget = (limit as usize).saturating_mul(3) / 2;
        if out.len() > budget {
            let cut = out.len() - budget;
            let start = out
                .char_indices()
                .map(|(i, _)| i)
                .find(|i| *i >= cut)
                .unwrap_or(out.len());
            out = format!("[... the oldest part is left out ...]\n{}", &out[start..]);
        }
        out
    }

    async fn summarize(&self, transcript: &str) -> Option<(String, u64, u64)> {
        let messages = [
            ChatMessage::System {
                content: SUMMARY_PROMPT.to_string(),
            },
            ChatMessage::User {
                content: transcript.to_string(),
            },
        ];
        let response = self
            .client_ref()
            .complete(&messages, &[], "condense", &mut |_| {})
            .await
            .ok()?;
        let summary = response.text.trim().to_string();
        if summary.is_empty() {
            return None;
        }
        let usage = response.usage.unwrap_or_default();
        Some((summary, usage.prompt_tokens, usage.completion_tokens))
    }
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
