//! The sandbox's check, awaited where it matters instead of before the run goes on.
//!
//! A confined sandbox is checked by its launcher in report mode (see `Checking`), which
//! takes about as long as starting a sandboxed process. Nothing the model is asked needs
//! the check's answer, so the first model request need not wait for it: `in_background`
//! waits for the verdict on a thread of its own, and the sandbox carries a `Verdict` that
//! every program started in it waits for first (`Sandbox::wrap`).
//!
//! What it guarantees: no program starts in a sandbox whose check has not said yes. If the
//! check refuses, every later start fails with the check's own words (fail closed), and
//! `BackgroundCheck::finish` returns the check's error as it came.

use crate::confine::Report;
use crate::mode::SandboxError;
use crate::sandbox::Checking;
use std::sync::Arc;
use std::sync::Condvar;
use std::sync::Mutex;
use std::thread::JoinHandle;

/// Whether programs may start in a sandbox: yes, no (and why), or not known yet. Clones
/// share one verdict.
#[derive(Debug, Clone)]
pub struct Verdict(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    settled: Condvar,
    notify: tokio::sync::Notify,
}

#[derive(Debug, Clone)]
enum State {
    Pending,
    Yes,
    No(String),
}

impl Verdict {
    /// A sandbox that needs no check (unconfined, or checked as it started).
    pub fn yes() -> Self {
        Self::with(State::Yes)
    }

    fn pending() -> Self {
        Self::with(State::Pending)
    }

    fn with(state: State) -> Self {
        Self(Arc::new(Shared {
            state: Mutex::new(state),
            settled: Condvar::new(),
            notify: tokio::sync::Notify::new(),
        }))
    }

