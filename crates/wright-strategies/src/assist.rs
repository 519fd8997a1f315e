//! Help turned on once a model shows it needs it (`[assist]` at `auto`, see
//! `wright_config::assist`): a model whose name and probe did not call for the first look
//! is watched, and when its calls cannot be read (`UNREADABLE_CALLS` in a run, the policy's
//! `Policy::during`) or it was
//! told that it goes in circles, wright runs the tests then — the first look, late — and
//! from there the check of the work (`Retest`) follows each edit, as it does after a first
//! look that failed at the start.
//!
//! Guarantees: the decision is logged as an `assist` event before the tests run, and the
//! tests as wright's own action and observation (the first look's call id, the step they
//! followed), so the history shows them after that step's results and a resumed or forked
//! conversation reads that it was decided and decides nothing again. Everything it decides
//! from is a fold over the log (the unreadable calls and loops since the run started, a
//! first look already there).

use crate::stuck::CIRCLES;
use crate::FIRST_LOOK_CALL;
use wright_config::assist::Policy;
use wright_core::strategy::starts_a_run;
use wright_core::strategy::Call;
use wright_core::strategy::Context;
use wright_core::strategy::Strategy;
use wright_core::StoreError;
use wright_protocol::AssistDecision;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Need;
use wright_protocol::Source;

/// How a reply whose call could not be read is answered (`agent.rs`): what is counted.
const UNREADABLE: &str = "Your tool call could not be read";
/// The first look gets at most this long, late as at the start.
const TIMEOUT_SECS: u64 = 60;

#[derive(Debug)]
pub struct AssistWhenNeeded {
    /// The test command the first look runs.
    command: String,
    /// The pieces the decision turns on, by key (said in the event).
    pieces: Vec<String>,
    /// Calls of this run that could not be read.
    unreadable: u32,
    /// What the model was last told it repeats, this run.
    looped: Option<String>,
    /// A first look is in the log (at the start, or turned on here): nothing to decide.
    looked: bool,
}

impl AssistWhenNeeded {
    pub const NAME: &'static str = "assist";

    /// Watches for the need to run `command` as the first look; `pieces` are what that
    /// turns on, by key.
    pub fn new(command: String, pieces: Vec<String>) -> Self {
        Self {
            command,
            pieces,
            unreadable: 0,
            looped: None,
            looked: false,
        }
    }

    /// Why the model needs help now, if it does: the policy's rule.
    fn need(&self) -> Option<Need> {
        Policy::during(self.unreadable, self.looped.as_deref())
    }
}

#[async_trait::async_trait]
impl Strategy for AssistWhenNeeded {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn absorb(&mut self, event: &Event) {
        match &event.body {
            EventBody::Action { call_id, .. }
                if event.source == Source::Environment && call_id == FIRST_LOOK_CALL =>
            {
                self.looked = true;
            }
            EventBody::Assist(_) => self.looked = true,
            EventBody::Message { text, .. } if event.source == Source::Environment => {
                if text.starts_with(UNREADABLE) {
                    self.unreadable += 1;
                } else if let Some(pattern) = text.strip_prefix(CIRCLES) {
                    self.looped = Some(pattern.to_string());
                }
            }
            _ if starts_a_run(event) => {
                self.unreadable = 0;
                self.looped = None;
            }
            _ => {}
        }
    }

    /// After a call that ran: the step's results are there to follow, so the tests run
    /// now if the model needs them.
    async fn after_call(
        &mut self,
        cx: &mut Context<'_>,
        _call: &Call<'_>,
    ) -> Result<(), StoreError> {
        if self.looked {
            return Ok(());
        }
        let Some(need) = self.need() else {
            return Ok(());
        };
        let Some(tool) = cx
            .view()
            .tools()
            .get("terminal")
            .map(|t| t.name().to_string())
        else {
            return Ok(());
        };
        let step = cx
            .view()
            .events()
            .iter()
            .rev()
            .find_map(|event| match &event.body {
                EventBody::Action { step, .. } if event.source == Source::Agent => Some(*step),
                _ => None,
            })
            .unwrap_or(1);
        self.looked = true;
        cx.log(
            Source::Environment,
            EventBody::Assist(AssistDecision {
                step,
                need,
                pieces: self.pieces.clone(),
            }),
        )?;
        cx.log(
            Source::Environment,
            EventBody::Action {
                step,
                call_id: FIRST_LOOK_CALL.to_string(),
                tool: tool.clone(),
                arguments: serde_json::json!({
                    "command": self.command,
                    "timeout": TIMEOUT_SECS,
                }),
                // wright's own command, in the sandbox: never asked.
                risk: None,
                risk_reason: None,
            },
        )?;
        let (output, exit_code) = match cx.run_in_root(&self.command).await {
            Some(ran) => ran,
            None => ("This call did not finish.".to_string(), None),
        };
        cx.log(
            Source::Environment,
            EventBody::Observation {
                call_id: FIRST_LOOK_CALL.to_string(),
                tool,
                output,
                is_error: exit_code.is_none(),
                exit_code,
            },
        )
    }
}
