//! From a front end's settings (the command line's flags, a server request's fields), the
//! environment and the configuration files to what one session runs with — the same for
//! `wright run`, the server and an editor's agent — and the model it starts on (the
//! first profile of the fallback chain that answers, `connect`; the routing rules,
//! `resolve_routed`). Questions are asked only at the program's console (`console`). The repository's own `.wright/config.toml` is read from the user's
//! repository at the commit the conversation starts from (through git's object store,
//! never the work tree or the agent's clone), or from a plain directory without leaving
//! it; a file that asks for more than the defaults is taken only once the user approved
//! its exact content (recorded by hash), by a flag for one run, or by answering at the
//! terminal. Where the model server is not on this machine, `egress` decides whether the
//! repository's code may go there.

mod answering;
mod args;
pub mod console;
pub mod fleet;
pub mod going_on;
mod merge;
pub mod review;
pub mod unattended;
pub use answering::connect;
pub use answering::model_at;
pub use answering::Connected;
pub use args::BadFlag;
pub use args::CommonArgs;
pub use merge::merged;
pub use merge::merged_routed;

use crate::connect::connect as connect_to;
use crate::connect::ServerChoice;
pub use crate::repo_config::RepoConfigSource;
use crate::repo_config::RepoFile;
use crate::sandbox_setup::SandboxOptions;
use crate::SessionError;
use anyhow::bail;
use anyhow::Result;
use console::console;
use std::path::PathBuf;
use std::time::Duration;
use wright_config::consent;
use wright_config::consent::Consent;
use wright_config::Config;
use wright_config::EgressVerdict;
use wright_config::Settings;
use wright_core::Limits;
use wright_llm::Client;
use wright_llm::ClientConfig;
use wright_sandbox::SandboxMode;

/// Refuses an empty or blank task or message (`what` names it for the sentence): the
/// agent would run on nothing and spend steps guessing.
pub fn check_text(text: &str, what: &str, example: &str) -> Result<()> {
    if text.trim().is_empty() {
        bail!("the {what} is empty: say what the agent should do, for example {example}");
    }
    Ok(())
}

/// A server's failure to answer, typed; for a resumed conversation (`logged`: its server
/// and model) with them, for the front end to say how to name its server again.
pub fn server_failure(err: wright_llm::LlmError, logged: Option<(&str, &str)>) -> SessionError {
    SessionError::ModelServer {
        error: Box::new(err),
        logged: logged.map(|(base_url, model)| crate::error::Logged {
            base_url: base_url.to_string(),
            model: model.to_string(),
        }),
    }
}

/// What this invocation itself names of the model and its server — its flags and the
/// environment, not the configuration files — each as `key value (origin)`: a reopened
/// conversation goes on with another model than the one it is on only when one is named
/// here (see `going_on`).
pub fn named_model(args: &CommonArgs) -> Result<Vec<String>> {
    let mut config = Config::default().with_environment(|name| std::env::var(name).ok());
    for (key, value, flag) in args.flags() {
        config = config.with_flag(key, value, flag)?;
    }
    Ok(["profile", "base_url", "model", "model_file"]
        .iter()
        .filter_map(|key| {
            let sourced = config.get(key)?;
            let named = matches!(
                sourced.origin,
                wright_config::Origin::Flag(_) | wright_config::Origin::Env(_)
            );
            named.then(|| {
                let value = sourced.value.as_str().unwrap_or_default();
                format!("{key} {value} ({})", sourced.origin)
            })
        })
        .collect())
}

/// What a session runs with, and how it was decided.
pub struct SessionSettings {
    pub values: Settings,
    /// The repository (or directory) the session works on, for consent.
    pub repo: Option<PathBuf>,
    pub json: bool,
    allow_remote: bool,
    /// What they were resolved from, to resolve them again with another profile.
    args: CommonArgs,
    source: Option<RepoConfigSource>,
    /// How the profile was chosen, when routing rules were applied.
    pub route: Option<wright_protocol::Route>,
}

impl SessionSettings {
    /// Resolves everything for a session on `source`'s repository.
    pub fn resolve(args: &CommonArgs, source: Option<&RepoConfigSource>) -> Result<Self> {
        Self::resolve_routed(args, source, None)
    }

