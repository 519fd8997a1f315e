//! Asking the user a yes-or-no question, only where someone can answer: never assumed
//! yes, and never asked when stdin or stderr is not a terminal (`--json`, pipes, CI).

use std::io::BufRead;
use std::io::IsTerminal;

/// Whether a person is there to answer.
pub fn can_ask(json: bool) -> bool {
    !json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Shows `question` and reads one answer: `y` or `yes` is yes, anything else no.
pub fn yes(question: &str) -> bool {
    crate::screen::err(&format!("{question} [y/N] "));
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}
