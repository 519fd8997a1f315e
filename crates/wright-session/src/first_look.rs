//! Whether a run begins with wright running the project's tests itself (`--first-look`,
//! key `run.first_look`): `on` whenever the workspace map found a test command, `auto`
//! only for models whose name says 8B or less (the ones that otherwise guess paths and
//! wander), `off` never. The command is the one wright wrote from the project's files,
//! never a line read from them; it runs in the sandbox like every command.

use crate::Session;
use wright_llm::constrain::is_known_small_model;

impl Session {
    /// The command to run before the first step under `setting` (`auto`, `on`, `off`),
    /// if any.
    pub fn first_look_command(&self, setting: &str) -> Option<String> {
        let wanted = match setting {
            "off" => false,
            "on" => true,
            _ => is_known_small_model(&self.client.config().model),
        };
        if !wanted {
            return None;
        }
        wright_tools::map::test_command(&self.working_copy.map_input(&self.tools.workspace))
    }
}
