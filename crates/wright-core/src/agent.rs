//! The loop: render the history, ask the model, log its reply, run each tool call (logged
//! before it runs, its observation after), repeat until `finish`, a reply without tool
//! calls, a limit, an interruption or an error the model cannot fix.

mod calls;
mod confirming;
mod fallback;
mod lifecycle;
mod send;
mod strategies;
mod teach;
mod types;

pub use fallback::switch_reason;
pub use fallback::Alternate;
pub use lifecycle::Permitted;
pub use lifecycle::Served;
pub use lifecycle::StepSnapshot;
pub use send::Aside;
pub use send::AsideSender;
pub use send::ASIDE;
pub(crate) use types::run_watched;
use types::Confirmation;
use types::Interrupt;
pub use types::Limits;
pub use types::Observer;
pub use types::Opening;
pub use types::Outcome;
pub use types::StepGuard;
use types::Teaching;
pub use types::Totals;
use types::Window;

use crate::history::render_history;
use crate::prompt::text_tools_section_as;
use crate::prompt::CallFormat;
use crate::store::EventLog;
use crate::store::StoreError;
use serde_json::Value;
use std::path::Path;
use tokio_util::sync::CancellationToken;
use wright_llm::Client;
use wright_llm::Response;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::Start;
use wright_protocol::StopReason;
use wright_protocol::ToolCalling;
use wright_protocol::LOG_FORMAT_VERSION;
use wright_tools::Toolbox;

pub struct Conversation {
    log: EventLog,
    client: Client,
    pub(crate) tools: Toolbox,
    /// How the model makes its calls, and the `tools` field each request carries.
    pub(crate) calling: Calling,
    step: u32,
    totals: Totals,
    /// What the loop knows of the context window and how full the history makes it.
    window: Window,
    /// The user's own cancellation, and why, to tell it from the time budget's.
    interrupt: Interrupt,
    /// Checked before each step, after the budgets.
    guards: Vec<Box<dyn StepGuard>>,
    /// The workspace, for quoting the lines a failure names when the model loops.
    pub(crate) workspace: Option<wright_tools::Workspace>,
    /// What the workspace's making still waits for (see `ready`): awaited before anything
    /// of the first reply runs.
    workspace_ready: Option<send::Pending>,
    /// The files kept after each step that may have changed them.
    snapshots: lifecycle::Snapshots,
    /// When and how the user is asked before an action runs (see `confirming`).
    confirmation: Confirmation,
    /// What the repository teaches the agent: its instructions, hooks and setup script (see `teach`).
    teaching: Teaching,
    /// The profile in use and those to go on with (see `fallback`).
    fallback: fallback::Chain,
    /// The help given to the model, asked in order at the loop's decision points (see
    /// `crate::strategy`).
    strategies: crate::strategy::Strategies,
}

/// How the model makes its calls, and the `tools` field each request carries for it.
pub(crate) enum Calling {
    /// Native calls: the schemas as the conversation started (its log's, on resume), so
    /// every request carries the same bytes.
    Native(Vec<Value>),
    /// Calls written in the text: the requests carry no tools (the system prompt has them).
    Text,
}

impl Calling {
    pub(crate) fn mode(&self) -> ToolCalling {
        match self {
            Calling::Native(_) => ToolCalling::Native,
            Calling::Text => ToolCalling::Text,
        }
    }

    pub(crate) fn request_tools(&self) -> &[Value] {
        match self {
            Calling::Native(schemas) => schemas,
            Calling::Text => &[],
        }
    }
}

/// Condense before a request passes 75 % of the window.
pub const DEFAULT_CONDENSE_AT: f64 = 0.75;

/// Tokens kept free for the model's reply.
pub(crate) fn reply_reserve(window: u64) -> u64 {
    (window / 8).min(2048)
}

/// Before any reply says otherwise: one token per three bytes of JSON, on the high side.
const INITIAL_TOKENS_PER_BYTE: f64 = 1.0 / 3.0;

enum StepEnd {
    Continue,
    Done(Box<Outcome>),
}

use send::Fitted;

impl StepEnd {
    fn done(outcome: Outcome) -> Self {
        StepEnd::Done(Box::new(outcome))
    }
}

