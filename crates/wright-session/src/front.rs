//! What the library needs from the program around it: somewhere to tell things, and
//! someone to ask. Both are typed (`Notice`, `Question`, in wright-protocol): the CLI
//! words and prints them (sanitized) and asks at the terminal; a server streams them and
//! answers no. The library itself never prints nor reads stdin.

use wright_protocol::Notice;
use wright_protocol::Question;

/// The front end a session works for.
pub trait Front: Send + Sync {
    /// Something to tell the user: a command's result, or a warning beside the work.
    fn notice(&self, notice: Notice);
    /// A yes-or-no question; `false` when nobody can answer. Never assumed yes.
    fn confirm(&self, question: &Question) -> bool;
}

/// A front end with nobody there: says nothing, answers no (tests, batch work).
#[derive(Debug, Clone, Copy, Default)]
pub struct Unattended;

impl Front for Unattended {
    fn notice(&self, _notice: Notice) {}
    fn confirm(&self, _question: &Question) -> bool {
        false
    }
}
