//! The help a session's model gets before and during its run (`[assist]`, `--assist`,
//! `--assist-piece`; see `wright_config::assist`): the first look — wright running the
//! project's tests itself before the first step — and what follows it (the failure read
//! apart, versions of the failing function tried), on or off as the setting says, `auto`
//! decided by the one policy from the model's name and the connection probe. A model the
//! policy did not help from the start is watched (`wright_strategies::AssistWhenNeeded`):
//! once it shows it needs help, the first look runs then. The command is the one wright
//! wrote from the project's files, never a line read from them; it runs in the sandbox
//! like every command.

use crate::Session;
use wright_config::assist::Piece;
use wright_config::assist::Policy;
use wright_core::Conversation;
use wright_llm::constrain::is_known_small_model;
use wright_protocol::ToolCalling;
use wright_strategies::Help;

impl Session {
    /// What the policy knows of this session's model: its name, and what the probe found.
    pub fn assist_policy(&self) -> Policy {
        Policy {
            name_says_small: is_known_small_model(&self.client.config().model),
            // Only a probe's answer counts: text mode asked for is the user's choice.
            probe_found_no_native_calls: self.settings.tool_calling == "auto"
                && self.tool_calling == ToolCalling::Text,
        }
    }

    /// Whether `piece` of the help is on at the start of this session's runs.
    pub fn assisted(&self, piece: Piece) -> bool {
        self.settings.assist.at_start(piece, &self.assist_policy())
    }

    /// The test command the first look runs, if the workspace map found one.
    pub fn first_look_command(&self) -> Option<String> {
        wright_strategies::map::test_command(&self.working_copy.map_input(&self.tools.workspace))
    }

    /// Sets `conversation` to begin with the first look, to have the model read its
    /// failure apart and to try versions of its failing function, as the setting and the
    /// policy say; or, when the first look is `auto` and the model did not need it so far,
    /// to run it once the model shows it does.
    pub fn begin_with_first_look(&self, conversation: &mut Conversation) {
        let assist = &self.settings.assist;
        let policy = self.assist_policy();
        conversation.next_look(assist.at_start(Piece::NextLook, &policy));
        let (now, later) = (
            assist.at_start(Piece::FirstLook, &policy),
            assist.watches(&policy),
        );
        // The command only when it may run: the map's reading is not free on a big tree.
        let Some(command) = (now || later).then(|| self.first_look_command()).flatten() else {
            return;
        };
        if now {
            conversation.look_first(command);
            conversation.read_first_failure(assist.at_start(Piece::Reading, &policy));
            conversation.try_candidates(assist.at_start(Piece::Candidates, &policy));
            conversation.try_file_versions(assist.at_start(Piece::FileVersions, &policy));
        } else {
            let pieces = assist
                .during_run_pieces()
                .into_iter()
                .map(|piece| piece.key().to_string())
                .collect();
            conversation.add_strategy(Box::new(wright_strategies::AssistWhenNeeded::new(
                command, pieces,
            )));
        }
    }
}
