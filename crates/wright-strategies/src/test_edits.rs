//! A test edited by the agent gets a note, once per conversation: small models told a
//! test fails "fix" the test (the 1.5B rewrote the expected value again and again, and
//! turned `7` into `77` with sed). The edit is made — a task may ask for it — but the
//! model is reminded that a failing test says what the code must do. The review before
//! `finish` still asks about weakened tests. The note is part of the edit's observation,
//! so a resumed conversation finds it there and does not say it again.

use wright_core::strategy::Call;
use wright_core::strategy::Ran;
use wright_core::strategy::Strategy;
use wright_core::strategy::View;
use wright_protocol::Event;
use wright_protocol::EventBody;

/// What the model reads after its first edit of a test file.
pub const NOTE: &str = "[This is a test file. A failing test says what the code must do: unless the task asks to change the test, fix the code it tests instead, and undo this edit with undo_edit if it only made the test agree with the bug.]";

/// The note after the first edit of a test file.
#[derive(Debug, Default)]
pub struct TestEditNote {
    /// Whether the log already holds the note.
    told: bool,
}

impl Strategy for TestEditNote {
    fn name(&self) -> &'static str {
        "test-edit-note"
    }

    fn absorb(&mut self, event: &Event) {
        if let EventBody::Observation { output, .. } = &event.body {
            self.told |= output.contains(NOTE);
        }
    }

    fn annotate(&mut self, _view: &View<'_>, call: &Call<'_>, ran: Ran) -> Option<String> {
        let arguments = call.arguments;
        let edits = matches!(call.tool, "file_editor" | "str_replace_editor")
            && matches!(
                arguments["command"].as_str(),
                Some("str_replace" | "insert" | "create")
            );
        let path = arguments["path"].as_str()?;
        if ran != Ran::Fine || self.told || !edits || !wright_tools::is_test_file(path) {
            return None;
        }
        // Set at once: two edits in one reply get the note once (absorb confirms it).
        self.told = true;
        Some(NOTE.to_string())
    }
}
