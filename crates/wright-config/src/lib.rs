//! wright's configuration, in one place, with where each value came from.
//!
//! Sources, in rising precedence: the user's file (`~/.config/wright/config.toml`), the
//! repository's file (`.wright/config.toml`, read by the caller from the user's checkout
//! at the commit the conversation starts from, never from the agent's clone), the
//! environment, the command line. Each value keeps its origin for `wright config show`.
//! A repository's file may set harmless keys on its own; keys that weaken the sandbox,
//! open the network, name hosts or secrets need the user's approval of that file's exact
//! content (`consent`), and some keys only the user's own file may set.
//!
//! Model profiles (`[profiles.NAME]`) are resolved here too: the profile chosen at the
//! highest precedence gives its values at that precedence, so `--profile hosted` beats
//! `OPENAI_BASE_URL`, which beats a file's `profile = "local"`.

pub mod agents;
pub mod assist;
pub mod automations;
pub mod consent;
pub mod edit;
mod environment;
mod file;
mod route;
mod schema;
pub mod secrets;
pub mod server;
mod settings;

pub use route::RouteCommand;
pub use settings::Egress;
pub use settings::EgressVerdict;
pub use settings::Settings;
pub use settings::REPO_FILE;

pub use file::Setting;
pub use schema::Key;
pub use schema::Kind;
pub use schema::RepoRule;
pub use schema::KEYS;
pub use schema::WIDENING;

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file} is not valid TOML: {message}")]
    Parse { file: String, message: String },
    #[error("{file} line {line}: unknown key {key}{}", closest.as_ref().map(|c| format!(" (did you mean {c}?)")).unwrap_or_default())]
    Unknown {
        file: String,
        line: usize,
        key: String,
        closest: Option<String>,
    },
    #[error("{file} line {line}: {key} must be {expected}")]
    Type {
        file: String,
        line: usize,
        key: String,
        expected: String,
    },
    #[error("{file} line {line}: this wright reads configuration version 1 (`version = 1`)")]
    Version { file: String, line: usize },
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{file} sets {keys}, which only your own configuration file may set")]
    UserOnly { file: String, keys: String },
    #[error("{file} asks for {keys}, which a repository's file may only set once you have approved its content (shown by `wright allow repo-config`, in the repository)")]
    NeedsApproval { file: String, keys: String },
    #[error("{origin} says the API key is in the environment variable {var}, which is not set")]
    KeyMissing { var: String, origin: String },
    #[error("{origin} sets max_cost, which needs the profile's price_in and price_out (per million tokens) to count the cost")]
    NoPrice { origin: String },
    #[error(
        "{origin}: extra may not set {key}, which wright sets itself (use the key of that name)"
    )]
    OwnField { origin: String, key: String },
    #[error("{flag} {value} is out of range: it must be {expected}")]
    Flag {
        flag: String,
        value: String,
        expected: String,
    },
    #[error("there is no profile '{name}'{}", if defined.is_empty() { "; no profile is defined (add a [profiles.NAME] table to your configuration)".to_string() } else { format!("; defined: {}", defined.join(", ")) })]
    NoProfile { name: String, defined: Vec<String> },
}

/// Where a value came from, lowest precedence first.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// wright's own default.
    Default,
    /// A variable used only when nothing else says (`OLLAMA_HOST`, often set for the
    /// Ollama server itself).
    EnvFallback(String),
    UserFile {
        path: PathBuf,
        line: usize,
    },
    RepoFile {
        name: String,
        line: usize,
    },
    Env(String),
    Flag(String),
}

