//! Condensing the history before it outgrows the context window, cheapest first:
//!
//! 1. mask: every large observation but those of the last steps is cut to its first and
//!    last lines (no model call). Taken when that brings the history down to the target,
//!    well below the point where condensing starts, so the next condensation is many steps
//!    away (each one changes the prefix, so the server prefills the history again);
//! 2. summarize: if masking is not enough, the model writes a structured summary of the
//!    forgotten middle (task, done, files, failed hypotheses, pending, plan), and the
//!    history becomes: system prompt, task + summary, the most recent steps verbatim (their
//!    large outputs masked as in 1, but for the last steps').
//!
//! Each condensation is one event in the log; the history is append-only again after it,
//! so the server's prefix cache works from there on. The system prompt and the task are
//! always kept verbatim. When even the task and the last step do not fit, the condenser
//! says how large each is and how much room there is.

use crate::agent::Conversation;
use crate::agent::Observer;
use crate::history::render_history;
use crate::history::worth_masking;
use crate::store::StoreError;
use wright_llm::ChatMessage;
use wright_protocol::Condensation;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;

/// Steps kept verbatim after a summary (fewer when they do not fit the target).
const KEEP_RECENT_STEPS: usize = 4;
/// Steps whose outputs are never masked: the model is working on them.
const UNMASKED_STEPS: usize = 2;
/// What the summarizer sees of one observation.
const TRANSCRIPT_OUTPUT: usize = 1200;
/// Room left for the summary itself (it is asked to be short).
const SUMMARY_ROOM: u64 = 600;

/// The summarizer's instructions (the test server recognizes summary requests by them).
pub const SUMMARY_PROMPT: &str = "You condense the history of a coding agent's work so that it can go on without the details. Write only what the agent needs, under these headings: TASK (the user's request), DONE (what was tried and found, with the commands and results that matter), FILES (files changed or read, and their state), FAILED (hypotheses ruled out, so they are not tried again), PENDING, PLAN (the next concrete steps). Be specific and short.";

/// How far to condense, in tokens of the next request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// What a condensation aims at: well below the point where condensing starts.
    pub target: u64,
    /// What a request may never pass (the window less the room kept for the reply).
    pub ceiling: u64,
}

pub(crate) enum Condensed {
    /// The condensed history fits; here is the request body.
    Fits(Vec<u8>),
    /// Even condensed it does not fit.
    TooBig(TooBig),
}

/// Why the history could not be condensed under the ceiling.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TooBig {
    /// The model was asked for a summary and gave none (an error or an empty reply).
    NoSummary,
    /// What must stay verbatim is larger than a request may be.
    Verbatim {
        /// The system prompt, the tool schemas and the task (with any summary).
        fixed: u64,
        /// The last step: the model's reply, its calls and their results.
        last_step: u64,
        /// The ceiling.
        room: u64,
    },
}

/// Where the history stands: what the last condensation kept and where each step begins.
struct Layout {
    previous: Option<Condensation>,
    keep_from: u64,
    /// The first event of each step shown verbatim now.
    step_starts: Vec<u64>,
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

    fn tokens_with(&self, condensation: &Condensation) -> u64 {
        self.estimate(self.body_with(condensation).len())
    }

    fn layout(&self) -> Layout {
        let events = self.events();
        let previous = events.iter().rev().find_map(|e| match &e.body {
            EventBody::Condensation(c) => Some(c.clone()),
            _ => None,
        });
        let first_step = events
            .iter()
            .find(|e| matches!(e.body, EventBody::Usage(_)))
            .map_or(events.len() as u64, |e| e.id);
        let keep_from = previous.as_ref().map_or(first_step, |c| c.keep_from);
        let step_starts = events
            .iter()
            .filter(|e| matches!(e.body, EventBody::Usage(_)) && e.id >= keep_from)
            .map(|e| e.id)
            .collect();
        Layout {
            previous,
            keep_from,
            step_starts,
        }
    }

