//! The merged configuration as typed values, wright's defaults filled in: what a session
//! (any front end's) runs with. Every value can still be traced to its origin through the
//! `Config` it was read from.

use crate::Config;
use crate::ConfigError;
use crate::Origin;
use std::path::Path;
use wright_protocol::Price;

/// Where a repository's own configuration lives, relative to its top level.
pub const REPO_FILE: &str = ".wright/config.toml";

/// Request fields wright sets itself, which `extra` may not replace.
const WRIGHTS_OWN_FIELDS: &[&str] = &[
    "model",
    "messages",
    "tools",
    "stream",
    "stream_options",
    "temperature",
    "max_tokens",
    "return_progress",
];

/// wright's defaults, as they appear in `wright config show`.
const DEFAULTS: &[(&str, DefaultValue)] = &[
    ("tool_calling", DefaultValue::Str("auto")),
    ("constrain", DefaultValue::Str("auto")),
    ("tools", DefaultValue::Str("auto")),
    ("max_reply_tokens", DefaultValue::Int(4096)),
    ("egress", DefaultValue::Str("ask")),
    ("run.max_steps", DefaultValue::Int(50)),
    ("run.condense_at", DefaultValue::Float(0.75)),
    ("run.idle_timeout", DefaultValue::Int(600)),
    ("run.stream", DefaultValue::Bool(true)),
    ("assist.level", DefaultValue::Str("auto")),
    ("review.rounds", DefaultValue::Int(1)),
    ("sandbox.level", DefaultValue::Str("auto")),
    ("sandbox.network", DefaultValue::Bool(false)),
    ("sandbox.max_processes", DefaultValue::Int(512)),
    ("sandbox.max_file_size", DefaultValue::Int(4096)),
];

/// wright's default for `key`, where it has one; limits a repository's file may lower
/// count from it (the window from what wright asks of Ollama).
pub(crate) fn default_of(key: &str) -> Option<toml::Value> {
    if key == "context_window" {
        return Some(toml::Value::Integer(32768));
    }
    DEFAULTS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, value)| value.value())
}

enum DefaultValue {
    Str(&'static str),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl DefaultValue {
    fn value(&self) -> toml::Value {
        match self {
            DefaultValue::Str(s) => toml::Value::String((*s).to_string()),
            DefaultValue::Int(n) => toml::Value::Integer(*n),
            DefaultValue::Float(x) => toml::Value::Float(*x),
            DefaultValue::Bool(b) => toml::Value::Boolean(*b),
        }
    }
}

/// Where this repository's code may be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Egress {
    /// Only to servers on this machine (loopback) or the embedded engine.
    LocalOnly,
    /// To another server once the user said yes (asked on the first request).
    Ask,
    Any,
}

impl Egress {
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "local_only" => Some(Egress::LocalOnly),
            "ask" => Some(Egress::Ask),
            "any" => Some(Egress::Any),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Egress::LocalOnly => "local_only",
            Egress::Ask => "ask",
            Egress::Any => "any",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The profile chosen, if any.
    pub profile: Option<String>,
    /// The profiles to go on with when the one in use cannot, in order.
    pub fallback: Vec<String>,
    pub base_url: Option<String>,
    /// A GGUF file (or a stored model's name) for the embedded engine.
    pub model_file: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub context_window: Option<u64>,
    pub tool_calling: String,
    /// `auto` or `off`: constrained decoding where the server enforces it.
    pub constrain: String,
    /// The tool set asked for: `auto`, a preset or names (checked where tools are built).
    pub tools: String,
    pub temperature: Option<f32>,
    pub max_reply_tokens: u32,
    /// Fields added to every request body.
    pub extra: serde_json::Map<String, serde_json::Value>,
    pub price: Option<Price>,
    pub max_cost: Option<f64>,
    pub max_steps: u32,
    /// The help the model gets, piece by piece (`[assist]`; `auto` is decided by the
    /// policy once the model is known).
    pub assist: crate::assist::Assist,
    /// One line for each deprecated key or flag set, naming its replacement: the front
    /// end shows them.
    pub deprecated: Vec<String>,
    /// The profile of the second agent that reviews the change before `finish`.
    pub review_profile: Option<String>,
    /// How many times the reviewer's findings go back to the working agent.
    pub review_rounds: u32,
    pub max_tokens: Option<u64>,
    pub max_time: Option<u64>,
    pub condense_at: f64,
    pub idle_timeout: u64,
    pub stream: bool,
    pub sandbox_level: String,
    pub network: bool,
    /// Hosts the commands may reach through wright's proxy (`sandbox.allow_hosts`).
    pub allow_hosts: Vec<String>,
    pub docker_image: Option<String>,
    /// The Docker engine's address (`sandbox.docker_host`).
    pub docker_host: Option<String>,
    /// `bind` or `copy` (`sandbox.docker_workspace`); `None`: by the engine's address.
    pub docker_workspace: Option<String>,
    pub max_processes: u64,
    pub max_memory: Option<u64>,
    pub max_file_size: u64,
    pub max_disk: Option<u64>,
    pub egress: Egress,
    /// Where the egress setting came from (a default, a file and line).
    pub egress_origin: Origin,
    /// The secrets `[repos."PATH"].secrets` of the user's file grants on this repository.
    pub secrets: Vec<String>,
    /// When to ask before an action runs; `None`: the front end's default (`run`: never,
    /// `chat` and the server: risky).
    pub confirm: Option<wright_protocol::ConfirmMode>,
}

