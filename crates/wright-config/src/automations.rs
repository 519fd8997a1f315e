//! Automations (`[automations.NAME]` in the user's own file): what starts a conversation
//! without a person — a forge's webhook or a schedule — on which repository, with which
//! task, and what is done with its result.
//!
//! What it guarantees: only the user's file defines them (a repository's file setting any
//! `automations.*` key is refused by the schema, `RepoRule::UserOnly`); every key is
//! checked against the schema first (unknown keys and wrong types name the file and the
//! line), then each automation as a whole (a webhook names its forge and secret's
//! variable, a schedule its times, a pull request needs a push and the forge's
//! repository, the task names only fields an event has), so `wright serve` refuses a
//! wrong definition at start, never at the first firing.

use crate::file;
use crate::file::Setting;
use crate::ConfigError;
use std::collections::BTreeMap;
use std::path::Path;

/// Why an automation is refused at load.
#[derive(Debug, thiserror::Error)]
pub enum AutomationError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{file} line {line}: automation '{name}': {problem}")]
    Invalid {
        file: String,
        line: usize,
        name: String,
        problem: String,
    },
}

/// What starts an automation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// A forge's `POST /hooks/NAME`, signed with the secret in `secret_env`.
    Webhook { forge: Forge, secret_env: String },
    /// A cron schedule, in a time zone.
    Schedule {
        cron: String,
        timezone: String,
        missed: Missed,
    },
}

/// Whose webhooks come (and so how they are signed and shaped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Forge {
    Github,
    Gitlab,
    Gitea,
}

/// A schedule's time that passed while the server was down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missed {
    /// Fire once at start (however many times were missed).
    RunOnce,
    Skip,
}

/// A firing while `max_running` firings run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WhenBusy {
    Queue,
    Skip,
}

/// Who caused an event, as the forge's payload says (`author_association`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Association {
    Owner,
    Member,
    Collaborator,
    Contributor,
    FirstTimeContributor,
    FirstTimer,
    None,
}

impl Association {
    /// As the user writes it (lower case), or as GitHub sends it (`FIRST_TIME_CONTRIBUTOR`).
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.to_ascii_lowercase().as_str() {
            "owner" => Self::Owner,
            "member" => Self::Member,
            "collaborator" => Self::Collaborator,
            "contributor" => Self::Contributor,
            "first_time_contributor" => Self::FirstTimeContributor,
            "first_timer" => Self::FirstTimer,
            "none" => Self::None,
            _ => return None,
        })
    }

    /// The default: the repository's owners, members and collaborators only.
    pub const TRUSTED: [Association; 3] = [Self::Owner, Self::Member, Self::Collaborator];
}

/// What is done with a firing's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResultPolicy {
    pub push: bool,
    pub pull_request: bool,
    /// The secret holding the forge's token.
    pub token_secret: Option<String>,
    pub api_url: String,
    /// `OWNER/NAME` on the forge.
    pub api_repository: Option<String>,
    pub base: String,
}

/// One automation, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Automation {
    pub name: String,
    pub trigger: Trigger,
    /// A URL to clone, or an absolute path on the server.
    pub repository: String,
    pub task: String,
    pub label: Option<String>,
    pub authors: Vec<Association>,
    pub profile: Option<String>,
    pub max_steps: Option<i64>,
    pub max_time: Option<i64>,
    pub max_tokens: Option<i64>,
    pub max_running: usize,
    pub when_busy: WhenBusy,
    pub result: ResultPolicy,
}

/// The fields a task may name (`{issue.title}`).
pub const TASK_FIELDS: &[&str] = &[
    "issue.title",
    "issue.body",
    "issue.number",
    "issue.url",
    "sender",
    "repository",
];

/// The GitHub API, where pull requests are opened unless `api_url` says otherwise.
pub const GITHUB_API: &str = "https://api.github.com";

/// The automations the user's file at `path` defines (none when it does not exist), by
/// name.
pub fn load(path: &Path) -> Result<Vec<Automation>, AutomationError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ConfigError::Io {
                path: path.display().to_string(),
                source,
            }
            .into())
        }
    };
    parse(&text, &path.display().to_string())
}

/// The automations `text` (the file `name`) defines.
pub fn parse(text: &str, name: &str) -> Result<Vec<Automation>, AutomationError> {
    let mut by_name: BTreeMap<String, Vec<Setting>> = BTreeMap::new();
    for setting in file::parse(text, name)? {
        if setting.path.first().map(String::as_str) == Some("automations") {
            if let Some(automation) = setting.path.get(1) {
                by_name
                    .entry(automation.clone())
                    .or_default()
                    .push(setting.clone());
            }
        }
    }
    by_name
        .into_iter()
        .map(|(automation, settings)| one(name, automation, &settings))
        .collect()
}

