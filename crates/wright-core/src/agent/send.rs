//! Sending one step's request: each retry logged as it starts, and a constrained request
//! the server refuses sent again without its constraint. That changes the request once,
//! said once (a retry event), and holds for the rest of the conversation: every later
//! request extends the unconstrained one byte for byte.
//!
//! What one model reply cost: its tokens, prefill and generation time and price added to
//! the conversation's totals, and logged as a `usage` event of its step.
//!
//! Fitting a request into the context window before it is sent: condensing when it passes
//! the trigger (aiming well below it, so the next condensation is many steps away), and
//! stopping the run — saying what did not fit, its size against the room, and the fix —
//! when even that is not enough. A request the server would cut is never sent.
//!
//! A side question (`/ask`): answered from the conversation's current context in a
//! request of its own — the history as the next step would send it, then the question —
//! and logged as a `side_question` event, which the history never renders. So the next
//! main request is byte for byte what it would have been without the question, and the
//! running task's prefix and plan are untouched.
//!
//! A front end that cannot wait for the run to end (the server) hands questions in
//! through an inbox (`aside_inbox`); the run answers them between two steps, so the
//! question never interrupts a request or a tool.
//!
//! A workspace still being made when the first request goes out: a clone checked out in
//! the background while the model reads the prompt (which is made from the user's
//! repository, not from the workspace). The front end hands the conversation what that
//! waits for; the loop awaits it once, after the first reply arrives and before anything of
//! that reply runs — a tool call, a `finish`, a step's files kept — so nothing of the
//! agent's touches a half-made workspace. Its failure ends the run as failed, in its own
//! words; the user's cancellation while it waits stops the run as any cancellation does.

use super::reply_reserve;
use super::Conversation;
use super::Observer;
use super::Outcome;
use super::StepEnd;
use crate::condense::Budget;
use crate::condense::Condensed;
use crate::condense::TooBig;
use crate::history::render_history;
use crate::store::StoreError;
use std::future::Future;
use std::pin::Pin;
use tokio_util::sync::CancellationToken;
use wright_llm::ChatMessage;
use wright_llm::LlmError;
use wright_llm::Response;
use wright_llm::StreamDelta;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_protocol::SideQuestion;
use wright_protocol::Source;
use wright_protocol::StopReason;
use wright_protocol::Usage;

/// A step's reply (None when cancelled) and the size of the body that got it.
type Sent = (Option<Result<Response, LlmError>>, usize);

