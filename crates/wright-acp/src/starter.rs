//! What the program around the ACP agent gives it: sessions prepared with the settings
//! resolved as that program resolves them (its flags, the configuration, the
//! repository's own file), never asking anyone at a terminal, and somewhere to say what
//! is not protocol. The library itself never touches the terminal: its stdout is the
//! protocol's.

use anyhow::Result;
use std::path::Path;
use wright_core::Conversation;
use wright_core::ResumeNotes;
use wright_session::Front;
use wright_session::Session;

#[async_trait::async_trait]
pub trait Starter: Send + Sync + 'static {
    /// Refuses a workspace a conversation could not start in (not a directory, one that
    /// holds wright's own files, a configuration that does not resolve), when an editor
    /// asks for a session there — before it is given one.
    fn check(&self, workspace: &Path, front: &dyn Front) -> Result<()>;

    /// A new conversation's session on `workspace`, under `id` (in a clone on a new
    /// branch when it is a git repository, as `wright run` works).
    async fn prepare(&self, id: String, workspace: &Path, front: &dyn Front) -> Result<Session>;

    /// The session of the conversation in `dir`, locked, and the conversation read back
    /// from its log (as `wright resume` reopens one).
    async fn reopen(
        &self,
        dir: &Path,
        front: &dyn Front,
    ) -> Result<(Session, Conversation, ResumeNotes)>;

    /// A line for the person who started the program (stderr), never the protocol's.
    fn diagnostic(&self, line: &str);
}
