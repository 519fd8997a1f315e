//! The only way wright's front end writes to the terminal. Everything it shows may hold
//! what the agent wrote (file contents and names, command output, the model's words), so
//! every piece goes through `wright_protocol::printable` first: cursor movement, erasing,
//! titles, clipboard writes and bidirectional overrides are dropped, newlines and tabs
//! kept. `say!` and `tell!` are `println!` and `eprintln!` with that guarantee.

use std::io::Write;
use wright_protocol::printable;

/// Writes `text` to stdout, made printable.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(printable(text).as_bytes());
    let _ = stdout.flush();
}

/// Writes `text` to stderr, made printable.
pub fn err(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(printable(text).as_bytes());
    let _ = stderr.flush();
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