    /// `resolve`, with the routing rules of `command` (see `wright_config::route`).
    pub fn resolve_routed(
        args: &CommonArgs,
        source: Option<&RepoConfigSource>,
        command: Option<wright_config::RouteCommand>,
    ) -> Result<Self> {
        let (config, route) = merged_routed(args, source, command)?;
        let repo = source.map(|s| s.key().to_path_buf());
        let values =
            Settings::from_config(&config, repo.as_deref(), |name| std::env::var(name).ok())?;
        values.sandbox_level.parse::<SandboxMode>()?;
        Ok(Self {
            values,
            repo,
            json: args.json,
            allow_remote: args.allow_remote,
            args: args.clone(),
            source: source.cloned(),
            route,
        })
    }

    /// The settings `args` give on the same repository (its file read as before).
    pub fn resolve_again(&self, args: &CommonArgs) -> Result<Self> {
        Self::resolve(args, self.source.as_ref())
    }

    /// The same settings with the profile `name` chosen (as by `--profile`).
    pub fn with_profile(&self, name: &str) -> Result<Self> {
        let args = CommonArgs {
            profile: Some(name.to_string()),
            ..self.args.clone()
        };
        Self::resolve(&args, self.source.as_ref())
    }

    /// The settings of a second agent on the profile `name` (`--review`): the profile's
    /// server, model and key, not those of this command line's flags.
    pub fn for_reviewer(&self, name: &str) -> Result<Self> {
        let args = CommonArgs {
            profile: Some(name.to_string()),
            base_url: None,
            model: None,
            api_key: None,
            ..self.args.clone()
        };
        Self::resolve(&args, self.source.as_ref())
    }

    pub fn sandbox_mode(&self) -> Result<SandboxMode> {
        Ok(self.values.sandbox_level.parse()?)
    }

    pub fn client_config(&self) -> ClientConfig {
        let values = &self.values;
        let mut config = ClientConfig::new("", "");
        config.stream = values.stream;
        config.temperature = values.temperature;
        config.idle_timeout = Duration::from_secs(values.idle_timeout.max(1));
        config.max_tokens = (values.max_reply_tokens > 0).then_some(values.max_reply_tokens);
        config.extra = values.extra.clone();
        config
    }

    /// Connects to the model server the settings name (else the local servers that
    /// answer). `logged` is a resumed conversation's (base URL, model): its model is
    /// preferred when the chosen server has it, but its server is never taken on the
    /// log's word — the user is told how to name it. The repository's egress setting is
    /// checked before anything of it is sent.
    pub async fn client(
        &self,
        logged: Option<(&str, &str)>,
    ) -> std::result::Result<Client, SessionError> {
        match self.try_client(logged).await? {
            Ok(client) => Ok(client),
            Err(err) => Err(server_failure(err, logged)),
        }
    }

    /// `client`, with the server's own failure kept apart and typed (the outer error is
    /// a refusal of wright's: egress, a bad URL), for a caller that goes on with another
    /// profile when the server does not answer.
    pub async fn try_client(
        &self,
        logged: Option<(&str, &str)>,
    ) -> Result<std::result::Result<Client, wright_llm::LlmError>> {
        let choice = ServerChoice {
            preferred_model: logged.map(|(_, model)| model.to_string()),
            ..self.server_choice()
        };
        // Nothing is asked of a server the code may not go to, not even its models.
        if let Some(url) = &choice.base_url {
            self.check_egress(&wright_llm::normalize_base_url(url)?)?;
        }
        let client = match connect_to(choice.clone(), self.client_config()).await {
            Ok(client) => client,
            Err(wright_llm::LlmError::NothingToRun { .. }) if self.may_pull() => {
                console().pull_default().await?;
                match connect_to(choice, self.client_config()).await {
                    Ok(client) => client,
                    Err(err) => return Ok(Err(err)),
                }
            }
            Err(err) => return Ok(Err(err)),
        };
        self.check_egress(&client.config().base_url)?;
        Ok(Ok(client))
    }

