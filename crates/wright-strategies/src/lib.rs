//! The help wright gives a model, one `Strategy` each (the trait and the loop that asks
//! them are `wright_core::strategy`): a `finish` sent back, a nudge out of a loop, a
//! request narrowed, a note after an edit, the work checked and reviewed before `finish`.
//! This crate uses only wright-core's public interface; whoever builds a conversation
//! calls `register`, then sets each piece through `Help`.
//!
//! Guarantees: every decision reaches the model through an event of the log, and each
//! strategy's state is a fold over the log (those that keep some for the process say so
//! in their own docs), so a resumed or forked conversation decides as the uninterrupted
//! one would.
//!
//! Also the workspace analysis the help reads: the map of the workspace (`map`: its files,
//! languages, test command and last change) that the front end puts in a new
//! conversation's opening.

mod account;
mod act_or_finish;
mod apart;
mod assist;
mod file_versions;
mod finish_after_failure;
mod first_look;
mod fixed_note;
mod foreign;
pub mod map;
mod narrow;
mod premature_finish;
mod repeated_look;
mod retest;
mod review;
mod second_look;
mod stuck;
mod test_edits;
mod work_done;

pub use account::claims_change;
pub use account::AccountAtFinish;
pub use act_or_finish::ActOrFinish;
pub use act_or_finish::NUDGE;
pub use assist::AssistWhenNeeded;
pub use file_versions::FileVersions;
pub use finish_after_failure::FinishAfterFailure;
pub use first_look::AfterFailure;
pub use first_look::FirstLook;
pub use first_look::FIRST_LOOK_CALL;
pub use fixed_note::FixedNote;
pub use foreign::ForeignCalls;
pub use narrow::Narrowing;
pub use premature_finish::PrematureFinish;
pub use repeated_look::RepeatedLook;
pub use retest::check_passes_note;
pub use retest::edits_code;
pub use retest::Retest;
pub use review::ReviewChanges;
pub use second_look::SecondLookAtFinish;
pub use stuck::StuckCheck;
pub use test_edits::TestEditNote;
pub use work_done::WorkDone;
pub use work_done::TAKEN_AS_FINISH;

use std::sync::Arc;
use wright_core::second_look::Reviewer;
use wright_core::strategy::StopHooks;
use wright_core::strategy::Strategy;
use wright_core::Conversation;
use wright_core::Inspector;
use wright_protocol::Review;

/// The strategies a conversation is asked, in this order (the loop's own `StopHooks` in
/// its place among them); each off or empty until `Help` sets it where it has a setting.
fn defaults() -> Vec<Box<dyn Strategy>> {
    vec![
        // Before the first step: the first look, and what follows a failing one.
        Box::new(FirstLook::default()),
        // After a first look that passed: versions of the file the task is about.
        Box::new(FileVersions::off()),
        // Once a kept version passes, only `finish`: asked before the reroutes and the
        // narrowing, so its constraint and its reroute win.
        Box::new(WorkDone::off()),
        Box::new(ForeignCalls),
        Box::new(PrematureFinish::default()),
        Box::new(Narrowing),
        Box::new(TestEditNote::default()),
        Box::new(FixedNote),
        // A view or a command made again: what is next, before the loop is stuck.
        Box::new(RepeatedLook::off()),
        // At `finish`, in this order; the setters put theirs in these places (a strategy
        // added under a name already there replaces it in place). wright's own check
        // comes first: the others are told whether it passed.
        Box::new(Retest::default()),
        // The change read by wright and set beside the model's words.
        Box::new(AccountAtFinish::off()),
        Box::new(ReviewChanges::default()),
        Box::new(FinishAfterFailure::off()),
        Box::new(StopHooks),
        Box::new(SecondLookAtFinish::default()),
        // A reply without a call: `set_require_finish` turns it on.
        Box::new(ActOrFinish::off()),
        Box::new(StuckCheck::default()),
    ]
}

/// Gives `conversation` the help, in its order, each piece as it starts (those already
/// there are replaced).
pub fn register(conversation: &mut Conversation) {
    let strategies = defaults();
    for strategy in &strategies {
        conversation.remove_strategy(strategy.name());
    }
    for strategy in strategies {
        conversation.add_strategy(strategy);
    }
}

/// The settings of the help, on a conversation that `register` gave it to.
pub trait Help {
    /// Reviews the agent's changes with `inspector` before accepting `finish`.
    fn set_inspector(&mut self, inspector: Box<dyn Inspector>);