impl Config {
    /// wright's defaults, below everything else.
    pub fn with_defaults(mut self) -> Self {
        for (key, value) in DEFAULTS {
            self = self.with(key, value.value(), Origin::Default);
        }
        self
    }
}

impl Settings {
    /// Reads the typed settings from a merged `config` (profile resolved). `repo` is the
    /// repository (or directory) the session works on, for `[repos."PATH"]`; `env` reads
    /// the variable an `api_key_env` names.
    pub fn from_config(
        config: &Config,
        repo: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let config = config.clone().with_defaults();
        let string = |key: &str| config.str(key).map(str::to_string);
        let uint = |key: &str| config.uint(key);
        let price = match (config.float("price_in"), config.float("price_out")) {
            (Some(prompt), Some(completion)) => Some(Price { prompt, completion }),
            _ => None,
        };
        let max_cost = config.float("max_cost");
        if let (Some(_), None) = (max_cost, price) {
            return Err(ConfigError::NoPrice {
                origin: origin_of(&config, "max_cost"),
            });
        }
        let extra = config
            .get("extra")
            .and_then(|s| serde_json::to_value(&s.value).ok())
            .and_then(|v| match v {
                serde_json::Value::Object(map) => Some(map),
                _ => None,
            })
            .unwrap_or_default();
        let own_option = extra
            .get("options")
            .and_then(|o| o.get("num_ctx"))
            .map(|_| "options.num_ctx".to_string());
        if let Some(key) = extra
            .keys()
            .find(|k| WRIGHTS_OWN_FIELDS.contains(&k.as_str()))
            .cloned()
            .or(own_option)
        {
            return Err(ConfigError::OwnField {
                origin: origin_of(&config, "extra"),
                key,
            });
        }
        let (assist, deprecated) = crate::assist::Assist::from_config(&config);
        let (egress, egress_origin) = egress_for(&config, repo, &env);
        let secrets = per_repo(&config, repo, "secrets", &env)
            .and_then(|sourced| sourced.value.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|name| name.as_str().map(str::to_string))
            .collect();
        Ok(Settings {
            profile: string("profile"),
            fallback: config
                .get("fallback")
                .and_then(|sourced| sourced.value.as_array().cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|name| name.as_str().map(|n| n.trim().to_string()))
                .collect(),
            base_url: string("base_url"),
            model_file: string("model_file"),
            model: string("model"),
            api_key: api_key(&config, env)?,
            context_window: uint("context_window"),
            tool_calling: string("tool_calling").unwrap_or_else(|| "auto".into()),
            constrain: string("constrain").unwrap_or_else(|| "auto".into()),
            tools: string("tools").unwrap_or_else(|| "auto".into()),
            temperature: config.float("temperature").map(|t| t as f32),
            max_reply_tokens: uint("max_reply_tokens")
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(u32::MAX),
            extra,
            price,
            max_cost,
            max_steps: uint("run.max_steps")
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(u32::MAX),
            max_tokens: uint("run.max_tokens"),
            max_time: uint("run.max_time"),
            condense_at: config.float("run.condense_at").unwrap_or(0.75),
            idle_timeout: uint("run.idle_timeout").unwrap_or(600),
            stream: config.bool("run.stream").unwrap_or(true),
            assist,
            deprecated,
            review_profile: string("review.profile"),
            review_rounds: uint("review.rounds")
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(1),
            sandbox_level: string("sandbox.level").unwrap_or_else(|| "auto".into()),
            network: config.bool("sandbox.network").unwrap_or(false),
            allow_hosts: config
                .get("sandbox.allow_hosts")
                .and_then(|sourced| sourced.value.as_array().cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|host| host.as_str().map(str::to_string))
                .collect(),
            docker_image: string("sandbox.docker_image"),
            docker_host: string("sandbox.docker_host"),
            docker_workspace: string("sandbox.docker_workspace"),
            max_processes: uint("sandbox.max_processes").unwrap_or(512),
            max_memory: uint("sandbox.max_memory"),
            max_file_size: uint("sandbox.max_file_size").unwrap_or(4096),
            max_disk: uint("sandbox.max_disk"),
            egress,
            egress_origin,
            secrets,
            confirm: config.str("confirm").and_then(|mode| mode.parse().ok()),
        })
    }
}