    /// Whether the default model may be downloaded now that nothing else can run: `--pull`,
    /// or the user's yes when someone is there to answer.
    fn may_pull(&self) -> bool {
        self.args.pull
            || (console().can_ask(self.json) && console().yes(&console().pull_question()))
    }

    /// The server and model the settings name.
    pub fn server_choice(&self) -> ServerChoice {
        ServerChoice {
            base_url: self.values.base_url.clone(),
            model_file: self.values.model_file.clone(),
            window: self.values.context_window,
            model: self.values.model.clone(),
            preferred_model: None,
            api_key: self.values.api_key.clone(),
        }
    }

    /// A client for `model` on `base_url` with these settings (chat's /model).
    pub async fn client_for(
        &self,
        base_url: &str,
        model: &str,
    ) -> std::result::Result<Client, SessionError> {
        let choice = ServerChoice {
            base_url: Some(base_url.to_string()),
            model_file: None,
            window: None,
            model: Some(model.to_string()),
            preferred_model: None,
            api_key: self.values.api_key.clone(),
        };
        self.check_egress(&wright_llm::normalize_base_url(base_url)?)?;
        connect_to(choice, self.client_config())
            .await
            .map_err(|err| server_failure(err, None))
    }

    /// Refuses a server the repository's code may not go to; asks, where egress is `ask`
    /// and someone can answer, for one that is not on this machine.
    pub fn check_egress(&self, base_url: &str) -> Result<()> {
        let destination = wright_llm::destination(base_url);
        let host = wright_llm::host_and_port(base_url);
        let repo = self.repo.as_deref();
        let mut record = Consent::open(&Consent::default_path())?;
        let granted = repo.is_some_and(|repo| record.allows(consent::Kind::Egress, repo, &host));
        match self.values.egress_verdict(destination, base_url, granted) {
            EgressVerdict::Allowed => Ok(()),
            EgressVerdict::Refused(why) => bail!("{why}"),
            EgressVerdict::Ask if self.allow_remote => Ok(()),
            EgressVerdict::Ask if console().can_ask(self.json) => {
                let question = format!(
                    "The model server {base_url} is not on this machine: send this repository's code ({}) to {host}?",
                    repo.map_or_else(String::new, |r| r.display().to_string())
                );
                if !console().yes(&question) {
                    bail!("not sent: the code stays here. Use a server on this machine, or allow {host} with `wright allow egress {host}`");
                }
                if let Some(repo) = repo {
                    record.allow(consent::Kind::Egress, repo, &host)?;
                }
                Ok(())
            }
            EgressVerdict::Ask => bail!(
                "the model server {base_url} is not on this machine, and this repository's code goes there only with your consent: pass --allow-remote for this run, run `wright allow egress {host}` in the repository to allow it for good, or set egress = \"any\""
            ),
        }
    }

    pub fn limits(&self) -> Limits {
        crate::limits(&self.values)
    }

    /// The sandbox these settings ask for, started through this program (`wright` is its
    /// own sandbox launcher).
    /// How the session's commands are confined, and the secrets its shell gets (those of
    /// `--secret` and those your configuration grants on this repository): a secret not
    /// stored is an error here, before anything starts.
    pub fn sandbox_choice(&self) -> Result<crate::SandboxChoice> {
        let secrets = match &self.args.given_secrets {
            Some(given) => crate::Grants::given(given)?,
            None => crate::Grants::resolve(
                &self.args.secrets,
                &self.values.secrets,
                &wright_config::secrets::SecretStore::default_location(),
            )?,
        };
        Ok(crate::SandboxChoice {
            mode: self.sandbox_mode()?,
            options: self.sandbox_options(),
            launcher: crate::Launcher::this_program()?,
            secrets,
            // Asked at a terminal; a front with nobody to ask says no.
            repo_hooks: match self.args.allow_repo_hooks {
                true => crate::RepoHooksChoice::AllowOnce,
                false => crate::RepoHooksChoice::Ask,
            },
            repo_mcp: match self.args.allow_repo_mcp {
                true => crate::RepoHooksChoice::AllowOnce,
                false => crate::RepoHooksChoice::Ask,
            },
        })
    }

    pub fn sandbox_options(&self) -> SandboxOptions {
        SandboxOptions::of(&self.values, self.args.verbose)
    }
}
