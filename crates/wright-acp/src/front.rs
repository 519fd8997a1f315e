//! The editor as the session library's `Front`: what a session has to say while it is
//! prepared or run comes to the editor as the agent's words; a question is answered no,
//! as on a server — nobody answers at a terminal, and the protocol's stdout is not one
//! (risky tool calls are another matter: the editor is asked, see `permission`).

use crate::notify::Notifier;
use wright_protocol::Notice;
use wright_protocol::Question;
use wright_session::Front;

pub(crate) struct Editor {
    pub(crate) notifier: Notifier,
}

impl Front for Editor {
    fn notice(&self, notice: Notice) {
        self.notifier.say(format!("wright: {notice}\n\n"));
    }

    fn confirm(&self, question: &Question) -> bool {
        // A question while a session is prepared (a setting to confirm, a file to
        // trust) is not a tool call, which is all `session/request_permission` can
        // carry; risky calls are asked about there (see `permission`). Such a question
        // is answered no, and said: the flags or the configuration answer it.
        self.notifier.say(format!(
            "wright: {question} — answered no: `wright acp` asks the editor about tool calls only\n\n"
        ));
        false
    }
}

/// The front of a check made before a session exists: nothing can be sent to a session
/// yet, so what it says goes to the program's diagnostics.
pub(crate) struct Unsessioned<'a> {
    pub(crate) starter: &'a dyn crate::Starter,
}

impl Front for Unsessioned<'_> {
    fn notice(&self, notice: Notice) {
        self.starter.diagnostic(&format!("wright acp: {notice}"));
    }

    fn confirm(&self, question: &Question) -> bool {
        self.starter.diagnostic(&format!(
            "wright acp: {question} — answered no: nobody can answer here"
        ));
        false
    }
}
