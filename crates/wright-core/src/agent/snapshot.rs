//! Keeping the files of each step that may have changed them (for `fork --at`): the front
//! end's snapshot runs on a blocking thread while the next model request is in flight,
//! and is awaited before the next tool call runs and before the run ends.
//!
//! The ordering is what makes a snapshot the files of its step: it starts once the step's
//! last call has run and its observation is logged, so it sees everything the step wrote;
//! it is awaited before the next tool call runs (right after that call's action is logged,
//! before `finish`'s review too), so no tool writes while it reads the tree, and two never
//! run at once; and the run does not end (nor the working copy get committed) while one
//! is still reading. A process the agent left running in the background may still write
//! during one: that is the agent's own doing, and the next step's snapshot sees it.

use super::Conversation;
use std::sync::Arc;

/// Saves the files as they are now, for the step whose file-changing calls were logged
/// from event `first` to event `last` (the last one's observation). Called on a blocking
/// thread; what it could not do is for it to record (a fork then says so).
pub trait StepSnapshot: Send + Sync {
    fn take(&self, first: u64, last: u64);
}

/// The snapshots of one conversation: who takes them, the step's file-changing events
/// so far, and the one still running.
#[derive(Default)]
pub(crate) struct Snapshots {
    taker: Option<Arc<dyn StepSnapshot>>,
    /// The first and last event of this step's calls that may have changed files.
    changed: Option<(u64, u64)>,
    in_flight: Option<tokio::task::JoinHandle<()>>,
}

impl Conversation {
    /// Keeps the files after each step that may have changed them, with `taker`.
    pub fn set_step_snapshot(&mut self, taker: Arc<dyn StepSnapshot>) {
        self.snapshots.taker = Some(taker);
    }

    /// Keeps the files as they are now, after the last event (the user changed them
    /// between turns: chat's /undo), and waits for it.
    pub async fn keep_files_now(&mut self) {
        let last = self.last_event_id();
        self.note_change(last, last);
        self.start_snapshot().await;
        self.settle_snapshot().await;
    }

    /// Notes that the call logged as `action` (its observation: `observation`) may have
    /// changed files.
    pub(super) fn note_change(&mut self, action: u64, observation: u64) {
        let first = self.snapshots.changed.map_or(action, |(first, _)| first);
        self.snapshots.changed = Some((first, observation));
    }

    /// The id of the last event logged.
    pub(super) fn last_event_id(&self) -> u64 {
        self.log.events().last().map_or(0, |e| e.id)
    }

    /// Starts the snapshot of the step that just ended, if it may have changed files.
    pub(super) async fn start_snapshot(&mut self) {
        let Some((first, last)) = self.snapshots.changed.take() else {
            return;
        };
        let Some(taker) = self.snapshots.taker.clone() else {
            return;
        };
        // Never two at once (every call awaits the last one already, so this is at once).
        self.settle_snapshot().await;
        self.snapshots.in_flight =
            Some(tokio::task::spawn_blocking(move || taker.take(first, last)));
    }

    /// Waits for the snapshot in flight, if any. Not cancellable: a snapshot is bounded by
    /// its own deadline, and must not read the tree while a tool writes it.
    pub(super) async fn settle_snapshot(&mut self) {
        if let Some(in_flight) = self.snapshots.in_flight.take() {
            let _ = in_flight.await;
        }
    }
}