/// May this repository's code go to a server of class `destination`?
#[derive(Debug, Clone, PartialEq)]
pub enum EgressVerdict {
    Allowed,
    /// Never, with the sentence that says why and what to do.
    Refused(String),
    /// Only once the user says yes (asked, or a flag, or a recorded grant).
    Ask,
}

impl Settings {
    /// The verdict for `base_url`, of class `destination`; `granted` when the user already
    /// allowed this server for this repository.
    pub fn egress_verdict(
        &self,
        destination: wright_protocol::Destination,
        base_url: &str,
        granted: bool,
    ) -> EgressVerdict {
        if destination.is_local() {
            return EgressVerdict::Allowed;
        }
        match self.egress {
            Egress::Any => EgressVerdict::Allowed,
            Egress::Ask if granted => EgressVerdict::Allowed,
            Egress::Ask => EgressVerdict::Ask,
            Egress::LocalOnly => EgressVerdict::Refused(format!(
                "this repository's code may only go to a server on this machine (egress = \"local_only\", {}), and {base_url} is {}; use a local server or profile",
                self.egress_origin,
                match destination {
                    wright_protocol::Destination::LocalNetwork => "on the local network",
                    _ => "elsewhere",
                }
            )),
        }
    }
}

fn origin_of(config: &Config, key: &str) -> String {
    config
        .get(key)
        .map(|s| s.origin.to_string())
        .unwrap_or_else(|| "the configuration".into())
}