impl Conversation {
    /// Starts a new conversation whose log is created at `log_path`.
    pub fn create(
        id: &str,
        log_path: &Path,
        workspace: &str,
        client: Client,
        tools: Toolbox,
        opening: Opening,
        tool_calling: ToolCalling,
    ) -> Result<Self, StoreError> {
        let Opening {
            system_prompt,
            workspace_map,
            last_change,
            secrets,
            instructions,
            skills,
            group,
            agent,
        } = opening;
        let mut log = EventLog::create(log_path)?;
        let schemas = tools.schemas();
        let (system_prompt, calling) = match tool_calling {
            ToolCalling::Native => (system_prompt, Calling::Native(schemas.clone())),
            ToolCalling::Text => {
                // The example call as the server will hold replies to, if it does.
                let format = match &client.config().constraint {
                    Some(constraint) if constraint.bare_json() => CallFormat::Json {
                        reasoning: constraint.reasoning(),
                    },
                    _ => CallFormat::Tagged,
                };
                (
                    system_prompt + &text_tools_section_as(&schemas, format),
                    Calling::Text,
                )
            }
        };
        log.append(
            Source::Environment,
            EventBody::Start(Start {
                version: LOG_FORMAT_VERSION,
                conversation: id.to_string(),
                workspace: workspace.to_string(),
                model: client.config().model.clone(),
                base_url: client.config().base_url.clone(),
                system_prompt,
                tools: schemas,
                tool_calling,
                forked_from: None,
                destination: Some(wright_llm::destination(&client.config().base_url)),
                workspace_map,
                last_change,
                secrets,
                instructions,
                skills,
                group,
                agent,
            }),
        )?;
        Ok(Self::assemble(log, client, tools, calling))
    }

    /// A conversation over `log` with nothing run yet in this process.
    fn assemble(log: EventLog, client: Client, tools: Toolbox, calling: Calling) -> Self {
        Self {
            log,
            client,
            tools,
            calling,
            step: 0,
            totals: Totals::default(),
            window: Window::default(),
            interrupt: Interrupt::default(),
            guards: Vec::new(),
            workspace: None,
            workspace_ready: None,
            snapshots: lifecycle::Snapshots::default(),
            confirmation: Confirmation::default(),
            teaching: Teaching::default(),
            fallback: fallback::Chain::default(),
            strategies: strategies::defaults(),
        }
    }

