//! The strategy interface: each piece of help the loop gives a model (a nudge, a note, a
//! `finish` sent back, a request narrowed, the work checked) is one `Strategy` that owns
//! its own state and is asked, in the order strategies were registered, at the loop's
//! decision points: shaping a request, a reply without a tool call, a call written for
//! another tool, before a call, its arguments, just before it runs, a call's result, after
//! it ran, at `finish`, after a step. Each gets a narrow context (the log read-only, the
//! tools, the client, the workspace, a way to log an event, a command run in the
//! workspace's root), never the conversation itself (inside core, `StopHooks` alone runs
//! the loop's own `Stop` hooks, to be asked in its place among the others).
//!
//! Guarantees: every decision reaches the model through an event of the log (a message,
//! an observation's text), appended by the loop before it takes effect. `absorb` sees
//! every event once, in order, before any hook is asked, so a strategy whose state is a
//! fold over the log (all but two) decides after a resume or a fork as the uninterrupted
//! conversation would; per-run latches reset where a run starts (`starts_a_run`). The two
//! exceptions keep their state for the process, as the loop did before them, and say so:
//! the review (a chat's undo, which resets it, is not in the log) and the second look
//! (its reviewer's rounds).

pub(crate) mod act_or_finish;
mod assist;
mod finish_after_failure;
mod fixed_note;
mod foreign;
mod narrow;
mod premature_finish;
mod retest;
mod review;
mod second_look;
mod stuck;
mod test_edits;

pub use act_or_finish::ActOrFinish;
pub use assist::AssistWhenNeeded;
pub use finish_after_failure::FinishAfterFailure;
pub use fixed_note::FixedNote;
pub use foreign::ForeignCalls;
pub use narrow::Narrowing;
pub use premature_finish::PrematureFinish;
pub(crate) use retest::edits_code;
pub(crate) use retest::passed_before_finish;
pub use retest::Retest;
pub use review::ReviewChanges;
pub use second_look::SecondLookAtFinish;
pub(crate) use second_look::StopHooks;
pub use stuck::StuckCheck;
pub use test_edits::TestEditNote;

use crate::agent::Conversation;
use crate::agent::Observer;
use crate::store::StoreError;
use serde_json::Value;
use wright_llm::constrain::ActiveConstraint;
use wright_llm::Client;
use wright_protocol::AgentState;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::StopReason;
use wright_protocol::SwitchReason;
use wright_tools::Toolbox;
use wright_tools::Workspace;

/// One piece of help, asked at each of the loop's decision points; every hook defaults to
/// doing nothing.
#[async_trait::async_trait]
pub trait Strategy: Send + Sync {
    /// Its name, to find it again (`Conversation::remove_strategy`).
    fn name(&self) -> &'static str;

    /// The strategy itself, for a front end that talks to it between runs (see
    /// `Conversation::strategy_mut`); `None` for most.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }

    /// Takes in one event of the log (each once, in order, before any hook below runs):
    /// the only way a strategy's state changes.
    fn absorb(&mut self, event: &Event) {
        let _ = event;
    }

    /// The constraint this step's request is sent with instead of the client's own, when
    /// it must be narrowed. The first strategy that says one wins.
    fn shape_request(&mut self, view: &View<'_>) -> Option<ActiveConstraint> {
        let _ = view;
        None
    }

    /// A reply with no tool call (and none that could not be read): sent back, ends the
    /// run, or left to the loop (in a chat it is the answer).
    fn without_call(&mut self, view: &View<'_>, text: &str) -> Unanswered {
        let _ = (view, text);
        Unanswered::Pass
    }

    /// A call written for another tool, to run as that tool's call (said in its result).
    /// The first strategy that says one wins; the others see the call as rerouted.
    fn reroute(&mut self, view: &View<'_>, call: &Call<'_>) -> Option<wright_tools::Rerouted> {
        let _ = (view, call);
        None
    }

