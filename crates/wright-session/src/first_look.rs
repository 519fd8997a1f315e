//! Whether a run begins with wright running the project's tests itself (`--first-look`,
//! key `run.first_look`): `on` whenever the workspace map found a test command, `auto`
//! only for models whose name says 8B or less (the ones that otherwise guess paths and
//! wander), `off` never. The command is the one wright wrote from the project's files,
//! never a line read from them; it runs in the sandbox like every command. When it fails,
//! the model may be asked apart which line causes it (`--reading`, key `run.reading`,
//! the same three values).

use crate::Session;
use wright_core::Conversation;
use wright_llm::constrain::is_known_small_model;
use wright_strategies::Help;

impl Session {
    /// The command to run before the first step under `setting` (`auto`, `on`, `off`),
    /// if any.
    pub fn first_look_command(&self, setting: &str) -> Option<String> {
        if !self.wanted(setting) {
            return None;
        }
        wright_strategies::map::test_command(&self.working_copy.map_input(&self.tools.workspace))
    }

    /// Sets `conversation` to begin with the first look under `look`, and to have the
    /// model read that look's failure apart under `reading` (each `auto`, `on`, `off`), and
    /// to try versions of its failing function under the setting `run.candidates`.
    pub fn begin_with_first_look(
        &self,
        conversation: &mut Conversation,
        look: &str,
        reading: &str,
    ) {
        if let Some(command) = self.first_look_command(look) {
            conversation.look_first(command);
            conversation.read_first_failure(self.wanted(reading));
            conversation.try_candidates(self.wanted(&self.settings.candidates));
        }
    }

    /// Whether a setting of `auto`, `on` or `off` holds for this session's model.
    fn wanted(&self, setting: &str) -> bool {
        match setting {
            "off" => false,
            "on" => true,
            _ => is_known_small_model(&self.client.config().model),
        }
    }
}
