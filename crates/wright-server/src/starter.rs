//! What the server needs from outside it (`Starter`): sessions prepared from a request,
//! the models, the sandbox, the doctor's report. `SettingsStarter` is the one every
//! program uses: the session's own settings resolution (`wright_session::settings`, as
//! `wright run` resolves them, fallback, routing and review included), with the program's
//! command-line defaults and its doctor. The server itself never names a flag.

use crate::api;
use crate::api::NewConversation;
use anyhow::Result;
use std::path::Path;
use std::sync::Arc;
use wright_protocol::ConfirmMode;
use wright_session::settings::going_on::Naming;
use wright_session::settings::unattended;
use wright_session::settings::BadFlag;
use wright_session::settings::CommonArgs;
use wright_session::Front;
use wright_session::Reopened;
use wright_session::Session;
use wright_session::SessionError;
use wright_session::Takes;

/// What the program around the server gives it: sessions prepared from a request, with
/// the settings resolved as that program resolves them (its flags, the configuration,
/// the repository's file), never asking anyone.
#[async_trait::async_trait]
pub trait Starter: Send + Sync + 'static {
    /// Refuses settings the program would refuse, before anything is queued.
    fn check(&self, settings: &api::Settings) -> Result<(), BadFlag>;
    /// A new conversation's session, under `id`, on `workspace` (the request's, or the
    /// clone of its repository URL), with the profiles its conversation falls back to
    /// (`Session::profiles`, given to the conversation when it starts). `secrets`: its
    /// shell's, given (a user's own), else the program's own (`None`: the admin's).
    async fn prepare(
        &self,
        id: String,
        request: &NewConversation,
        workspace: &Path,
        secrets: Option<Vec<(String, String)>>,
        front: &dyn Front,
    ) -> Result<Session, SessionError>;
    /// An existing conversation's session, locked, and the conversation read back;
    /// `takes`: whether an external agent's is taken (to go on in the agent's session);
    /// `secrets` as for `prepare`.
    async fn reopen(
        &self,
        dir: &Path,
        settings: &api::Settings,
        takes: Takes,
        secrets: Option<Vec<(String, String)>>,
        front: &dyn Front,
    ) -> Result<Reopened, SessionError>;
    /// The model server the settings name (else the local one that answers), and its
    /// models.
    async fn models(&self) -> Result<api::Models, SessionError>;
    /// The sandbox a conversation with these settings gets, for a repository whose own
    /// configuration is read from `source` (a fork copies files in it).
    fn sandbox(
        &self,
        settings: &api::Settings,
        source: &wright_session::repo_config::RepoConfigSource,
    ) -> Result<wright_session::SandboxChoice, SessionError>;
    /// `wright doctor --json`'s report on the setup these settings give.
    async fn doctor(&self, settings: &api::Settings) -> serde_json::Value;
    /// The configuration conversations start from (the user's file, the environment,
    /// the program's flags), each value with its origin; none when the program has no
    /// such thing to show.
    fn configuration(&self) -> Result<wright_config::Config> {
        anyhow::bail!("this server shows no configuration")
    }
    /// The server's own setup, against which a user's settings are checked for what
    /// they widen (`crate::widening`), and what its configuration lets users widen: by
    /// default, the strictest (an `auto` sandbox, no hosts, no model server of its own,
    /// nothing let).
    fn user_limits(&self) -> crate::UserLimits {
        crate::UserLimits::default()
    }
}

/// `wright doctor --json`'s report on the setup some settings give: the program's own
/// (the doctor is a command of the program's, not the session's).
pub type DoctorReport = Arc<
    dyn Fn(CommonArgs) -> futures_util::future::BoxFuture<'static, serde_json::Value> + Send + Sync,
>;

/// Sessions as `wright run` and `wright resume` prepare them (`wright_session::settings`):
/// the server's settings (`defaults`, its command's flags) are every conversation's, a
/// request may change a few, and nobody is ever asked anything.
pub struct SettingsStarter {
    defaults: CommonArgs,
    doctor: DoctorReport,
    /// The server's secrets users' conversations get too (`wright serve --share-secret`).
    shared: Vec<String>,
}

impl SettingsStarter {
    /// `defaults` are taken as given, but for `json`: nobody is at a terminal for the
    /// conversations, so nothing is asked.
    pub fn new(mut defaults: CommonArgs, doctor: DoctorReport) -> Result<Self> {
        defaults.json = true;
        defaults.check()?;
        Ok(Self {
            defaults,
            doctor,
            shared: Vec::new(),
        })
    }

