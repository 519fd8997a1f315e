//! Automations (`[automations.NAME]` in the user's own file): what starts a conversation
//! without a person — a forge's webhook or a schedule — on which repository, with which
//! task, and what is done with its result.
//!
//! What it guarantees: only the user's file defines them, and a repository's
//! `.wright/automations.toml` the user allowed at its exact content (a repository's
//! `.wright/config.toml` setting any `automations.*` key is refused by the schema,
//! `RepoRule::UserOnly`); every key is
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

mod event;
pub use event::EventKind;

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
    /// Open an issue when the firing's last run of `tests` failed (or comment on the one
    /// opened before, while it is open).
    pub issue: bool,
    pub pull_request: bool,
    /// Comment on the issue that fired it, saying what came of the firing.
    pub comment: bool,
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
    /// The forge its results go to (its API's shape): a webhook's, or a schedule's
    /// `forge` (default GitHub).
    pub forge: Forge,
    /// The test command whose last run in a firing's conversation says whether the tests
    /// fail (`result.issue`).
    pub tests: Option<String>,
    /// A URL to clone, or an absolute path on the server.
    pub repository: String,
    pub task: String,
    /// The webhook event it fires on (a schedule's: none, left at the default).
    pub event: EventKind,
    pub label: Option<String>,
    /// Fire only for this branch (check runs, pushes).
    pub branch: Option<String>,
    /// The bot's name a comment mentions (`@NAME`).
    pub mention: String,
    pub authors: Vec<Association>,
    pub profile: Option<String>,
    pub max_steps: Option<i64>,
    pub max_time: Option<i64>,
    pub max_tokens: Option<i64>,
    pub max_running: usize,
    pub when_busy: WhenBusy,
    pub result: ResultPolicy,
}

