//! The model a reopened conversation goes on with (`wright resume`, `wright fork` with a
//! message, the server's and an editor's runs of a conversation that exists). Its log
//! says which model, on which server, it is on now (its start's, or its last switch's);
//! the log is hostile input, so that server is never connected to on the log's word.
//!
//! What it guarantees:
//! - nothing named (no flag, no variable, no setting of the request): the settings must
//!   give that same model on that same server, else the run is refused — before anything
//!   is sent to a model or written to the log — with the exact flags (or the request's
//!   settings) that go on with it. One server is taken without being named: a loopback
//!   server that a profile of the user's own configuration file (never the repository's,
//!   never the log) names; that profile is used.
//! - another model or server named: it is used, and the change is logged as a
//!   `model_switch` (reason `chosen`) before the next step, so `wright ls`, `wright show`,
//!   the server's listing and its UI name the model the conversation is on now.

use super::CommonArgs;
use super::SessionSettings;
use crate::profiles::Chosen;
use crate::Existing;
use crate::Profiles;
use anyhow::bail;
use anyhow::Result;
use wright_config::Config;
use wright_protocol::Destination;
use wright_protocol::ModelAt;

/// Who names the model a reopened conversation goes on with (and so how a refusal says
/// what to do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// This invocation's flags and the environment (`wright resume`, `wright fork`, an
    /// editor's `wright acp`).
    Flags,
    /// A server request's settings over the server's own record of the conversation's
    /// (`named`: they name a model, a server or a profile).
    Request { named: bool },
}

/// How a reopened conversation goes on: the arguments to resolve its settings with, and
/// the model it is on, to compare with what they give.
pub struct Plan {
    /// The caller's arguments; with nothing named, the profile in force after a fallback
    /// switch, or the user's profile that names the loopback server it is on.
    pub args: CommonArgs,
    /// The model and server the log says it is on now: compared with, never connected to.
    pub on_now: ModelAt,
    /// What was named of the model and its server, in words; empty when nothing was.
    named: Vec<String>,
    naming: Naming,
    id: String,
}

impl Plan {
    pub fn new(args: &CommonArgs, existing: &Existing, naming: Naming) -> Result<Self> {
        let start = &existing.start;
        let on_now = existing.in_force.clone().unwrap_or_else(|| ModelAt {
            profile: None,
            model: start.model.clone(),
            base_url: start.base_url.clone(),
            destination: wright_llm::destination(&start.base_url),
        });
        let named = match naming {
            Naming::Flags => super::named_model(args)?,
            Naming::Request { named: true } => vec!["the request's settings".to_string()],
            Naming::Request { named: false } => Vec::new(),
        };
        let mut args = args.clone();
        if named.is_empty() {
            if let Some(profile) = &on_now.profile {
                // After a switch to a fallback profile: that profile, as the user's
                // configuration defines it now.
                args.profile = Some(profile.clone());
            } else if let Some((profile, model)) = user_profile_for(&on_now)? {
                args.profile = Some(profile);
                if model.as_deref() != Some(on_now.model.as_str()) {
                    args.model = Some(on_now.model.clone());
                }
            }
        }
        Ok(Self {
            args,
            on_now,
            named,
            naming,
            id: start.conversation.clone(),
        })
    }

    /// The server and model the log names, for the connection's `logged` (its model is
    /// preferred where the server has it; its server is only named in advice).
    pub fn logged(&self) -> (String, String) {
        (self.on_now.base_url.clone(), self.on_now.model.clone())
    }

