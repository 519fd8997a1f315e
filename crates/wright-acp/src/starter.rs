//! What the program around the ACP agent gives it: sessions prepared with the settings
//! resolved as that program resolves them (its flags, the configuration, the
//! repository's own file), never asking anyone at a terminal, and somewhere to say what
//! is not protocol. The library itself never touches the terminal: its stdout is the
//! protocol's.

use anyhow::Result;
use std::path::Path;
use wright_protocol::ConfirmMode;
use wright_session::settings::console::console;
use wright_session::settings::going_on::Naming;
use wright_session::settings::unattended;
use wright_session::settings::CommonArgs;
use wright_session::Front;
use wright_session::Reopened;
use wright_session::Session;
use wright_session::SessionError;

#[async_trait::async_trait]
pub trait Starter: Send + Sync + 'static {
    /// Refuses a workspace a conversation could not start in (not a directory, one that
    /// holds wright's own files, a configuration that does not resolve), when an editor
    /// asks for a session there — before it is given one.
    fn check(&self, workspace: &Path, front: &dyn Front) -> Result<(), SessionError>;

    /// A new conversation's session on `workspace`, under `id` (in a clone on a new
    /// branch when it is a git repository, as `wright run` works).
    async fn prepare(
        &self,
        id: String,
        workspace: &Path,
        front: &dyn Front,
    ) -> Result<Session, SessionError>;

    /// The session of the conversation in `dir`, locked, and the conversation read back
    /// from its log (as `wright resume` reopens one).
    async fn reopen(&self, dir: &Path, front: &dyn Front) -> Result<Reopened, SessionError>;

    /// A line for the person who started the program (stderr), never the protocol's.
    fn diagnostic(&self, line: &str);
}

/// Sessions as `wright run` and `wright resume` prepare them (`wright_session::settings`),
/// for an editor: the agent's settings (`defaults`, its command's flags) are every
/// session's; what is said besides the protocol goes to the program's console.
pub struct SettingsStarter {
    defaults: CommonArgs,
    place: unattended::WorkPlace,
}

impl SettingsStarter {
    /// `defaults` are taken as given, but for `json`: nobody is at a terminal for the
    /// sessions, and stdout is the protocol's.
    pub fn new(mut defaults: CommonArgs) -> Result<Self> {
        defaults.json = true;
        defaults.check()?;
        Ok(Self {
            defaults,
            place: unattended::WorkPlace::Clone,
        })
    }

    /// Every session works where `place` says: `InPlace` in the editor's `cwd` itself,
    /// for a client that already isolated the work.
    pub fn working(mut self, place: unattended::WorkPlace) -> Self {
        self.place = place;
        self
    }
}

#[async_trait::async_trait]
impl Starter for SettingsStarter {
    fn check(&self, workspace: &Path, front: &dyn Front) -> Result<(), SessionError> {
        unattended::check(&self.defaults, workspace, front)
    }

    async fn prepare(
        &self,
        id: String,
        workspace: &Path,
        front: &dyn Front,
    ) -> Result<Session, SessionError> {
        // The editor answers permission requests: asks before risky actions unless the
        // flags or the configuration say otherwise (a reopened one keeps its last mode).
        unattended::prepare(
            &self.defaults,
            id,
            workspace,
            Some(ConfirmMode::Risky),
            self.place,
            front,
        )
        .await
    }

    async fn reopen(&self, dir: &Path, front: &dyn Front) -> Result<Reopened, SessionError> {
        unattended::reopen(
            &self.defaults,
            dir,
            None,
            Naming::Flags,
            wright_session::Takes::OwnOnly,
            front,
        )
        .await
    }

    fn diagnostic(&self, line: &str) {
        console().tell(line);
    }
}
