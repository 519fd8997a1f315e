//! Signals that stop a run: Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal went away).
//! Each stops the run after the step in flight is logged, with the signal named in the
//! log's reason, so a run ended from outside reads `stopped`, never `running`. A second
//! Ctrl-C quits at once. A closed output pipe (the reader of `wright run … | head` went
//! away) stops the run the same way, quietly (exit 141, as SIGPIPE).

use std::sync::atomic::AtomicU8;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use tokio::signal::unix::signal;
use tokio::signal::unix::SignalKind;
use tokio_util::sync::CancellationToken;

/// What was received, once the run is over.
pub struct Received(Arc<AtomicU8>);

impl Received {
    /// The exit status the signal calls for (128 + its number), if one came.
    pub fn received(&self) -> Option<u8> {
        match self.0.load(Ordering::SeqCst) {
            0 => None,
            code => Some(code),
        }
    }
}

/// Cancels `cancel` on the first of the signals, with `reason` set first.
pub fn watch(cancel: CancellationToken, reason: Arc<Mutex<Option<String>>>) -> Received {
    let code = Arc::new(AtomicU8::new(0));
    let seen = code.clone();
    // Watched from now on, before the first line is written.
    let closed = crate::screen::watch_closed_pipe();
    tokio::spawn(async move {
        let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            return;
        };
        let (why, status) = tokio::select! {
            _ = tokio::signal::ctrl_c() => ("interrupted by the user", 130),
            _ = term.recv() => ("stopped by SIGTERM", 143),
            _ = hup.recv() => ("stopped by SIGHUP (the terminal closed)", 129),
            _ = closed => (
                "stopped: wright's output was closed (the reading end of its pipe went away)",
                crate::screen::CLOSED_PIPE_STATUS,
            ),
        };
        if let Ok(mut slot) = reason.lock() {
            *slot = Some(why.to_string());
        }
        seen.store(status, Ordering::SeqCst);
        if status == 130 {
            tell!(
                "\nwright: stopping after logging the current step (Ctrl-C again to quit at once)"
            );
        }
        cancel.cancel();
        if status == 130 && tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(130);
        }
    });
    Received(code)
}

/// For a chat: SIGTERM and SIGHUP end it (a turn in flight is stopped first, with the
/// signal named), whatever it is doing.
pub struct Leaving {
    code: Arc<AtomicU8>,
    requested: CancellationToken,
    /// The turn in flight: its token and where its reason goes.
    turn: Arc<Mutex<Option<Turn>>>,
}

type Turn = (CancellationToken, Arc<Mutex<Option<String>>>);

/// While alive, a signal stops this turn.
pub struct TurnStops(Arc<Mutex<Option<Turn>>>);

impl Drop for TurnStops {
    fn drop(&mut self) {
        if let Ok(mut turn) = self.0.lock() {
            *turn = None;
        }
    }
}

impl Leaving {
    pub fn watch() -> Self {
        let code = Arc::new(AtomicU8::new(0));
        let requested = CancellationToken::new();
        let turn: Arc<Mutex<Option<Turn>>> = Arc::default();
        let (seen, asked, current) = (code.clone(), requested.clone(), turn.clone());
        tokio::spawn(async move {
            let (Ok(mut term), Ok(mut hup)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) else {
                return;
            };
            let (why, status) = tokio::select! {
                _ = term.recv() => ("stopped by SIGTERM", 143),
                _ = hup.recv() => ("stopped by SIGHUP (the terminal closed)", 129),
            };
            seen.store(status, Ordering::SeqCst);
            if let Some((token, reason)) = current.lock().ok().and_then(|t| t.clone()) {
                if let Ok(mut slot) = reason.lock() {
                    *slot = Some(why.to_string());
                }
                token.cancel();
            }
            asked.cancel();
        });
        Self {
            code,
            requested,
            turn,
        }
    }

    /// Resolves once a signal asked the chat to end.
    pub async fn requested(&self) {
        self.requested.cancelled().await;
    }

    pub fn code(&self) -> Option<u8> {
        match self.code.load(Ordering::SeqCst) {
            0 => None,
            code => Some(code),
        }
    }

    /// Makes a signal stop the turn that `cancel` stops, until the result is dropped.
    pub fn stops(
        &self,
        cancel: CancellationToken,
        reason: Arc<Mutex<Option<String>>>,
    ) -> TurnStops {
        if let Ok(mut turn) = self.turn.lock() {
            *turn = Some((cancel, reason));
        }
        TurnStops(self.turn.clone())
    }
}

/// The first of Ctrl-C, SIGTERM and SIGHUP, once it comes: the reason a run stopped by
/// it logs, and the exit status it calls for (for a program that serves others, whose
/// runs each stop after their step).
pub async fn first_stop_signal() -> (&'static str, u8) {
    let (Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        // Signals cannot be watched: none ever comes.
        return std::future::pending().await;
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => ("interrupted by the user", 130),
        _ = term.recv() => ("stopped by SIGTERM", 143),
        _ = hup.recv() => ("stopped by SIGHUP (the terminal closed)", 129),
    }
}
