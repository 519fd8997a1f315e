//! Fitting a request into the context window before it is sent: condensing when it passes
//! the trigger (aiming well below it, so the next condensation is many steps away), and
//! stopping the run — saying what did not fit, its size against the room, and the fix —
//! when even that is not enough. A request the server would cut is never sent.

use super::*;
use crate::condense::Budget;
use crate::condense::Condensed;
use crate::condense::TooBig;

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
        let forced = std::mem::take(&mut self.condense_requested);
        let window = match (self.context_window, forced) {
            (Some(window), _) => Some(window),
            (None, true) => None,
            (None, false) => return Ok(Fitted::Send(body)),
        };
        let mut needed = self.estimate_tokens(body.len());
        let reserve = window.map_or(0, reply_reserve);
        let ceiling = window.map_or(u64::MAX, |window| window - reserve);
        let trigger = window.map_or(u64::MAX, |window| {
            ((window as f64 * self.condense_at) as u64).min(ceiling)
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