    /// Why a call's arguments, read and coerced to its tool's schema, are not run (words
    /// for the model), if they are not.
    fn check_arguments(&mut self, view: &View<'_>, call: &Call<'_>) -> Option<String> {
        let _ = (view, call);
        None
    }

    /// A call about to run (its action logged, its tool known, its arguments read): it
    /// runs, or is refused with words for the model.
    fn before_call(&mut self, view: &View<'_>, call: &Call<'_>) -> BeforeCall {
        let _ = (view, call);
        BeforeCall::Run
    }

    /// A call about to run, after it was asked about and its hooks let it: the last look
    /// at the workspace before it changes.
    fn before_run(&mut self, view: &View<'_>, call: &Call<'_>) {
        let _ = (view, call);
    }

    /// A call that ran without error and did not end the run, its observation logged:
    /// what the strategy runs and logs after it (the check after an edit).
    async fn after_call(
        &mut self,
        cx: &mut Context<'_>,
        call: &Call<'_>,
    ) -> Result<(), StoreError> {
        let _ = (cx, call);
        Ok(())
    }

    /// Words added (on a line of their own) to the result of a call that ran, before its
    /// observation is logged.
    fn annotate(&mut self, view: &View<'_>, call: &Call<'_>, ran: Ran) -> Option<String> {
        let _ = (view, call, ran);
        None
    }

    /// A `finish` the check (if any) let through: it goes on to the next strategy, is
    /// sent back, or ends the run.
    async fn at_finish(
        &mut self,
        cx: &mut Context<'_>,
        finish: &Finish,
    ) -> Result<AtFinish, StoreError> {
        let _ = (cx, finish);
        Ok(AtFinish::Continue)
    }

    /// After a step's results are logged: the run goes on, the model is told something,
    /// or it gives up.
    fn after_step(&mut self, view: &View<'_>, step: u32) -> AfterStep {
        let _ = (view, step);
        AfterStep::Continue
    }
}

/// A call as the hooks see it: the tool that runs (after any reroute) and its arguments.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub call_id: &'a str,
    pub tool: &'a str,
    pub arguments: &'a Value,
}

/// How a call that ran came out, as `annotate` is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ran {
    /// Without error.
    Fine,
    /// The tool refused the call as the model made it (text not found, a bad path).
    Refused,
}

/// A `finish` call at the strategies.
#[derive(Debug, Clone)]
pub struct Finish {
    pub call_id: String,
    /// Whether wright's own check of the work ran and passed before this strategy was
    /// asked (see `Retest`, asked first).
    pub check_passed: bool,
}

/// What a reply without a tool call comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum Unanswered {
    /// Not this strategy's business.
    Pass,
    /// Logged as a message for the model; the run goes on.
    SendBack(String),
    /// The run stops, with this reason and the reply as its summary.
    End(StopReason),
}

/// What a call comes to before it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeCall {
    Run,
    /// Not run: these words are its result.
    Refuse(String),
}

/// What a `finish` comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum AtFinish {
    Continue,
    /// Not taken: these words are its result.
    SendBack(String),
    /// Not taken, and the run ends (not finished) with `stop`.
    End {
        said: String,
        stop: StopReason,
    },
}

/// What the run does after a step.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterStep {
    Continue,
    /// Logged as a message for the model; the run goes on.
    Say(String),
    /// This model cannot go on: the next one of the fallback chain takes over (told
    /// `reason` and `detail`), or, when there is none, the run ends in `state` with `stop`.
    GiveUp {
        reason: SwitchReason,
        detail: String,
        state: AgentState,
        stop: StopReason,
    },
}

/// Whether `event` starts a run (`proceed`): what per-run latches reset at.
pub fn starts_a_run(event: &Event) -> bool {
    matches!(
        &event.body,
        EventBody::State {
            state: AgentState::Running,
            confirm: Some(_),
            ..
        }
    )
}

/// What a strategy may read of the conversation.
pub struct View<'a> {
    pub(crate) conversation: &'a Conversation,
    /// Whether wright's own check of the work is on (see `Retest`).
    pub(crate) checks: bool,
}

