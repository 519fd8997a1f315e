//! Stuck detection after each step (see `patterns`): the first time
//! the model loops it is told what it repeats and, when a failure names a place in the
//! workspace, the lines it points at; the second time, with a loop of the same kind, it
//! gives up — the next model of the fallback chain takes over, or the run stops as stuck.
//! What the model was told is read back from the log; a new run or a new model starts
//! untold.

mod patterns;

use wright_core::strategy::starts_a_run;
use wright_core::strategy::AfterStep;
use wright_core::strategy::Strategy;
use wright_core::strategy::View;
use wright_protocol::AgentState;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::StopReason;
use wright_protocol::SwitchReason;

/// How the nudge begins; the pattern's description follows.
pub(crate) const CIRCLES: &str = "You are going in circles: ";

#[derive(Debug, Default)]
pub struct StuckCheck {
    /// The loop the model was last told about, as it was described to it.
    told: Option<String>,
}

impl Strategy for StuckCheck {
    fn name(&self) -> &'static str {
        "stuck"
    }

    fn absorb(&mut self, event: &Event) {
        match &event.body {
            EventBody::Message { text, .. } if event.source == Source::Environment => {
                if let Some(description) = text.strip_prefix(CIRCLES) {
                    self.told = Some(description.to_string());
                }
            }
            EventBody::ModelSwitch(_) => self.told = None,
            _ if starts_a_run(event) => self.told = None,
            _ => {}
        }
    }

    fn after_step(&mut self, view: &View<'_>, _step: u32) -> AfterStep {
        let Some(pattern) = patterns::detect(view.events()) else {
            return AfterStep::Continue;
        };
        if self
            .told
            .as_deref()
            .is_some_and(|told| pattern.told_in(told))
        {
            let detail = pattern.describe();
            return AfterStep::GiveUp {
                reason: SwitchReason::Stuck,
                detail: detail.clone(),
                state: AgentState::Stuck,
                stop: StopReason::Stuck { pattern: detail },
            };
        }
        // The next step: finish, when the check passes now; else the one the last
        // failure points at.
        let next = crate::retest::check_passes_note(view)
            .or_else(|| patterns::next_step(view.events(), view.workspace()?))
            .map(|next| format!("\n{next}"))
            .unwrap_or_default();
        AfterStep::Say(format!(
            "{CIRCLES}{}. Do not repeat it. Read the last result again, then try something different: another command, another file, another hypothesis.{next}",
            pattern.describe()
        ))
    }
}
