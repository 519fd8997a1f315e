//! What the program around the server gives it (`Starter`): sessions prepared from a
//! request with the settings resolved as that program resolves them, the models, the
//! sandbox, the doctor's report. The server itself never names a flag.

use crate::api;
use crate::api::NewConversation;
use anyhow::Result;
use std::path::Path;
use wright_core::Conversation;
use wright_core::ResumeNotes;
use wright_session::Front;
use wright_session::Session;

/// What the program around the server gives it: sessions prepared from a request, with
/// the settings resolved as that program resolves them (its flags, the configuration,
/// the repository's file), never asking anyone.
#[async_trait::async_trait]
pub trait Starter: Send + Sync + 'static {
    /// Refuses settings the program would refuse, before anything is queued.
    fn check(&self, settings: &api::Settings) -> Result<()>;
    /// A new conversation's session, under `id`, on `workspace` (the request's, or the
    /// clone of its repository URL), with the profiles its conversation falls back to
    /// (`Session::profiles`, given to the conversation when it starts).
    async fn prepare(
        &self,
        id: String,
        request: &NewConversation,
        workspace: &Path,
        front: &dyn Front,
    ) -> Result<Session>;
    /// An existing conversation's session, locked, and the conversation read back.
    async fn reopen(
        &self,
        dir: &Path,
        settings: &api::Settings,
        front: &dyn Front,
    ) -> Result<(Session, Conversation, ResumeNotes)>;
    /// The model server the settings name (else the local one that answers), and its
    /// models.
    async fn models(&self) -> Result<api::Models>;
    /// The sandbox a conversation with these settings gets, for a repository whose own
    /// configuration is read from `source` (a fork copies files in it).
    fn sandbox(
        &self,
        settings: &api::Settings,
        source: &wright_session::repo_config::RepoConfigSource,
    ) -> Result<wright_session::SandboxChoice>;
    /// `wright doctor --json`'s report on the setup these settings give.
    async fn doctor(&self, settings: &api::Settings) -> serde_json::Value;
}