impl Origin {
    /// Higher wins.
    pub fn rank(&self) -> u8 {
        match self {
            Origin::Default => 0,
            Origin::EnvFallback(_) => 1,
            Origin::UserFile { .. } => 2,
            Origin::RepoFile { .. } => 3,
            Origin::Env(_) => 4,
            Origin::Flag(_) => 5,
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Default => write!(f, "default"),
            Origin::EnvFallback(var) => write!(f, "environment {var} (when nothing else says)"),
            Origin::UserFile { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::RepoFile { name, line } => write!(f, "{name}:{line}"),
            Origin::Env(var) => write!(f, "environment {var}"),
            Origin::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

/// One value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced {
    pub value: toml::Value,
    pub origin: Origin,
}

/// What the server keys of a chosen profile become, in the flat key space.
const PROFILE_KEYS: &[&str] = &[
    "base_url",
    "model_file",
    "model",
    "api_key_env",
    "context_window",
    "tool_calling",
    "temperature",
    "max_reply_tokens",
    "extra",
    "price_in",
    "price_out",
    "max_cost",
];

/// The merged configuration.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Every value set, by dotted key, with the highest-precedence one winning.
    values: BTreeMap<String, Sourced>,
    /// The files read, in order.
    files: Vec<String>,
}

impl Config {
    /// The user's own file: `$XDG_CONFIG_HOME/wright/config.toml`, else
    /// `~/.config/wright/config.toml`.
    pub fn user_file() -> Option<PathBuf> {
        std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
            .map(|base| base.join("wright").join("config.toml"))
    }

    /// Adds the user's file at `path` if it exists.
    pub fn with_user_file(mut self, path: &Path) -> Result<Self, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(self),
            Err(source) => {
                return Err(ConfigError::Io {
                    path: path.display().to_string(),
                    source,
                })
            }
        };
        let name = path.display().to_string();
        for setting in file::parse(&text, &name)? {
            let origin = Origin::UserFile {
                path: path.to_path_buf(),
                line: setting.line,
            };
            self.set(setting.key(), setting.value, origin);
        }
        self.files.push(name);
        Ok(self)
    }