    /// Condenses the history so that the next request fits: under `budget.target` if it
    /// can, under `budget.ceiling` at least.
    pub(crate) async fn condense(
        &mut self,
        observer: &mut dyn Observer,
        budget: Budget,
        tokens_before: u64,
    ) -> Result<Condensed, StoreError> {
        let Layout {
            previous,
            keep_from,
            step_starts,
        } = self.layout();

        // 1. Mask every large observation before the last steps.
        let unmasked_from = step_starts
            .len()
            .checked_sub(UNMASKED_STEPS)
            .and_then(|at| step_starts.get(at))
            .copied()
            .unwrap_or(keep_from);
        let before = previous.as_ref().map_or(0, |c| c.masked.len());
        let mut masked: Vec<u64> = previous
            .as_ref()
            .map(|c| c.masked.clone())
            .unwrap_or_default();
        masked.extend(self.events().iter().filter_map(|e| match &e.body {
            EventBody::Observation { output, .. }
                if e.id >= keep_from && e.id < unmasked_from && worth_masking(output) =>
            {
                Some(e.id)
            }
            _ => None,
        }));
        masked.sort_unstable();
        masked.dedup();
        let mut masking = Condensation {
            keep_from,
            masked: masked.clone(),
            summary: previous.as_ref().and_then(|c| c.summary.clone()),
            tokens_before,
            ..Condensation::default()
        };
        masking.tokens_after = self.tokens_with(&masking);
        let masks_more = masked.len() > before;
        if masks_more && masking.tokens_after <= budget.target {
            return self.take(observer, masking);
        }

        // 2. Summarize everything before the most recent steps: as many as fit the target,
        // else the fewest that fit the ceiling.
        let trials: Vec<Condensation> = (1..=KEEP_RECENT_STEPS.min(step_starts.len()))
            .rev()
            .map(|keep| {
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
                trial.tokens_after = self.tokens_with(&trial);
                trial
            })
            .collect();
        let chosen = trials
            .iter()
            .find(|t| t.tokens_after + SUMMARY_ROOM <= budget.target)
            .or_else(|| {
                trials
                    .last()
                    .filter(|t| t.tokens_after + SUMMARY_ROOM <= budget.ceiling)
            })
            .cloned();
        let summarized = match &chosen {
            Some(trial) => {
                self.summarized(trial.clone(), keep_from, previous.as_ref(), budget)
                    .await
            }
            None => None,
        };
        let summarized_none = summarized.is_none();
        let summary = match summarized {
            Some(condensation) if condensation.tokens_after <= budget.ceiling => {
                return self.take(observer, condensation);
            }
            Some(condensation) => condensation.summary,
            None => previous.as_ref().and_then(|c| c.summary.clone()),
        };

        // 3. Masking, if it fits at all, rather than stopping.
        if masks_more && masking.tokens_after <= budget.ceiling {
            return self.take(observer, masking);
        }
        if chosen.is_some() && summarized_none {
            return Ok(Condensed::TooBig(TooBig::NoSummary));
        }
        let fixed = self.tokens_with(&Condensation {
            keep_from: self.events().len() as u64,
            summary,
            ..Condensation::default()
        });
        // The last step's own size: its trial less the same frame without any step.
        let last_step = trials.last().map_or(0, |trial| {
            let frame = self.tokens_with(&Condensation {
                keep_from: self.events().len() as u64,
                summary: trial.summary.clone(),
                ..Condensation::default()
            });
            trial.tokens_after.saturating_sub(frame)
        });
        Ok(Condensed::TooBig(TooBig::Verbatim {
            fixed,
            last_step,
            room: budget.ceiling,
        }))
    }

    /// `trial` with the model's summary of the events from `from` to its `keep_from`.
    async fn summarized(
        &self,
        mut trial: Condensation,
        from: u64,
        previous: Option<&Condensation>,
        budget: Budget,
    ) -> Option<Condensation> {
        let transcript = self.transcript(from, trial.keep_from, previous, budget.target);
        let (summary, prompt_tokens, completion_tokens) = self.summarize(&transcript).await?;
        trial.summary = Some(summary);
        trial.summary_prompt_tokens = Some(prompt_tokens);
        trial.summary_completion_tokens = Some(completion_tokens);
        trial.summary_destination = Some(wright_llm::destination(
            &self.client_ref().config().base_url,
        ));
        trial.tokens_after = self.tokens_with(&trial);
        Some(trial)
    }

    fn take(
        &mut self,
        observer: &mut dyn Observer,
        condensation: Condensation,
    ) -> Result<Condensed, StoreError> {
        let body = self.body_with(&condensation);
        self.record(observer, condensation)?;
        Ok(Condensed::Fits(body))
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
            // A summary is words, not a call: no constraint on it.
            .unconstrained()
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