/// Where a repository defines automations: `wright serve` reads it from the automations
/// branch of `server.automations_repository` only, at the content the user allowed; a
/// branch changing it counts as changing wright's configuration (`wright apply` asks
/// first, an automation does not push it).
pub const REPO_AUTOMATIONS_FILE: &str = ".wright/automations.toml";

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
            let forge = forge_of(&keys.required("forge", "github, gitlab or gitea")?);
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
                    format!("timezone '{timezone}' is not UTC, an offset such as +02:00, nor a zone such as Europe/Paris"),
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
    let forge = match &trigger {
        Trigger::Webhook { forge, .. } => *forge,
        Trigger::Schedule { .. } => keys.str("forge").map_or(Forge::Github, |f| forge_of(&f)),
    };
    let repository = keys.required("repository", "a URL to clone or a path on the server")?;
    if !(repository.contains("://") || repository.contains('@') || repository.starts_with('/')) {
        return Err(keys.invalid(
            "repository",
            format!("repository '{repository}' is neither a URL nor an absolute path"),
        ));
    }
    let task = keys.required("task", "what the agent should do")?;
    let event = match keys.str("event").as_deref() {
        Some("check_run") => EventKind::CheckRun,
        Some("comment") => EventKind::Comment,
        Some("push") => EventKind::Push,
        _ => EventKind::Issue,
    };
    if matches!(trigger, Trigger::Schedule { .. }) {
        if keys.find("event").is_some() {
            return Err(keys.invalid("event", "event needs on = \"webhook\""));
        }
        if let Some(field) = template_fields(&task).into_iter().next() {
            return Err(keys.invalid(
                "task",
                format!("the task names {{{field}}}, but a schedule has no event to take it from"),
            ));
        }
    }
    let allowed = event.fields();
    for field in template_fields(&task) {
        if !allowed.contains(&field.as_str()) {
            return Err(keys.invalid(
                "task",
                format!(
                    "the task names {{{field}}}, which event = \"{}\" does not fill; it may name {}",
                    keys.str("event").unwrap_or_else(|| "issue".into()),
                    allowed
                        .iter()
                        .map(|f| format!("{{{f}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    let label = keys.str("label");
    if label.is_some() && event != EventKind::Issue {
        return Err(keys.invalid("label", "label needs event = \"issue\""));
    }
    let branch = keys.str("branch");
    if branch.is_some() && !event.on_branch() {
        return Err(keys.invalid("branch", "branch needs event = \"check_run\" or \"push\""));
    }
    if keys.find("mention").is_some() && event != EventKind::Comment {
        return Err(keys.invalid("mention", "mention needs event = \"comment\""));
    }
    let mention = keys.str("mention").unwrap_or_else(|| "wright".to_string());
    if !valid_name(&mention) {
        return Err(keys.invalid(
            "mention",
            format!("mention '{mention}' is not a user name (letters, digits, - and _)"),
        ));
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
        issue: keys.bool("result.issue"),
        pull_request: keys.bool("result.pull_request"),
        comment: keys.bool("result.comment"),
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
    if result.comment && (matches!(trigger, Trigger::Schedule { .. }) || event.on_branch()) {
        return Err(keys.invalid(
            "result.comment",
            "result.comment needs on = \"webhook\" with event = \"issue\" or \"comment\" (a schedule, a check run or a push has no issue to comment on)",
        ));
    }
    if result.pull_request && !result.push {
        return Err(keys.invalid(
            "result.pull_request",
            "result.pull_request needs result.push = true (a pull request is of a pushed branch)",
        ));
    }
    let tests = keys.str("tests").filter(|t| !t.trim().is_empty());
    if result.issue && tests.is_none() {
        return Err(keys.invalid(
            "result.issue",
            "result.issue needs tests = \"COMMAND\" (the test command whose last run in the conversation says whether the tests fail)",
        ));
    }
    if result.pull_request || result.comment || result.issue {
        let what = if result.pull_request {
            "result.pull_request"
        } else if result.comment {
            "result.comment"
        } else {
            "result.issue"
        };
        let shaped = result
            .api_repository
            .as_deref()
            .and_then(|r| r.split_once('/'))
            .is_some_and(|(owner, repo)| {
                !owner.is_empty() && !repo.is_empty() && !repo.contains('/')
            });
        if !shaped {
            return Err(keys.invalid(
                what,
                format!("{what} needs result.api_repository = \"OWNER/NAME\""),
            ));
        }
        let elsewhere = matches!(forge, Forge::Gitlab | Forge::Gitea);
        if elsewhere && keys.str("result.api_url").is_none() {
            return Err(keys.invalid(
                what,
                format!("{what} on GitLab or Gitea needs result.api_url, the forge's API (such as https://gitlab.example.com/api/v4 or https://gitea.example.com/api/v1)"),
            ));
        }
        if !(result.api_url.starts_with("https://") || result.api_url.starts_with("http://")) {
            return Err(keys.invalid(
                "result.api_url",
                format!("api_url '{}' is not an http(s) URL", result.api_url),
            ));
        }
    }
    let when_busy = match keys.str("when_busy").as_deref() {
        Some("skip") => WhenBusy::Skip,
        _ => WhenBusy::Queue,
    };
    Ok(Automation {
        name,
        trigger,
        forge,
        tests,
        repository,
        task,
        event,
        label,
        branch,
        mention,
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

/// A forge's name as the schema allows it.
fn forge_of(name: &str) -> Forge {
    match name {
        "github" => Forge::Github,
        "gitlab" => Forge::Gitlab,
        _ => Forge::Gitea,
    }
}

/// A name that is a path segment as it is: `[A-Za-z0-9_-]+`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `UTC`, `Z`, `+HH:MM` / `-HH:MM`, or a zone of the IANA database (`Europe/Paris`).
fn valid_timezone(text: &str) -> bool {
    if text.eq_ignore_ascii_case("utc") || text == "Z" {
        return true;
    }
    fixed_offset_seconds(text).is_some() || text.parse::<chrono_tz::Tz>().is_ok()
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