impl Conversation {
    pub(super) async fn send(
        &mut self,
        body: Vec<u8>,
        step: u32,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<Sent, StoreError> {
        let first_len = body.len();
        let reply = self.send_once(body, step, cancel, observer).await?;
        let constraint = self.client.config().constraint.as_ref().map(|c| c.kind);
        let refused = match (&reply, constraint) {
            (Some(Err(err)), Some(kind)) => err.refusal().map(|message| (kind, message)),
            _ => None,
        };
        let Some((kind, message)) = refused else {
            return Ok((reply, first_len));
        };
        let reason = format!(
            "the server refused the request with {} ({message}); it is sent again without it, as is every request of this conversation",
            kind.describe()
        );
        self.client.set_constraint(None);
        self.append(
            observer,
            Source::Environment,
            EventBody::Retry {
                step,
                attempt: 1,
                reason: reason.clone(),
            },
        )?;
        observer.delta(&StreamDelta::Retrying { attempt: 1, reason });
        let messages = render_history(self.log.events());
        let body = self
            .client
            .request_body(&messages, self.calling.request_tools());
        let len = body.len();
        let reply = self.send_once(body, step, cancel, observer).await?;
        Ok((reply, len))
    }

    async fn send_once(
        &mut self,
        body: Vec<u8>,
        step: u32,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<Option<Result<Response, LlmError>>, StoreError> {
        let mut unlogged: Option<StoreError> = None;
        // What the model writes is shown as it comes: masked as its log will be.
        let mut text = wright_tools::MaskStream::new(self.log.masker().cloned());
        let mut reasoning = wright_tools::MaskStream::new(self.log.masker().cloned());
        let mut arguments = wright_tools::MaskStream::new(self.log.masker().cloned());
        let reply: Option<Result<Response, LlmError>> = {
            let log = &mut self.log;
            // Each retry is an event too, logged when it starts (`--json` shows it).
            let mut on_delta = |delta: StreamDelta| {
                if let StreamDelta::Retrying { attempt, reason } = &delta {
                    let retry = EventBody::Retry {
                        step,
                        attempt: *attempt,
                        reason: reason.clone(),
                    };
                    match log.append(Source::Environment, retry) {
                        Ok(event) => observer.event(event),
                        Err(err) => unlogged = unlogged.take().or(Some(err)),
                    }
                }
                let delta = match delta {
                    StreamDelta::Text(piece) => StreamDelta::Text(text.push_text(&piece)),
                    StreamDelta::Reasoning(piece) => {
                        StreamDelta::Reasoning(reasoning.push_text(&piece))
                    }
                    StreamDelta::ToolCallArguments(piece) => {
                        StreamDelta::ToolCallArguments(arguments.push_text(&piece))
                    }
                    other @ (StreamDelta::ToolCallStarted { .. }
                    | StreamDelta::PromptProgress(_)
                    | StreamDelta::Retrying { .. }) => other,
                };
                // A piece held back whole (it may begin a secret) comes with the next.
                let held = matches!(
                    &delta,
                    StreamDelta::Text(piece)
                        | StreamDelta::Reasoning(piece)
                        | StreamDelta::ToolCallArguments(piece) if piece.is_empty()
                );
                if !held {
                    observer.delta(&delta);
                }
            };
            let tag = step.to_string();
            tokio::select! {
                result = self.client.complete_body(body, &tag, &mut on_delta) => Some(result),
                _ = cancel.cancelled() => None,
            }
        };
        for (rest, wrap) in [
            (
                reasoning.finish_text(),
                StreamDelta::Reasoning as fn(String) -> StreamDelta,
            ),
            (text.finish_text(), StreamDelta::Text),
            (arguments.finish_text(), StreamDelta::ToolCallArguments),
        ] {
            if !rest.is_empty() {
                observer.delta(&wrap(rest));
            }
        }
        match unlogged {
            Some(err) => Err(err),
            None => Ok(reply),
        }
    }
}

impl Conversation {
    /// Adds one request's tokens, and their price when known, to the conversation's
    /// totals; the price added, if any.
    pub(crate) fn add_to_totals(&mut self, usage: &wright_llm::TokenUsage) -> Option<f64> {
        self.totals.prompt_tokens += usage.prompt_tokens;
        self.totals.completion_tokens += usage.completion_tokens;
        self.totals.cached_tokens += usage.cached_tokens.unwrap_or(0);
        let cost = self
            .fallback
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

/// A condensation aims at this share of the point where condensing starts, so the next
/// one is many steps away.
const CONDENSE_TO: f64 = 0.6;

/// Why the run stops when the history cannot be condensed to fit: what did not fit, and
/// its size against the room there is (what to do is the front end's to say).
fn too_big_reason(why: &TooBig, window: u64, reserve: u64) -> StopReason {
    let what = match why {
        TooBig::NoSummary => format!(
            "the history must be condensed to fit the {window}-token context window, but the model gave no summary of it"
        ),
        TooBig::Verbatim {
            fixed,
            last_step: 0,
            room,
        } => format!(
            "the system prompt, the tool schemas and the task need about {fixed} tokens, more than the {room} a request may use in the {window}-token context window ({reserve} kept for the reply)"
        ),
        TooBig::Verbatim {
            fixed,
            last_step,
            room,
        } => format!(
            "the last step (the model's reply, its tool calls and their results) needs about {last_step} tokens, and only {} are left of the {room} a request may use in the {window}-token context window ({fixed} for the system prompt, the tool schemas and the task; {reserve} kept for the reply)",
            room.saturating_sub(*fixed)
        ),
    };
    StopReason::WindowTooSmall { what }
}

/// What became of a request's body.
pub(super) enum Fitted {
    /// It fits (condensed or not): send it.
    Send(Vec<u8>),
    /// The run ended instead.
    Ended(StepEnd),
}

impl Conversation {
    /// The body of step `step`'s request, made to fit the window, or the run's end.
    pub(super) async fn fit_window(
        &mut self,
        observer: &mut dyn Observer,
        step: u32,
        mut body: Vec<u8>,
    ) -> Result<Fitted, StoreError> {
        // Asked for by the user (`condense_first`): once, whatever the window.
        let forced = std::mem::take(&mut self.window.condense_requested);
        let window = match (self.window.context_window, forced) {
            (Some(window), _) => Some(window),
            (None, true) => None,
            (None, false) => return Ok(Fitted::Send(body)),
        };
        let mut needed = self.estimate_tokens(body.len());
        let reserve = window.map_or(0, reply_reserve);
        let ceiling = window.map_or(u64::MAX, |window| window - reserve);
        let trigger = window.map_or(u64::MAX, |window| {
            ((window as f64 * self.window.condense_at) as u64).min(ceiling)
        });
        let must = needed > trigger;
        if must || forced {
            let target = if must {
                (trigger as f64 * CONDENSE_TO) as u64
            } else {
                // Asked for: half of what it is now.
                needed / 2
            };
            let budget = Budget { target, ceiling };
            match self.condense(observer, budget, needed).await? {
                Condensed::Fits(condensed) => {
                    body = condensed;
                    needed = self.estimate_tokens(body.len());
                }
                Condensed::TooBig(why) => {
                    // Asked for, and it fits as it is: it goes on uncondensed.
                    if let Some(window) = window.filter(|_| must) {
                        let reason = too_big_reason(&why, window, reserve);
                        // No request was sent: the step did not happen.
                        self.totals.steps = step - 1;
                        return self
                            .end(observer, AgentState::Stopped, reason, None)
                            .map(|outcome| Fitted::Ended(StepEnd::done(outcome)));
                    }
                }
            }
            if self.condensation_loop() {
                let reason = StopReason::CondensingEveryStep;
                self.totals.steps = step - 1;
                return self
                    .end(observer, AgentState::Stuck, reason, None)
                    .map(|outcome| Fitted::Ended(StepEnd::done(outcome)));
            }
        }
        if let Some(window) = window.filter(|_| needed > ceiling) {
            let reason = StopReason::WindowTooSmall {
                what: format!(
                    "the next request needs about {needed} tokens, more than the {ceiling} a request may use in the {window}-token context window ({reserve} kept for the reply)"
                ),
            };
            self.totals.steps = step - 1;
            return self
                .end(observer, AgentState::Stopped, reason, None)
                .map(|outcome| Fitted::Ended(StepEnd::done(outcome)));
        }
        Ok(Fitted::Send(body))
    }
}

/// What the question is wrapped in: the model answers in words, about its own work.
pub const ASIDE: &str = "A side question from the user about your work so far. Answer it briefly in words, from what you know now; do not call a tool, and do not change your plan because of it. The task goes on afterwards as before.\n\nQuestion: ";

/// A question handed to a running conversation, and where its answer goes (the model's
/// words, or why it could not answer).
pub struct Aside {
    pub question: String,
    pub reply: tokio::sync::oneshot::Sender<Result<String, String>>,
}

/// Where a front end hands questions to a running conversation.
pub type AsideSender = tokio::sync::mpsc::UnboundedSender<Aside>;

impl Conversation {
    /// The inbox of side questions for the runs of this conversation: each is answered
    /// between two steps.
    pub fn aside_inbox(&mut self) -> AsideSender {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        self.interrupt.asides = Some(receiver);
        sender
    }

    /// Answers the questions waiting in the inbox, one by one.
    pub(super) async fn answer_asides(
        &mut self,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<(), StoreError> {
        while let Some(aside) = self
            .interrupt
            .asides
            .as_mut()
            .and_then(|inbox| inbox.try_recv().ok())
        {
            let answer = match self.ask_aside(&aside.question, cancel, observer).await? {
                Some(Ok(answer)) => Ok(answer),
                Some(Err(err)) => Err(err.to_string()),
                None => Err("the run was stopped before the question was answered".into()),
            };
            // The asker may have gone: the answer is in the log all the same.
            let _ = aside.reply.send(answer);
        }
        Ok(())
    }

    /// Answers `question` beside the task: the answer, or why the model could not answer,
    /// or `None` when `cancel` came first (only a failure to write the log is an `Err`).
    pub async fn ask_aside(
        &mut self,
        question: &str,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<Option<Result<String, LlmError>>, StoreError> {
        let mut messages = render_history(self.log.events());
        messages.push(ChatMessage::User {
            content: format!("{ASIDE}{}", question.trim()),
        });
        // Words are wanted: no constraint holds this reply to a tool call.
        let mut client = self.client.clone();
        client.set_constraint(None);
        let body = client.request_body(&messages, self.calling.request_tools());
        let mut ignore = |_: StreamDelta| {};
        let reply = tokio::select! {
            reply = client.complete_body(body, "aside", &mut ignore) => Some(reply),
            _ = cancel.cancelled() => None,
        };
        let response = match reply {
            None => return Ok(None),
            Some(Ok(response)) => response,
            Some(Err(err)) => return Ok(Some(Err(err))),
        };
        let mut answer = response.text.trim().to_string();
        if answer.is_empty() && !response.tool_calls.is_empty() {
            let names: Vec<&str> = response
                .tool_calls
                .iter()
                .map(|call| call.function.name.as_str())
                .collect();
            answer = format!(
                "(the model answered with a tool call, {}, not in words; nothing was run)",
                names.join(", ")
            );
        }
        if let Some(masker) = self.log.masker() {
            answer = masker.mask(&answer);
        }
        let usage = response.usage.unwrap_or_default();
        self.add_to_totals(&usage);
        self.append(
            observer,
            Source::Environment,
            EventBody::SideQuestion(SideQuestion {
                question: question.trim().to_string(),
                answer: answer.clone(),
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                cached_tokens: usage.cached_tokens,
                destination: wright_llm::destination(&client.config().base_url),
            }),
        )?;
        self.log.wait_sync().await?;
        Ok(Some(Ok(answer)))
    }
}

/// What the workspace's making waits for: done, or why it failed (in a mutex, which
/// makes it `Sync` as the conversation must be; it is only ever taken whole).
pub(super) type Pending =
    std::sync::Mutex<Pin<Box<dyn Future<Output = Result<(), String>> + Send>>>;

impl Conversation {
    /// Sets what the workspace waits for before the agent may act in it (see the
    /// module's docs): awaited once, after the next reply arrives.
    pub fn wait_for_workspace(
        &mut self,
        ready: impl Future<Output = Result<(), String>> + Send + 'static,
    ) {
        self.workspace_ready = Some(std::sync::Mutex::new(Box::pin(ready)));
    }

    /// Waits for the workspace, if it is still being made: `Some` when the run ended
    /// there (it could not be made, or the user stopped the run).
    pub(super) async fn workspace_made(
        &mut self,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<Option<Outcome>, StoreError> {
        let Some(pending) = self.workspace_ready.take() else {
            return Ok(None);
        };
        let pending = pending.into_inner().unwrap_or_else(|p| p.into_inner());
        let made = tokio::select! {
            made = pending => made,
            () = cancel.cancelled() => return self.interrupted(observer).map(Some),
        };
        let Err(message) = made else {
            return Ok(None);
        };
        self.fail(observer, message, |message| StopReason::ToolFailed {
            tool: StopReason::WORKSPACE.to_string(),
            message,
        })
        .map(Some)
    }

    /// Ends the run as failed: `message` logged as an error first, then the end, with
    /// the stop reason `stop` makes of it.
    pub(super) fn fail(
        &mut self,
        observer: &mut dyn Observer,
        message: String,
        stop: impl FnOnce(String) -> StopReason,
    ) -> Result<Outcome, StoreError> {
        self.append(
            observer,
            Source::Environment,
            EventBody::Error {
                message: message.clone(),
            },
        )?;
        self.end(observer, AgentState::Failed, stop(message), None)
    }
}
