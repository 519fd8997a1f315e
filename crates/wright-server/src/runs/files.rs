//! A conversation's files across replicas (`--git-store`): each run pushes its steps'
//! files to the store in the background; a run taken over from another replica whose
//! clone is not here gets it back from the store first, and when the last steps' files
//! had not reached it, the takeover says which were lost — in the conversation's notices,
//! and to the model, in the log, as a call cut off is answered.

use super::Runs;
use crate::api;
use crate::front::Recorder;
use anyhow::Result;
use std::path::Path;
use wright_session::git_store::Restored;
use wright_session::Running;
use wright_session::Session;

impl Runs {
    /// Pushes the files of each step of `conversation` to the git store, if there is one.
    pub(super) fn push_steps(&self, session: &Session, conversation: &mut Running) {
        if let Some(store) = &self.git_store {
            session.keep_steps_in(conversation, store);
        }
    }

    /// Before a takeover reopens the conversation in `dir`: its clone made again from the
    /// git store when it is not on this replica (nothing without a store).
    pub(super) async fn restore_files(
        &self,
        dir: &Path,
        settings: &api::Settings,
    ) -> Result<Restored> {
        let Some(store) = self.git_store.clone() else {
            return Ok(Restored::Here);
        };
        let (starter, settings, dir) = (self.starter.clone(), settings.clone(), dir.to_path_buf());
        tokio::task::spawn_blocking(move || {
            let sandbox_for = |source: &wright_session::repo_config::RepoConfigSource| {
                starter
                    .sandbox(&settings, source)
                    .map_err(anyhow::Error::from)
            };
            wright_session::git_store::restore(&store, &dir, &sandbox_for)
        })
        .await?
    }
}

/// Says what a takeover restored: to the people watching, and to the model when files
/// were lost.
pub(super) fn tell(
    restored: &Restored,
    front: &Recorder,
    conversation: &mut Running,
) -> Result<()> {
    if let Some(text) = restored.describe() {
        let lost = matches!(restored, Restored::Made { lost, .. } if !lost.is_empty());
        front.note(lost, text);
    }
    if let Some(text) = restored.for_the_model() {
        conversation.tell(text)?;
    }
    Ok(())
}
