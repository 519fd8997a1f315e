//! A test edited by the agent gets a note, once per conversation: small models told a
//! test fails "fix" the test (the 1.5B rewrote the expected value again and again, and
//! turned `7` into `77` with sed). The edit is made — a task may ask for it — but the
//! model is reminded that a failing test says what the code must do. The review before
//! `finish` still asks about weakened tests.

use super::*;

/// What the model reads after its first edit of a test file.
const NOTE: &str = "[This is a test file. A failing test says what the code must do: unless the task asks to change the test, fix the code it tests instead, and undo this edit with undo_edit if it only made the test agree with the bug.]";

impl Conversation {
    /// The note for a successful call of `tool` with `arguments`, the first time it
    /// edits a test file.
    pub(super) fn test_edit_note(
        &mut self,
        tool: &str,
        arguments: Option<&Value>,
    ) -> Option<&'static str> {
        if self.told_about_test_edits {
            return None;
        }
        let arguments = arguments?;
        let edits = matches!(tool, "file_editor" | "str_replace_editor")
            && matches!(
                arguments["command"].as_str(),
                Some("str_replace" | "insert" | "create")
            );
        let path = arguments["path"].as_str()?;
        if !edits || !crate::review::is_test_file(path) {
            return None;
        }
        self.told_about_test_edits = true;
        Some(NOTE)
    }
}