    /// Gives users' conversations the server's secrets `names` too, beside their own
    /// (theirs first: a name both have is theirs); each must be stored now.
    pub fn sharing(mut self, names: Vec<String>) -> Result<Self> {
        wright_config::secrets::SecretStore::default_location().values(&names)?;
        self.shared = names;
        Ok(self)
    }

    /// The secrets a conversation is given: `None` (the admin's) the server's own as
    /// configured; a user's own, with those the server shares.
    fn given(
        &self,
        secrets: Option<Vec<(String, String)>>,
    ) -> Result<Option<Vec<(String, String)>>, SessionError> {
        let Some(mut given) = secrets else {
            return Ok(None);
        };
        let missing: Vec<String> = self
            .shared
            .iter()
            .filter(|name| !given.iter().any(|(own, _)| own == *name))
            .cloned()
            .collect();
        let shared = wright_config::secrets::SecretStore::default_location()
            .values(&missing)
            .map_err(|err| SessionError::Other(err.into()))?;
        given.extend(shared);
        Ok(Some(given))
    }

    /// The defaults with what the request's settings change.
    fn args(&self, settings: &api::Settings) -> CommonArgs {
        let mut args = self.defaults.clone();
        let text = |given: &Option<String>, default: &mut Option<String>| {
            if given.is_some() {
                *default = given.clone();
            }
        };
        text(&settings.model, &mut args.model);
        text(&settings.base_url, &mut args.base_url);
        text(&settings.profile, &mut args.profile);
        text(&settings.sandbox, &mut args.sandbox);
        text(&settings.tool_calling, &mut args.tool_calling);
        text(&settings.tools, &mut args.tools);
        text(&settings.confirm, &mut args.confirm);
        if let Some(hosts) = &settings.allow_hosts {
            args.allow_hosts = hosts.clone();
        }
        args.max_steps = settings.max_steps.or(args.max_steps);
        args.max_time = settings.max_time.or(args.max_time);
        args.max_tokens = settings.max_tokens.or(args.max_tokens);
        args
    }
}

#[async_trait::async_trait]
impl Starter for SettingsStarter {
    fn check(&self, settings: &api::Settings) -> Result<(), BadFlag> {
        if let Some(name) = &settings.agent {
            crate::runs::external_agent(name).map_err(|err| BadFlag {
                flag: "--agent",
                problem: format!(": {err:#}"),
            })?;
        }
        self.args(settings).check()
    }

    async fn prepare(
        &self,
        id: String,
        request: &NewConversation,
        workspace: &Path,
        secrets: Option<Vec<(String, String)>>,
        front: &dyn Front,
    ) -> Result<Session, SessionError> {
        let mut args = self.args(&request.settings);
        args.given_secrets = self.given(secrets)?;
        // The server asks before risky actions unless told otherwise.
        unattended::prepare(
            &args,
            id,
            workspace,
            Some(ConfirmMode::Risky),
            unattended::WorkPlace::Clone,
            front,
        )
        .await
    }

    async fn reopen(
        &self,
        dir: &Path,
        settings: &api::Settings,
        takes: Takes,
        secrets: Option<Vec<(String, String)>>,
        front: &dyn Front,
    ) -> Result<Reopened, SessionError> {
        // The request's settings (over the server's record of the conversation's) name
        // the model it goes on with, or nothing does.
        let named =
            settings.model.is_some() || settings.base_url.is_some() || settings.profile.is_some();
        let mut args = self.args(settings);
        args.given_secrets = self.given(secrets)?;
        unattended::reopen(
            &args,
            dir,
            Some(ConfirmMode::Risky),
            Naming::Request { named },
            takes,
            front,
        )
        .await
    }

    fn sandbox(
        &self,
        settings: &api::Settings,
        source: &wright_session::repo_config::RepoConfigSource,
    ) -> Result<wright_session::SandboxChoice, SessionError> {
        unattended::sandbox(&self.args(settings), source)
    }

    async fn doctor(&self, settings: &api::Settings) -> serde_json::Value {
        (self.doctor)(self.args(settings)).await
    }

    fn configuration(&self) -> Result<wright_config::Config> {
        wright_session::settings::merged(&self.defaults, None)
    }

    fn user_limits(&self) -> crate::UserLimits {
        // A configuration that does not load lets users nothing and names no setup of
        // the server's: every widening setting is then the admin's.
        self.configuration()
            .map(|config| crate::UserLimits::of(&config))
            .unwrap_or_default()
    }

    async fn models(&self) -> Result<api::Models, SessionError> {
        let (base_url, models) = unattended::models(&self.defaults).await?;
        Ok(api::Models { base_url, models })
    }
}