    fn settle(&self, outcome: Result<(), String>) {
        let state = match outcome {
            Ok(()) => State::Yes,
            Err(why) => State::No(why),
        };
        *self.lock() = state;
        self.0.settled.notify_all();
        self.0.notify.notify_waiters();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is a plain value: a panic elsewhere cannot leave it half-written.
        self.0
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn answer(state: &State) -> Option<Result<(), SandboxError>> {
        match state {
            State::Pending => None,
            State::Yes => Some(Ok(())),
            State::No(why) => Some(Err(SandboxError::CheckFailed(why.clone()))),
        }
    }

    /// The answer, if the check has given it.
    pub fn if_in(&self) -> Option<Result<(), SandboxError>> {
        Self::answer(&self.lock())
    }

    /// Waits (blocking the thread) until the check has answered. Quick in practice: the
    /// check takes milliseconds and is under way long before the first program starts.
    pub fn wait(&self) -> Result<(), SandboxError> {
        let mut state = self.lock();
        loop {
            if let Some(answer) = Self::answer(&state) {
                return answer;
            }
            state = self
                .0
                .settled
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// `wait`, without blocking the async runtime's thread.
    pub async fn wait_async(&self) -> Result<(), SandboxError> {
        loop {
            // Registered before the state is read, so a settle in between is not missed.
            let notified = self.0.notify.notified();
            if let Some(answer) = Self::answer(&self.lock()) {
                return answer;
            }
            notified.await;
        }
    }
}

impl Verdict {
    /// A verdict that what holds the `Settler` gives later: for work the sandbox must wait
    /// for besides its check (the agent's clone checked out in it). A `Settler` dropped
    /// without a word settles it as a refusal (fail closed).
    pub fn settled_later() -> (Self, Settler) {
        let verdict = Self::pending();
        let settler = Settler(Some(verdict.clone()));
        (verdict, settler)
    }
}

/// Gives a `Verdict::settled_later` its answer, once.
#[derive(Debug)]
pub struct Settler(Option<Verdict>);

impl Settler {
    /// Yes, or no and why (every later start in a sandbox awaiting it fails with `why`).
    pub fn settle(mut self, outcome: Result<(), String>) {
        if let Some(verdict) = self.0.take() {
            verdict.settle(outcome);
        }
    }
}

impl Drop for Settler {
    fn drop(&mut self) {
        if let Some(verdict) = self.0.take() {
            verdict.settle(Err("stopped before it was ready".to_string()));
        }
    }
}

/// A check whose verdict is awaited on a thread of its own (see the module's docs).
#[derive(Debug)]
pub struct BackgroundCheck {
    thread: Option<JoinHandle<Result<Report, SandboxError>>>,
    verdict: Verdict,
}

impl BackgroundCheck {
    /// Starts waiting for `checking`'s verdict; the returned `Verdict` is settled when it
    /// comes (attach it to the sandbox with `Sandbox::awaiting`).
    pub fn in_background(checking: Checking) -> (Self, Verdict) {
        let verdict = Verdict::pending();
        let settles = verdict.clone();
        let thread = std::thread::Builder::new()
            .name("sandbox-check".into())
            .spawn(move || {
                let result = checking.finish();
                settles.settle(result.as_ref().map(|_| ()).map_err(|err| err.to_string()));
                result
            });
        let thread = match thread {
            Ok(thread) => Some(thread),
            Err(err) => {
                // No thread: no verdict will come, so the sandbox refuses (fail closed).
                verdict.settle(Err(format!("cannot wait for the sandbox's check: {err}")));
                None
            }
        };
        (
            Self {
                thread,
                verdict: verdict.clone(),
            },
            verdict,
        )
    }

    /// Waits for the check: what the sandbox enforces here, or the check's error.
    pub fn finish(mut self) -> Result<Report, SandboxError> {
        self.join()
    }

    fn join(&mut self) -> Result<Report, SandboxError> {
        match self.thread.take() {
            Some(thread) => thread.join().unwrap_or_else(|_| {
                let why = "the sandbox's check stopped without a verdict".to_string();
                self.verdict.settle(Err(why.clone()));
                Err(SandboxError::CheckFailed(why))
            }),
            None => self.verdict.wait().and(Err(SandboxError::CheckFailed(
                "the sandbox's check gave no report".into(),
            ))),
        }
    }
}

impl Drop for BackgroundCheck {
    fn drop(&mut self) {
        // The check's process is in the conversation's cgroup, which its owner removes
        // next: it must be over first.
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_verdict_holds_waiters_until_it_is_settled() {
        let verdict = Verdict::pending();
        let waiter = {
            let verdict = verdict.clone();
            std::thread::spawn(move || verdict.wait())
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!waiter.is_finished(), "a waiter went on before the verdict");
        verdict.settle(Err("no Landlock here".into()));
        let err = waiter.join().unwrap().unwrap_err();
        assert!(err.to_string().contains("no Landlock here"), "{err}");
        // Every later start is refused with the same words.
        assert!(verdict
            .wait()
            .unwrap_err()
            .to_string()
            .contains("no Landlock here"));
    }

    #[tokio::test]
    async fn an_async_waiter_wakes_when_the_verdict_comes() {
        let verdict = Verdict::pending();
        let settles = verdict.clone();
        let waiter = tokio::spawn(async move { verdict.wait_async().await });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        settles.settle(Ok(()));
        waiter.await.unwrap().unwrap();
        assert!(Verdict::yes().wait_async().await.is_ok());
    }

    #[test]
    fn a_verdict_settled_later_holds_until_its_settler_speaks_or_is_dropped() {
        let (verdict, settler) = Verdict::settled_later();
        assert!(verdict.if_in().is_none());
        settler.settle(Ok(()));
        assert!(verdict.wait().is_ok());
        let (verdict, settler) = Verdict::settled_later();
        drop(settler);
        let err = verdict.wait().unwrap_err();
        assert!(err.to_string().contains("stopped before"), "{err}");
    }

    #[test]
    fn a_check_that_ends_settles_the_verdict_and_keeps_its_report() {
        let report = Report {
            landlock: "on".into(),
            ..Report::default()
        };
        let (check, verdict) = BackgroundCheck::in_background(Checking::Done(report.clone()));
        verdict.wait().unwrap();
        assert_eq!(check.finish().unwrap(), report);
    }
}