    /// Adds a repository's file (its content, and a name for messages). Keys it may not
    /// set alone are refused unless `approved` (the user approved this exact content).
    pub fn with_repo_file(
        mut self,
        text: &str,
        name: &str,
        approved: bool,
    ) -> Result<Self, ConfigError> {
        let settings = file::parse(text, name)?;
        let rule = |s: &Setting| {
            let path: Vec<&str> = s.path.iter().map(String::as_str).collect();
            let rule = schema::key(&path).map_or(RepoRule::UserOnly, |k| k.repo);
            // Choosing to keep the code on this machine never needs asking.
            if s.key() == "egress" && s.value.as_str() == Some("local_only") {
                return RepoRule::Allowed;
            }
            match rule {
                RepoRule::Lower if self.lowers(&s.key(), &s.value) => RepoRule::Allowed,
                RepoRule::Lower => RepoRule::NeedsApproval,
                rule => rule,
            }
        };
        let listed = |wanted: RepoRule| {
            settings
                .iter()
                .filter(|s| rule(s) == wanted)
                .map(Setting::key)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let user_only = listed(RepoRule::UserOnly);
        if !user_only.is_empty() {
            return Err(ConfigError::UserOnly {
                file: name.to_string(),
                keys: user_only,
            });
        }
        let needs = listed(RepoRule::NeedsApproval);
        if !needs.is_empty() && !approved {
            return Err(ConfigError::NeedsApproval {
                file: name.to_string(),
                keys: needs,
            });
        }
        for setting in settings {
            let origin = Origin::RepoFile {
                name: name.to_string(),
                line: setting.line,
            };
            self.set(setting.key(), setting.value, origin);
        }
        self.files.push(name.to_string());
        Ok(self)
    }

    /// Whether `value` for the limit `key` is at most what holds without it: the value set
    /// so far, else wright's default (0 stands for no limit).
    fn lowers(&self, key: &str, value: &toml::Value) -> bool {
        let number = |v: &toml::Value| match v {
            toml::Value::Integer(0) if key == "max_reply_tokens" => Some(f64::INFINITY),
            toml::Value::Integer(n) => Some(*n as f64),
            toml::Value::Float(x) => Some(*x),
            _ => None,
        };
        let ceiling = self
            .values
            .get(key)
            .map(|s| s.value.clone())
            .or_else(|| settings::default_of(key))
            .and_then(|v| number(&v))
            .unwrap_or(f64::INFINITY);
        number(value).is_some_and(|wanted| wanted <= ceiling)
    }

    /// Whether a repository's file sets anything at all (comments and `version` aside).
    pub fn repo_file_sets_anything(text: &str, name: &str) -> Result<bool, ConfigError> {
        Ok(!Self::repo_file_keys(text, name)?.is_empty())
    }

    /// The keys a repository's file sets (comments and `version` aside), in its order.
    pub fn repo_file_keys(text: &str, name: &str) -> Result<Vec<String>, ConfigError> {
        Ok(file::parse(text, name)?
            .iter()
            .map(Setting::key)
            .filter(|key| key != "version")
            .collect())
    }

    /// Whether a repository's file asks for anything that needs approval.
    pub fn repo_file_needs_approval(text: &str, name: &str) -> Result<bool, ConfigError> {
        Ok(Self::repo_file_asks_for(text, name)?.is_some())
    }

    /// The keys of a repository's file that need the user's approval, as a list for
    /// people ("sandbox.network, egress"); `None` when none does.
    pub fn repo_file_asks_for(text: &str, name: &str) -> Result<Option<String>, ConfigError> {
        match Config::default().with_repo_file(text, name, false) {
            Ok(_) => Ok(None),
            Err(ConfigError::NeedsApproval { keys, .. }) => Ok(Some(keys)),
            Err(err) => Err(err),
        }
    }

    /// Sets `key` from an environment variable or a flag (their precedence is their
    /// origin's).
    pub fn with(mut self, key: &str, value: toml::Value, origin: Origin) -> Self {
        self.set(key.to_string(), value, origin);
        self
    }

    /// Sets `key` from the flag `flag`, checked as a file's value would be.
    pub fn with_flag(self, key: &str, value: toml::Value, flag: &str) -> Result<Self, ConfigError> {
        Self::check_flag(key, &value, flag)?;
        Ok(self.with(key, value, Origin::Flag(flag.to_string())))
    }

    /// Checks the value a flag gives `key` against the key's type and range (the same
    /// ones a file's value meets): the error names the flag, the value and what it must
    /// be. Front ends call it before doing anything, so a bad flag costs nothing.
    pub fn check_flag(key: &str, value: &toml::Value, flag: &str) -> Result<(), ConfigError> {
        let path: Vec<&str> = key.split('.').collect();
        let Some(known) = schema::key(&path) else {
            return Ok(());
        };
        file::check(known.kind, value).map_err(|expected| ConfigError::Flag {
            flag: flag.to_string(),
            value: match value {
                toml::Value::String(text) => format!("'{text}'"),
                other => other.to_string(),
            },
            expected,
        })
    }

    fn set(&mut self, key: String, value: toml::Value, origin: Origin) {
        let keep = self
            .values
            .get(&key)
            .is_some_and(|old| old.origin.rank() > origin.rank());
        if !keep {
            self.values.insert(key, Sourced { value, origin });
        }
    }

    /// Resolves the chosen profile into the top-level server keys (`model`, `base_url`,
    /// …) at the precedence the choice was made with. A named profile must exist.
    pub fn resolve_profile(mut self) -> Result<Self, ConfigError> {
        let Some(chosen) = self.values.get("profile").cloned() else {
            return Ok(self);
        };
        let name = chosen.value.as_str().unwrap_or_default().to_string();
        let prefix = format!("profiles.{name}.");
        let values: Vec<(String, Sourced)> = self
            .values
            .iter()
            .filter_map(|(key, sourced)| {
                key.strip_prefix(&prefix)
                    .map(|rest| (rest.to_string(), sourced.clone()))
            })
            .collect();
        if values.is_empty() {
            return Err(ConfigError::NoProfile {
                name,
                defined: self.profiles(),
            });
        }
        for (key, sourced) in values {
            // A value given directly at the choice's precedence or above (a flag next to
            // --profile) stays: the profile only fills in the rest.
            let given = self
                .values
                .get(&key)
                .is_some_and(|s| s.origin.rank() >= chosen.origin.rank());
            if PROFILE_KEYS.contains(&key.as_str()) && !given {
                // The profile's value, at the precedence of its choosing.
                self.set(key, sourced.value, chosen.origin.clone());
            }
        }
        Ok(self)
    }

    /// The names of the profiles defined.
    pub fn profiles(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .values
            .keys()
            .filter_map(|key| key.strip_prefix("profiles."))
            .filter_map(|rest| rest.split('.').next())
            .map(str::to_string)
            .collect();
        names.dedup();
        names
    }

    pub fn get(&self, key: &str) -> Option<&Sourced> {
        self.values.get(key)
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(|s| s.value.as_str())
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(|s| s.value.as_integer())
    }

    pub fn uint(&self, key: &str) -> Option<u64> {
        self.int(key).and_then(|n| u64::try_from(n).ok())
    }

    pub fn float(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(|s| match &s.value {
            toml::Value::Float(x) => Some(*x),
            toml::Value::Integer(n) => Some(*n as f64),
            _ => None,
        })
    }

    pub fn bool(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(|s| s.value.as_bool())
    }

    /// Every value set, by key.
    pub fn entries(&self) -> impl Iterator<Item = (&String, &Sourced)> {
        self.values.iter()
    }

    /// The files read.
    pub fn files(&self) -> &[String] {
        &self.files
    }
}

#[cfg(test)]
mod tests;