    /// `run` mode: the task ends only with `finish` (a reply without a tool call is sent
    /// back once, and a second stops the run); in chat a plain answer ends the turn.
    fn set_require_finish(&mut self, require: bool);

    /// Whether the first look's failing command is run again after edits and before
    /// `finish` (on unless turned off; see `Retest`).
    fn retest(&mut self, on: bool);

    /// Has `reviewer` look at the change at each `finish` (after the test-integrity
    /// review); its findings go back to the model at most `rounds` times.
    fn set_reviewer(&mut self, reviewer: Arc<dyn Reviewer>, rounds: u32);

    /// Reviews the changes as they are now (after the user reverted some, say): the
    /// earlier review no longer holds. Returns it, `None` when nothing is left to say;
    /// suspicious changes made from now on are sent back again.
    fn review_again(&mut self) -> Option<Review>;

    /// Runs `command` in the terminal before the first step of the next run, unless the
    /// conversation has had its first look already (see `FirstLook`).
    fn look_first(&mut self, command: String);

    /// Whether each `finish` is checked against the change as git reads it (see
    /// `AccountAtFinish`).
    fn account(&mut self, on: bool);

    /// Whether the run ends at the next call once a version wright kept passes (see
    /// `WorkDone`).
    fn stop_when_done(&mut self, on: bool);

    /// Whether, when the first look passes, versions of the file the task is about are
    /// asked for and kept with a check of the task (see `FileVersions`).
    fn try_file_versions(&mut self, on: bool);

    /// Whether a view or a command made again this run is told what comes next (see
    /// `RepeatedLook`).
    fn next_look(&mut self, on: bool);

    /// Whether the model is asked apart which line causes the first look's failure.
    fn read_first_failure(&mut self, on: bool);

    /// Whether versions of the first look's failing code are asked for and tried.
    fn try_candidates(&mut self, on: bool);
}

impl Help for Conversation {
    fn set_inspector(&mut self, inspector: Box<dyn Inspector>) {
        self.add_strategy(Box::new(ReviewChanges::new(inspector)));
    }

    fn set_require_finish(&mut self, require: bool) {
        match require {
            true => {
                self.add_strategy(Box::new(ActOrFinish::default()));
                self.add_strategy(Box::new(FinishAfterFailure::default()));
            }
            false => {
                self.add_strategy(Box::new(ActOrFinish::off()));
                self.add_strategy(Box::new(FinishAfterFailure::off()));
            }
        }
    }

    fn retest(&mut self, on: bool) {
        match on {
            true => self.add_strategy(Box::new(Retest::default())),
            false => self.add_strategy(Box::new(Retest::off())),
        }
    }

    fn set_reviewer(&mut self, reviewer: Arc<dyn Reviewer>, rounds: u32) {
        self.add_strategy(Box::new(SecondLookAtFinish::new(reviewer, rounds)));
    }

    fn review_again(&mut self) -> Option<Review> {
        let events = self.events().to_vec();
        self.strategy_mut::<ReviewChanges>(ReviewChanges::NAME)?
            .again(&events)
    }

    fn account(&mut self, on: bool) {
        match on {
            true => self.add_strategy(Box::new(AccountAtFinish::default())),
            false => self.add_strategy(Box::new(AccountAtFinish::off())),
        }
    }

    fn stop_when_done(&mut self, on: bool) {
        match on {
            true => self.add_strategy(Box::new(WorkDone::default())),
            false => self.add_strategy(Box::new(WorkDone::off())),
        }
    }

    fn try_file_versions(&mut self, on: bool) {
        match on {
            true => self.add_strategy(Box::new(FileVersions::default())),
            false => self.add_strategy(Box::new(FileVersions::off())),
        }
    }

    fn next_look(&mut self, on: bool) {
        match on {
            true => self.add_strategy(Box::new(RepeatedLook::default())),
            false => self.add_strategy(Box::new(RepeatedLook::off())),
        }
    }

    fn look_first(&mut self, command: String) {
        if let Some(first_look) = self.strategy_mut::<FirstLook>(FirstLook::NAME) {
            first_look.look(command);
        }
    }

    fn read_first_failure(&mut self, on: bool) {
        if let Some(first_look) = self.strategy_mut::<FirstLook>(FirstLook::NAME) {
            first_look.after_failure().reading = on;
        }
    }

    fn try_candidates(&mut self, on: bool) {
        if let Some(first_look) = self.strategy_mut::<FirstLook>(FirstLook::NAME) {
            first_look.after_failure().candidates = on;
        }
    }
}
