//! Whether a run begins with wright running the project's tests itself (`--first-look`,
//! key `run.first_look`): `on` whenever the workspace map found a test command, `auto`
//! only for models whose name says 8B or less (the ones that otherwise guess paths and wander), `off`
//! never. The command is the one wright wrote from the project's files, never a line read
//! from them; it runs in the sandbox like every command.

use crate::working_copy::WorkingCopy;
use wright_llm::constrain::is_known_small_model;

/// The command to run before the first step, if any.
pub fn command(
    setting: &str,
    model: &str,
    working_copy: &WorkingCopy,
    workspace: &wright_tools::Workspace,
) -> Option<String> {
    let wanted = match setting {
        "off" => false,
        "on" => true,
        _ => is_known_small_model(model),
    };
    if !wanted {
        return None;
    }
    wright_tools::map::test_command(&working_copy.map_input(workspace))
}
