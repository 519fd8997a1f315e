//! The only way wright's front end writes to the terminal. Everything it shows may hold
//! what the agent wrote (file contents and names, command output, the model's words), so
//! every piece goes through `wright_protocol::printable` first: cursor movement, erasing,
//! titles, clipboard writes and bidirectional overrides are dropped, newlines and tabs
//! kept. `say!` and `tell!` are `println!` and `eprintln!` with that guarantee.
//!
//! A closed pipe (`wright ls | head -1`) ends wright quietly, as SIGPIPE ends other
//! programs: no panic, no message, exit status 141. While a run is watched for signals
//! (`watch_closed_pipe`), the run is stopped instead, after logging its step, and every
//! later write is dropped.

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use wright_protocol::printable;

/// The exit status of a program ended by SIGPIPE (128 + 13), which a shell reports for
/// one whose reader went away.
pub const CLOSED_PIPE_STATUS: u8 = 141;

/// A write found stdout or stderr closed.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// Someone stops the run when the output closes (instead of ending the process at once).
static WATCHED: AtomicBool = AtomicBool::new(false);
static CLOSED_NOTICE: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Writes `text` to stdout, made printable.
pub fn out(text: &str) {
    write_to(&mut std::io::stdout().lock(), printable(text).as_bytes());
}

/// Writes `text` to stderr, made printable.
pub fn err(text: &str) {
    write_to(&mut std::io::stderr().lock(), printable(text).as_bytes());
}

/// The live area's writes: wright's own controls (`before`: erasing the area, turning
/// autowrap off; `after`: turning it on), around `text` made printable. Only `live` calls
/// it, and only on a terminal.
pub fn err_live(before: &str, text: &str, after: &str) {
    let mut bytes = before.as_bytes().to_vec();
    bytes.extend_from_slice(printable(text).as_bytes());
    bytes.extend_from_slice(after.as_bytes());
    if !bytes.is_empty() {
        write_to(&mut std::io::stderr().lock(), &bytes);
    }
}

fn write_to(stream: &mut dyn Write, bytes: &[u8]) {
    if CLOSED.load(Ordering::SeqCst) {
        return;
    }
    let written = stream.write_all(bytes).and_then(|()| stream.flush());
    if let Err(err) = written {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            closed_pipe();
        }
    }
}

fn closed_pipe() {
    CLOSED.store(true, Ordering::SeqCst);
    if !WATCHED.load(Ordering::SeqCst) {
        std::process::exit(i32::from(CLOSED_PIPE_STATUS));
    }
    CLOSED_NOTICE.notify_one();
}

/// From now on a closed output stops the run (the returned future resolves) instead of
/// ending the process at once.
pub fn watch_closed_pipe() -> impl std::future::Future<Output = ()> {
    WATCHED.store(true, Ordering::SeqCst);
    async {
        if !CLOSED.load(Ordering::SeqCst) {
            CLOSED_NOTICE.notified().await;
        }
    }
}

/// Whether a write found the output closed.
pub fn output_closed() -> bool {
    CLOSED.load(Ordering::SeqCst)
}

/// `println!`, made printable.
macro_rules! say {
    () => { $crate::screen::out("\n") };
    ($($arg:tt)*) => { $crate::screen::out(&format!("{}\n", format_args!($($arg)*))) };
}

/// `eprintln!`, made printable.
macro_rules! tell {
    () => { $crate::screen::err("\n") };
    ($($arg:tt)*) => { $crate::screen::err(&format!("{}\n", format_args!($($arg)*))) };
}

#[cfg(test)]
mod tests {
    #[test]
    fn formatting_is_kept() {
        let shown = format!("{}\n", format_args!("a {} b", 1));
        assert_eq!(wright_protocol::printable(&shown), "a 1 b\n");
    }
}