/// The settings of one automation, keyed by what follows `automations.NAME.`.
struct Keys<'a> {
    file: &'a str,
    name: String,
    settings: &'a [Setting],
}

impl Keys<'_> {
    fn find(&self, key: &str) -> Option<&Setting> {
        self.settings.iter().find(|s| s.path[2..].join(".") == key)
    }

    fn str(&self, key: &str) -> Option<String> {
        self.find(key)
            .and_then(|s| s.value.as_str())
            .map(str::to_string)
    }

    fn int(&self, key: &str) -> Option<i64> {
        self.find(key).and_then(|s| s.value.as_integer())
    }

    fn bool(&self, key: &str) -> bool {
        self.find(key)
            .and_then(|s| s.value.as_bool())
            .unwrap_or(false)
    }

    /// An error at `key`'s line (else the automation's first line).
    fn invalid(&self, key: &str, problem: impl Into<String>) -> AutomationError {
        let line = self
            .find(key)
            .or(self.settings.first())
            .map_or(0, |s| s.line);
        AutomationError::Invalid {
            file: self.file.to_string(),
            line,
            name: self.name.clone(),
            problem: problem.into(),
        }
    }

    fn required(&self, key: &str, why: &str) -> Result<String, AutomationError> {
        self.str(key)
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| self.invalid(key, format!("{key} is missing ({why})")))
    }
}