impl View<'_> {
    /// The log so far.
    pub fn events(&self) -> &[Event] {
        self.conversation.events()
    }

    pub fn tools(&self) -> &Toolbox {
        &self.conversation.tools
    }

    pub fn client(&self) -> &Client {
        self.conversation.client()
    }

    /// The workspace the tools work in, when the front end gave it.
    pub fn workspace(&self) -> Option<&Workspace> {
        self.conversation.workspace.as_ref()
    }

    /// The user's task: their first message.
    pub fn task(&self) -> String {
        self.conversation.task()
    }

    /// That wright's own check passes now and what is left to do, when there is a check
    /// and it passes (see `Retest`).
    pub fn check_passes_note(&self) -> Option<String> {
        self.checks
            .then(|| retest::passes_now_note(self.events()))
            .flatten()
    }
}

/// What a strategy may read and log while it decides.
pub struct Context<'a> {
    pub(crate) conversation: &'a mut Conversation,
    pub(crate) observer: &'a mut dyn Observer,
    /// The run's own cancellation: the user's, or its time budget's.
    pub(crate) cancel: &'a tokio_util::sync::CancellationToken,
    pub(crate) checks: bool,
}

impl Context<'_> {
    pub fn view(&self) -> View<'_> {
        View {
            conversation: self.conversation,
            checks: self.checks,
        }
    }

    /// Runs `command` in the terminal, from the workspace's root, in a bash of its own:
    /// its output (the exit note taken off) and exit code; `None` when there is no
    /// terminal or the run was cancelled (by the user or its time budget).
    pub async fn run_in_root(&mut self, command: &str) -> Option<(String, Option<i32>)> {
        self.conversation
            .run_in_root(command, self.observer, self.cancel)
            .await
    }

    /// The user's cancellation of the run (Ctrl-C), for work a strategy waits on.
    pub fn cancel_token(&self) -> tokio_util::sync::CancellationToken {
        self.conversation.user_cancel_token()
    }

    /// Appends an event (shown to the observer once it is on disk).
    pub fn log(&mut self, source: Source, body: EventBody) -> Result<(), StoreError> {
        self.conversation.append_event(self.observer, source, body)
    }
}

/// The strategies of a conversation, in the order they are asked, each with how far into
/// the log it has read.
#[derive(Default)]
pub(crate) struct Strategies {
    list: Vec<(Box<dyn Strategy>, usize)>,
}

impl Strategies {
    /// Asked after those already there; one of the same name is replaced in its place.
    /// Either way it reads the whole log before it is first asked.
    pub(crate) fn add(&mut self, strategy: Box<dyn Strategy>) {
        match self
            .list
            .iter()
            .position(|(s, _)| s.name() == strategy.name())
        {
            Some(at) => self.list[at] = (strategy, 0),
            None => self.list.push((strategy, 0)),
        }
    }

    pub(crate) fn remove(&mut self, name: &str) {
        self.list.retain(|(s, _)| s.name() != name);
    }

    /// The strategy named `name`, caught up with `events`.
    pub(crate) fn named(&mut self, name: &str, events: &[Event]) -> Option<&mut dyn Strategy> {
        let at = self.list.iter().position(|(s, _)| s.name() == name)?;
        Some(self.caught_up_at(at, events))
    }

    /// Whether wright's own check of the work is on: `Retest` is there and on.
    pub(crate) fn checks(&mut self) -> bool {
        self.list
            .iter_mut()
            .find(|(s, _)| s.name() == Retest::NAME)
            .and_then(|(s, _)| s.as_any_mut()?.downcast_mut::<Retest>())
            .is_some_and(|retest| retest.is_on())
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// The strategy at `at`, caught up with `events` (the log so far).
    pub(crate) fn caught_up_at(&mut self, at: usize, events: &[Event]) -> &mut dyn Strategy {
        let (strategy, seen) = &mut self.list[at];
        for event in events.get(*seen..).unwrap_or_default() {
            strategy.absorb(event);
        }
        *seen = events.len();
        strategy.as_mut()
    }
}
