//! What the library needs from the program around it: somewhere to say things, and
//! someone to ask. The CLI prints (sanitized) and asks at the terminal; a server turns
//! them into events and answers no. The library itself never prints nor reads stdin.

/// The front end a session works for.
pub trait Front: Send + Sync {
    /// A line the user asked for: a command's result (`took wright/ID into ...`).
    fn say(&self, text: &str);
    /// A notice beside the work: something wright did on its own, or a warning.
    fn tell(&self, text: &str);
    /// A yes-or-no question; `false` when nobody can answer. Never assumed yes.
    fn confirm(&self, question: &str) -> bool;
}

/// A front end with nobody there: says nothing, answers no (tests, batch work).
#[derive(Debug, Clone, Copy, Default)]
pub struct Unattended;

impl Front for Unattended {
    fn say(&self, _text: &str) {}
    fn tell(&self, _text: &str) {}
    fn confirm(&self, _question: &str) -> bool {
        false
    }
}
