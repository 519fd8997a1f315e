//! The editor as the session library's `Front`: what a session has to say while it is
//! prepared or run comes to the editor as the agent's words; a question is answered no,
//! as on a server — nobody answers at a terminal, and the protocol's stdout is not one.

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
        // Permission requests map here: once wright asks before an action (the
        // confirmation policy, being built in wright-core), its question becomes a
        // `session/request_permission` to the editor, answered by the person there,
        // and the tool call waits as `pending`. Until then every question is answered
        // no, and said.
        self.notifier.say(format!(
            "wright: {question} — answered no: `wright acp` does not ask yet\n\n"
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