    /// Runs a task to its end. Only a failure to write the log is an `Err`: everything
    /// else, model errors included, is logged and reported in the `Outcome`.
    pub async fn run(
        &mut self,
        task: &str,
        limits: Limits,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<Outcome, StoreError> {
        self.proceed(Some(task), limits, cancel, observer).await
    }

    /// Runs the loop, after adding `message` from the user if there is one (a resumed
    /// conversation may just go on).
    pub async fn proceed(
        &mut self,
        message: Option<&str>,
        limits: Limits,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<Outcome, StoreError> {
        self.interrupt.user_cancel = Some(cancel.clone());
        // An action left waiting is answered first: its observation must follow it.
        let pending = self.confirmation.pending.take();
        if pending.is_none() {
            if let Some(refused) = self.take_message(observer, message).await? {
                return Ok(refused);
            }
        }
        self.append(
            observer,
            Source::Environment,
            EventBody::running(Some(self.confirmation.confirm)),
        )?;
        if let Some(pending) = pending {
            if let Some(outcome) = self.settle_pending(observer, cancel, pending).await? {
                self.log.wait_sync().await?;
                return Ok(outcome);
            }
            if let Some(refused) = self.take_message(observer, message).await? {
                return Ok(refused);
            }
        }
        self.run_setup(observer).await?;
        let started = std::time::Instant::now();
        // The time budget cancels whatever is in flight, as Ctrl-C does — the strategies'
        // work before the first step (the first look, the versions tried) included.
        let budget = cancel.child_token();
        let timer = limits.max_time.map(|max_time| {
            let budget = budget.clone();
            tokio::spawn(async move {
                tokio::time::sleep(max_time).await;
                budget.cancel();
            })
        });
        let run = crate::strategy::RunStart {
            started,
            max_time: limits.max_time,
        };
        self.before_first_step(observer, &budget, &run).await?;
        let first_step = self.step;
        let outcome = loop {
            if let Some(reason) = self.budget_reached(&limits, first_step, started) {
                break self.end(observer, AgentState::Stopped, reason, None)?;
            }
            // Between two steps: the side questions handed in meanwhile.
            self.answer_asides(&budget, observer).await?;
            let end = self.step_once(&budget, observer).await?;
            // While the next request is prepared and in flight (see `restore`: the snapshots).
            self.start_snapshot().await;
            match end {
                StepEnd::Continue => self.log.sync_step().await?,
                StepEnd::Done(outcome) => break *outcome,
            }
        };
        if let Some(timer) = timer {
            timer.abort();
        }
        // The run's files are all kept before anyone commits them.
        self.settle_all_snapshots().await;
        self.log.wait_sync().await?;
        Ok(outcome)
    }

    async fn step_once(
        &mut self,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<StepEnd, StoreError> {
        self.step += 1;
        self.totals.steps = self.step;
        let step = self.step;
        let messages = render_history(self.log.events());
        let body = match self.shaped_constraint() {
            Some(narrowed) => {
                let mut client = self.client.clone();
                client.set_constraint(Some(narrowed));
                client.request_body(&messages, self.calling.request_tools())
            }
            None => self
                .client
                .request_body(&messages, self.calling.request_tools()),
        };
        let body = match self.fit_window(observer, step, body).await? {
            Fitted::Send(body) => body,
            Fitted::Ended(end) => return Ok(end),
        };
        observer.model_request(step);
        let (reply, body_len) = self.send(body, step, cancel, observer).await?;
        let response = match reply {
            None => return self.interrupted(observer).map(StepEnd::done),
            Some(Err(err)) => {
                if let Some(reason) = switch_reason(&err).filter(|_| self.can_switch()) {
                    // The same step again, on the same history, by the next model.
                    self.step -= 1;
                    self.totals.steps = self.step;
                    self.switch_model(observer, step, reason, err.to_string())?;
                    return Ok(StepEnd::Continue);
                }
                let mut outcome = self.fail(observer, err.to_string(), |message| {
                    StopReason::ModelError { message }
                })?;
                outcome.remedy = err.remedy();
                return Ok(StepEnd::done(outcome));
            }
            Some(Ok(response)) => response,
        };
        self.record_usage(observer, step, &response)?;
        if let Some(ended) = self.workspace_made(cancel, observer).await? {
            return Ok(StepEnd::done(ended));
        }
        if let Some(usage) = response.usage.as_ref().filter(|u| u.prompt_tokens > 0) {
            self.window.tokens_per_byte = usage.prompt_tokens as f64 / body_len.max(1) as f64;
        }
        let reply = self.read_calls(response, step);
        if !reply.text.is_empty() || !reply.reasoning.is_empty() || reply.raw.is_some() {
            self.append(
                observer,
                Source::Agent,
                EventBody::Message {
                    text: reply.text.clone(),
                    step: Some(step),
                    reasoning: Some(reply.reasoning.clone()).filter(|r| !r.is_empty()),
                    raw: reply.raw.clone(),
                },
            )?;
        }
        if reply.calls.is_empty() && reply.errors.is_empty() {
            let stop = match self.without_call(&reply.text) {
                crate::strategy::Unanswered::Pass => None,
                crate::strategy::Unanswered::End(stop) => Some(stop),
                crate::strategy::Unanswered::SendBack(text) => {
                    self.tell(observer, step, text)?;
                    return self.after_step(observer, step);
                }
            };
            if let Some(stop) = stop {
                let summary = Some(reply.text).filter(|t| !t.is_empty());
                return self
                    .end(observer, AgentState::Stopped, stop, summary)
                    .map(StepEnd::done);
            }
            // A chat's answer ends the turn, unless a Stop hook refuses it.
            if self.answer_refused(observer, step).await? {
                return self.after_step(observer, step);
            }
            let summary = Some(reply.text).filter(|t| !t.is_empty());
            return self
                .end(
                    observer,
                    AgentState::Finished,
                    StopReason::Answered,
                    summary,
                )
                .map(StepEnd::done);
        }
        let response = Response {
            tool_calls: reply.calls,
            ..Response::default()
        };
        // Read-only calls next to each other run at the same time; anything else alone,
        // in order.
        let calls = &response.tool_calls;
        let mut at = 0;
        while at < calls.len() {
            let together = calls[at..]
                .iter()
                .take_while(|call| self.runs_concurrently(call))
                .count();
            let end = if together > 1 {
                let group = &calls[at..at + together];
                at += together;
                self.run_together(observer, cancel, step, group).await?
            } else {
                at += 1;
                self.run_call(observer, cancel, step, &calls[at - 1])
                    .await?
            };
            if let Some(end) = end {
                return Ok(StepEnd::done(end));
            }
        }
        // The skills the files touched call for, after the step's results.
        self.add_path_skills(observer, &response.tool_calls)?;
        // After the results (a native history allows nothing between a call and its
        // result): what had to be repaired for each call that ran, and what ran.
        for repaired in &reply.repaired {
            let arguments = response
                .tool_calls
                .iter()
                .find(|call| call.id == repaired.call_id)
                .map_or("{}", |call| call.function.arguments.as_str());
            self.tell(observer, step, repaired.note(arguments))?;
        }
        for error in reply.errors {
            self.tell(
                observer,
                step,
                format!("Your tool call could not be read: {error}"),
            )?;
        }
        if reply.dropped > 0 {
            self.tell(observer, step, format!(
                        "Only your first tool call ran; {} not run. Write one call per reply and wait for its result.",
                        if reply.dropped == 1 {
                            "the other one was".to_string()
                        } else {
                            format!("the other {} were", reply.dropped)
                        }
                    ))?;
        }
        self.after_step(observer, step)
    }
}