/// The key given directly (`--api-key`, `OPENAI_API_KEY`) or through the variable an
/// `api_key_env` names, whichever was set at the higher precedence.
fn api_key(
    config: &Config,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<String>, ConfigError> {
    let direct = config.get("api_key");
    let named = config.get("api_key_env");
    let rank = |s: Option<&crate::Sourced>| s.map_or(-1, |s| i16::from(s.origin.rank()));
    if rank(named) > rank(direct) {
        let Some(named) = named else {
            return Ok(None);
        };
        let var = named.value.as_str().unwrap_or_default().to_string();
        return match env(&var).filter(|v| !v.is_empty()) {
            Some(key) => Ok(Some(key)),
            None => Err(ConfigError::KeyMissing {
                var,
                origin: named.origin.to_string(),
            }),
        };
    }
    Ok(direct.and_then(|s| s.value.as_str()).map(str::to_string))
}

/// `[repos."PATH"].NAME` (`field`) for this repository, when a file sets it.
fn per_repo(
    config: &Config,
    repo: Option<&Path>,
    field: &str,
    env: &impl Fn(&str) -> Option<String>,
) -> Option<crate::Sourced> {
    // The path as written may start with `~` or pass through a link (`/home` →
    // `/var/home`): compared as the directory it names.
    let real = |written: &str| {
        let expanded = match (written.strip_prefix("~/"), env("HOME")) {
            (Some(rest), Some(home)) => Path::new(&home).join(rest),
            _ if written == "~" => env("HOME").map(Into::into).unwrap_or_default(),
            _ => Path::new(written).to_path_buf(),
        };
        expanded.canonicalize().unwrap_or(expanded)
    };
    let suffix = format!(".{field}");
    let repo = repo?;
    let repo = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
    config.entries().find_map(|(key, sourced)| {
        let path = key.strip_prefix("repos.")?.strip_suffix(suffix.as_str())?;
        (real(path) == repo).then(|| sourced.clone())
    })
}

/// `[repos."PATH"].egress` in the user's file for this repository, else the `egress`
/// the sources agree on, else `ask`.
fn egress_for(
    config: &Config,
    repo: Option<&Path>,
    env: &impl Fn(&str) -> Option<String>,
) -> (Egress, Origin) {
    let per_repo = per_repo(config, repo, "egress", env);
    let chosen = per_repo.or_else(|| config.get("egress").cloned());
    match chosen {
        Some(sourced) => (
            sourced
                .value
                .as_str()
                .and_then(Egress::parse)
                .unwrap_or(Egress::Ask),
            sourced.origin,
        ),
        None => (Egress::Ask, Origin::Default),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn defaults_fill_what_nothing_sets() {
        let settings = Settings::from_config(&Config::default(), None, env(&[])).unwrap();
        assert_eq!(settings.max_steps, 50);
        assert_eq!(settings.max_reply_tokens, 4096);
        assert_eq!(settings.sandbox_level, "auto");
        assert_eq!(settings.egress, Egress::Ask);
        assert_eq!(settings.egress_origin, Origin::Default);
        assert_eq!(settings.api_key, None);
    }

    #[test]
    fn the_api_key_comes_from_the_higher_source() {
        let config = Config::default()
            .with_environment(env(&[("OPENAI_API_KEY", "direct")]))
            .with(
                "api_key_env",
                toml::Value::String("HOSTED_KEY".into()),
                Origin::Flag("--profile".into()),
            );
        let settings =
            Settings::from_config(&config, None, env(&[("HOSTED_KEY", "named")])).unwrap();
        assert_eq!(settings.api_key.as_deref(), Some("named"));
        let err = Settings::from_config(&config, None, env(&[])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "flag --profile says the API key is in the environment variable HOSTED_KEY, which is not set"
        );
        let config = Config::default()
            .with(
                "api_key_env",
                toml::Value::String("HOSTED_KEY".into()),
                Origin::Default,
            )
            .with_environment(env(&[("OPENAI_API_KEY", "direct")]));
        let settings = Settings::from_config(&config, None, env(&[])).unwrap();
        assert_eq!(settings.api_key.as_deref(), Some("direct"));
    }

    #[test]
    fn egress_per_repository_wins() {
        let config = Config::default()
            .with(
                "egress",
                toml::Value::String("any".into()),
                Origin::Env("X".into()),
            )
            .with(
                "repos./work/secret.egress",
                toml::Value::String("local_only".into()),
                Origin::UserFile {
                    path: "/c".into(),
                    line: 3,
                },
            );
        let secret =
            Settings::from_config(&config, Some(Path::new("/work/secret")), env(&[])).unwrap();
        assert_eq!(secret.egress, Egress::LocalOnly);
        let other =
            Settings::from_config(&config, Some(Path::new("/work/other")), env(&[])).unwrap();
        assert_eq!(other.egress, Egress::Any);
    }

    #[test]
    fn a_cost_cap_needs_prices() {
        let config = Config::default().with(
            "max_cost",
            toml::Value::Float(2.0),
            Origin::Flag("--max-cost".into()),
        );
        let err = Settings::from_config(&config, None, env(&[])).unwrap_err();
        assert!(err.to_string().contains("price_in"), "{err}");
    }
}