fn one(file: &str, name: String, settings: &[Setting]) -> Result<Automation, AutomationError> {
    let keys = Keys {
        file,
        name: name.clone(),
        settings,
    };
    if !valid_name(&name) {
        return Err(keys.invalid(
            "on",
            "its name must be letters, digits, - and _ (it is the webhook's path /hooks/NAME)",
        ));
    }
    let trigger = match keys
        .required("on", "on = \"webhook\" or on = \"schedule\"")?
        .as_str()
    {
        "webhook" => {
            let forge = match keys.required("forge", "github, gitlab or gitea")?.as_str() {
                "github" => Forge::Github,
                "gitlab" => Forge::Gitlab,
                _ => Forge::Gitea,
            };
            let secret_env = keys.required(
                "secret_env",
                "the environment variable holding the webhook's secret",
            )?;
            if !crate::secrets::valid_name(&secret_env) {
                return Err(keys.invalid(
                    "secret_env",
                    format!("secret_env '{secret_env}' is not an environment variable's name"),
                ));
            }
            Trigger::Webhook { forge, secret_env }
        }
        _ => {
            let cron = keys.required("schedule", "when it fires, in cron syntax")?;
            let fields = cron.split_whitespace().count();
            if fields != 5 {
                return Err(keys.invalid(
                    "schedule",
                    format!("schedule '{cron}' has {fields} fields; cron syntax has 5: minute hour day month weekday"),
                ));
            }
            let timezone = keys.str("timezone").unwrap_or_else(|| "UTC".to_string());
            if !valid_timezone(&timezone) {
                return Err(keys.invalid(
                    "timezone",
                    format!("timezone '{timezone}' is not UTC nor an offset such as +02:00"),
                ));
            }
            let missed = match keys.str("missed").as_deref() {
                Some("skip") => Missed::Skip,
                _ => Missed::RunOnce,
            };
            Trigger::Schedule {
                cron,
                timezone,
                missed,
            }
        }
    };
    let repository = keys.required("repository", "a URL to clone or a path on the server")?;
    if !(repository.contains("://") || repository.contains('@') || repository.starts_with('/')) {
        return Err(keys.invalid(
            "repository",
            format!("repository '{repository}' is neither a URL nor an absolute path"),
        ));
    }
    let task = keys.required("task", "what the agent should do")?;
    for field in template_fields(&task) {
        if !TASK_FIELDS.contains(&field.as_str()) {
            return Err(keys.invalid(
                "task",
                format!(
                    "the task names {{{field}}}, which no event has; it may name {}",
                    TASK_FIELDS
                        .iter()
                        .map(|f| format!("{{{f}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    if matches!(trigger, Trigger::Schedule { .. }) {
        if let Some(field) = template_fields(&task).into_iter().next() {
            return Err(keys.invalid(
                "task",
                format!("the task names {{{field}}}, but a schedule has no event to take it from"),
            ));
        }
    }
    let authors = match keys.find("authors") {
        None => Association::TRUSTED.to_vec(),
        Some(setting) => {
            let mut authors = Vec::new();
            for item in setting.value.as_array().into_iter().flatten() {
                let text = item.as_str().unwrap_or_default();
                let Some(association) = Association::parse(text) else {
                    return Err(keys.invalid(
                        "authors",
                        format!("'{text}' is not an author association (owner, member, collaborator, contributor, first_time_contributor, first_timer, none)"),
                    ));
                };
                authors.push(association);
            }
            authors
        }
    };
    let result = ResultPolicy {
        push: keys.bool("result.push"),
        pull_request: keys.bool("result.pull_request"),
        token_secret: keys.str("result.token_secret"),
        api_url: keys
            .str("result.api_url")
            .unwrap_or_else(|| GITHUB_API.to_string())
            .trim_end_matches('/')
            .to_string(),
        api_repository: keys.str("result.api_repository"),
        base: keys
            .str("result.base")
            .unwrap_or_else(|| "main".to_string()),
    };
    if let Some(secret) = &result.token_secret {
        if !crate::secrets::valid_name(secret) {
            return Err(keys.invalid(
                "result.token_secret",
                format!("'{secret}' is not a secret's name"),
            ));
        }
    }
    if result.push && repository.starts_with('/') {
        return Err(keys.invalid(
            "result.push",
            "result.push needs the repository as a URL (wright pushes to the URL it cloned)",
        ));
    }
    if result.pull_request {
        if matches!(
            trigger,
            Trigger::Webhook {
                forge: Forge::Gitlab | Forge::Gitea,
                ..
            }
        ) {
            return Err(keys.invalid(
                "result.pull_request",
                "result.pull_request speaks GitHub's API only, for now (GitLab's and Gitea's are not supported yet)",
            ));
        }
        if !result.push {
            return Err(keys.invalid(
                "result.pull_request",
                "result.pull_request needs result.push = true (a pull request is of a pushed branch)",
            ));
        }
        let shaped = result
            .api_repository
            .as_deref()
            .and_then(|r| r.split_once('/'))
            .is_some_and(|(owner, repo)| {
                !owner.is_empty() && !repo.is_empty() && !repo.contains('/')
            });
        if !shaped {
            return Err(keys.invalid(
                "result.pull_request",
                "result.pull_request needs result.api_repository = \"OWNER/NAME\"",
            ));
        }
        if !(result.api_url.starts_with("https://") || result.api_url.starts_with("http://")) {
            return Err(keys.invalid(
                "result.api_url",
                format!("api_url '{}' is not an http(s) URL", result.api_url),
            ));
        }
    }
    let label = keys.str("label");
    let when_busy = match keys.str("when_busy").as_deref() {
        Some("skip") => WhenBusy::Skip,
        _ => WhenBusy::Queue,
    };
    Ok(Automation {
        name,
        trigger,
        repository,
        task,
        label,
        authors,
        profile: keys.str("profile"),
        max_steps: keys.int("max_steps"),
        max_time: keys.int("max_time"),
        max_tokens: keys.int("max_tokens"),
        max_running: keys
            .int("max_running")
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(1),
        when_busy,
        result,
    })
}

/// A name that is a path segment as it is: `[A-Za-z0-9_-]+`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `UTC`, `Z`, or `+HH:MM` / `-HH:MM`.
fn valid_timezone(text: &str) -> bool {
    if text.eq_ignore_ascii_case("utc") || text == "Z" {
        return true;
    }
    fixed_offset_seconds(text).is_some()
}

/// A fixed offset's seconds east of UTC (`+02:00` → 7200).
pub fn fixed_offset_seconds(text: &str) -> Option<i32> {
    if text.eq_ignore_ascii_case("utc") || text == "Z" {
        return Some(0);
    }
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let (hours, minutes) = rest.split_once(':')?;
    if hours.len() != 2 || minutes.len() != 2 {
        return None;
    }
    let hours: i32 = hours.parse().ok()?;
    let minutes: i32 = minutes.parse().ok()?;
    (hours <= 14 && minutes < 60).then_some(sign * (hours * 3600 + minutes * 60))
}

/// The `{field}`s a template names, in order.
pub fn template_fields(template: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) => {
                fields.push(after[..end].to_string());
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    fields
}

#[cfg(test)]
mod tests;