    /// Before any server is asked anything: with nothing named, settings that name
    /// another server or model than the one the conversation is on are refused.
    pub fn check_settings(&self, settings: &SessionSettings) -> Result<()> {
        if !self.named.is_empty() {
            return Ok(());
        }
        let values = &settings.values;
        if values.model_file.is_some() {
            if !is_engine(&self.on_now.base_url) {
                let file = values.model_file.clone().unwrap_or_default();
                bail!(self.refusal(&format!("wright's embedded engine with {file}")));
            }
            return Ok(());
        }
        let url = values
            .base_url
            .as_deref()
            .map(wright_llm::normalize_base_url)
            .transpose()?;
        let other_url = url.as_ref().filter(|url| **url != self.on_now.base_url);
        let other_model = values
            .model
            .as_ref()
            .filter(|model| **model != self.on_now.model);
        if other_url.is_some() || other_model.is_some() {
            let model = values.model.as_deref().unwrap_or("the server's model");
            let server = url.as_deref().unwrap_or("the local servers found");
            bail!(self.refusal(&format!("{model} on {server}")));
        }
        Ok(())
    }

    /// Once connected: the model the settings gave (the first one tried, when its server
    /// did not answer) is the one the conversation is on; else, named, the change goes in
    /// `profiles` to be logged as a switch, and not named, the run is refused.
    pub fn check_connected(&self, in_use: &ModelAt, profiles: &mut Profiles) -> Result<()> {
        let first = profiles.unanswered.first().map(|gone| &gone.at);
        let target = first.unwrap_or(in_use);
        if target.base_url == self.on_now.base_url && target.model == self.on_now.model {
            return Ok(());
        }
        if !self.named.is_empty() {
            profiles.chosen = Some(Chosen {
                from: self.on_now.clone(),
                detail: format!("named when it went on: {}", self.named.join(", ")),
            });
            return Ok(());
        }
        // A first profile that did not answer is known only as the settings name it,
        // which `check_settings` compared; the switches to the next are logged.
        if first.is_some() {
            return Ok(());
        }
        bail!(self.refusal(&format!("{} on {}", target.model, target.base_url)))
    }

    /// Why the run is refused, and exactly what goes on with the conversation's model.
    fn refusal(&self, other: &str) -> String {
        let Self { on_now, id, .. } = self;
        let same = if is_engine(&on_now.base_url) {
            match self.naming {
                Naming::Flags => {
                    "pass --model-file with that model (`wright model ls` lists them) to go on with it"
                        .to_string()
                }
                Naming::Request { .. } => {
                    "start the server with that model file to go on with it".to_string()
                }
            }
        } else {
            match self.naming {
                Naming::Flags => format!(
                    "pass --base-url {} --model {} to go on with it, or name another model (--model, and --base-url for its server) to switch to it",
                    on_now.base_url, on_now.model
                ),
                Naming::Request { .. } => format!(
                    "give the settings {{\"base_url\": \"{}\", \"model\": \"{}\"}} to go on with it, or name another model (settings.model, and settings.base_url for its server) to switch to it",
                    on_now.base_url, on_now.model
                ),
            }
        };
        format!(
            "conversation {id} is on {} at {}, and the settings now give {other}: wright does not take a server from a log, nor change a conversation's model unless told. {same} (a switch is logged)",
            on_now.model, on_now.base_url
        )
    }
}

/// The profile of the user's own configuration file that names the loopback server
/// `on_now` is on, and that profile's model.
fn user_profile_for(on_now: &ModelAt) -> Result<Option<(String, Option<String>)>> {
    let loopback = wright_llm::destination(&on_now.base_url) == Destination::Loopback;
    if !loopback || is_engine(&on_now.base_url) {
        return Ok(None);
    }
    let Some(path) = Config::user_file().filter(|path| path.is_file()) else {
        return Ok(None);
    };
    let config = Config::default().with_user_file(&path)?;
    for name in config.profiles() {
        let url = config.str(&format!("profiles.{name}.base_url"));
        let same = url
            .and_then(|url| wright_llm::normalize_base_url(url).ok())
            .is_some_and(|url| url == on_now.base_url);
        if same {
            let model = config
                .str(&format!("profiles.{name}.model"))
                .map(str::to_string);
            return Ok(Some((name, model)));
        }
    }
    Ok(None)
}

/// Whether `base_url` is wright's embedded engine's.
fn is_engine(base_url: &str) -> bool {
    base_url.starts_with(&format!("{}://", wright_llm::in_process::ENGINE_SCHEME))
}
