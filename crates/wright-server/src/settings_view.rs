//! `GET /api/settings`: what the server's conversations are configured with, for the UI's
//! settings page: each value of the merged configuration (the user's file,
//! the environment, `wright serve`'s flags; no repository's) with where it came from and
//! whether a repository's own file may set it, the files read, and the consent record's
//! decisions (`wright allow`). Profiles and models, with the doctor's findings, are the
//! `/api/models` and `/api/doctor` routes'.
//!
//! What it guarantees: no secret is given — a key that holds one (`api_key`, a token, a
//! password) is shown as hidden; names of environment variables (`api_key_env`) are not
//! secrets and are shown. The route is the admin's (`tenancy`: users get 403).
//!
//! `PUT /api/settings` changes one value of the user's own file — only a key of
//! `wright_config::edit::EDITABLE` (never a sandbox or network setting, a secret, an
//! agent's command, a key a repository's file may not set) — keeping the file's comments
//! and layout, checked by the loader before the file is replaced, atomically; the admin's
//! only, and, on the browser's cookie, from the server's own page only (`auth`).

use crate::error::ApiError;
use crate::routes::AppState;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde::Serialize;
use std::sync::Arc;
use utoipa::ToSchema;
use wright_config::RepoRule;

/// One value of the configuration.
#[derive(Debug, Serialize, ToSchema)]
pub struct Setting {
    pub key: String,
    /// As TOML writes it (a secret: `(hidden)`).
    pub value: String,
    /// Where it came from: `default`, `FILE:LINE`, `environment VAR`, `flag --x`.
    pub origin: String,
    /// Whether a repository's `.wright/config.toml` may set it: `allowed` (on its own),
    /// `lower` (only lower it), `needs_approval` (its content approved first),
    /// `user_only` (never: the user's own file only).
    pub repository: &'static str,
    /// Whether `PUT /api/settings` may change it.
    pub editable: bool,
}

/// A key `PUT /api/settings` may change.
#[derive(Debug, Serialize, ToSchema)]
pub struct Changeable {
    pub key: String,
    /// What it does.
    pub doc: String,
    /// What a value must be, in words.
    pub expected: String,
    /// The only values it takes, when they are a few words.
    pub choices: Vec<String>,
}

/// One value of the user's file changed: `value` as a person types it (`40`, `native`,
/// a URL), or `null` to remove it from the file (back to the default).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Change {
    pub key: String,
    pub value: Option<String>,
}

/// One decision of the consent record.
#[derive(Debug, Serialize, ToSchema)]
pub struct Decision {
    /// `repo-config`, `egress`, `repo-hooks`, `repo-mcp`.
    pub kind: &'static str,
    pub repository: String,
    /// The allowed content's SHA-256, or the host.
    pub subject: String,
}

/// The server's configuration and the consent record.
#[derive(Debug, Serialize, ToSchema)]
pub struct Configured {
    pub values: Vec<Setting>,
    /// The configuration files read.
    pub files: Vec<String>,
    /// Why the configuration could not be read, when it could not.
    pub error: Option<String>,
    pub consent: Vec<Decision>,
    /// Why the consent record could not be read, when it could not.
    pub consent_error: Option<String>,
    /// The keys `PUT /api/settings` may change, and the file it writes.
    pub changeable: Vec<Changeable>,
    pub user_file: Option<String>,
}

/// Whether the value under `key` is a secret.
fn secret(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key).to_ascii_lowercase();
    let named = last.ends_with("_env");
    last == "api_key"
        || last.contains("password")
        || (!named && (last.contains("token") || last.contains("secret")))
}

/// What the schema says a repository's file may do with `key` (unknown: nothing).
fn rule_of(key: &str) -> RepoRule {
    let path: Vec<&str> = key.split('.').collect();
    wright_config::KEYS
        .iter()
        .find(|known| {
            let parts: Vec<&str> = known.path.split('.').collect();
            parts.len() == path.len() && parts.iter().zip(&path).all(|(p, k)| *p == "*" || p == k)
        })
        .map_or(RepoRule::UserOnly, |known| known.repo)
}

fn rule_words(rule: RepoRule) -> &'static str {
    match rule {
        RepoRule::Allowed => "allowed",
        RepoRule::Lower => "lower",
        RepoRule::NeedsApproval => "needs_approval",
        RepoRule::UserOnly => "user_only",
    }
}

/// The server's configuration (with where each value came from) and the consent record.
#[utoipa::path(get, path = "/api/settings",
    responses((status = 200, body = Configured), (status = 403, body = crate::error::ErrorBody)))]
pub async fn settings(State(state): State<Arc<AppState>>) -> Result<Json<Configured>, ApiError> {
    let starter = state.runs.starter.clone();
    crate::actions::blocking(move || configured(starter.as_ref()))
        .await
        .map(Json)
}

/// Changes one value of the user's own file (a key of `EDITABLE` only), keeping the rest
/// of the file as it was; a value the loader would refuse leaves the file unchanged (400
/// `bad_value`); a key that is not changed from here is 403 `not_editable`. Answers the
/// configuration as it is now, as `GET` does.
#[utoipa::path(put, path = "/api/settings", request_body = Change,
    responses((status = 200, body = Configured), (status = 400, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn change(
    State(state): State<Arc<AppState>>,
    body: Result<Json<Change>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<Configured>, ApiError> {
    let Json(change) = body?;
    let starter = state.runs.starter.clone();
    crate::actions::blocking(move || {
        use wright_config::edit;
        use wright_config::edit::EditError;
        let Some(path) = wright_config::Config::user_file() else {
            return Err(ApiError::internal(&anyhow::anyhow!(
                "the server has no home directory for a configuration file"
            )));
        };
        let value = change
            .value
            .as_deref()
            .map(|text| edit::value_of_text(&change.key, text))
            .transpose();
        let changed = value.and_then(|value| edit::set(&path, &change.key, value.as_ref()));
        match changed {
            Ok(()) => Ok(configured(starter.as_ref())),
            Err(err @ EditError::NotEditable { .. }) => {
                Err(ApiError::forbidden("not_editable", &err.to_string()))
            }
            Err(err @ EditError::Io { .. }) => Err(ApiError::internal(&err.into())),
            Err(err) => Err(ApiError::new(
                axum::http::StatusCode::BAD_REQUEST,
                "bad_value",
                err.to_string(),
            )),
        }
    })
    .await?
    .map(Json)
}

/// The configuration as the starter reads it now, and the consent record.
fn configured(starter: &dyn crate::Starter) -> Configured {
    {
        let (values, files, error) = match starter.configuration() {
            Ok(config) => {
                let files = config.files().to_vec();
                let values = config
                    .with_defaults()
                    .entries()
                    .map(|(key, sourced)| {
                        let rule = rule_of(key);
                        Setting {
                            key: key.clone(),
                            value: if secret(key) {
                                "(hidden)".to_string()
                            } else {
                                sourced.value.to_string()
                            },
                            origin: sourced.origin.to_string(),
                            repository: rule_words(rule),
                            editable: wright_config::edit::editable(key),
                        }
                    })
                    .collect();
                (values, files, None)
            }
            Err(err) => (Vec::new(), Vec::new(), Some(format!("{err:#}"))),
        };
        let path = wright_config::consent::Consent::default_path();
        let (consent, consent_error) = match wright_config::consent::Consent::open(&path) {
            Ok(record) => (
                record
                    .grants()
                    .iter()
                    .map(|grant| Decision {
                        kind: grant.kind.as_str(),
                        repository: grant.repo.display().to_string(),
                        subject: grant.subject.clone(),
                    })
                    .collect(),
                None,
            ),
            Err(err) => (Vec::new(), Some(err.to_string())),
        };
        Configured {
            values,
            files,
            error,
            consent,
            consent_error,
            changeable: wright_config::edit::offered()
                .into_iter()
                .map(|offered| Changeable {
                    key: offered.key.to_string(),
                    doc: offered.doc.to_string(),
                    expected: offered.expected,
                    choices: offered.choices.iter().map(|c| c.to_string()).collect(),
                })
                .collect(),
            user_file: wright_config::Config::user_file().map(|path| path.display().to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rule_of;
    use super::secret;
    use wright_config::RepoRule;

    #[test]
    fn secrets_are_hidden_and_the_names_of_their_variables_are_not() {
        for key in [
            "api_key",
            "profiles.big.api_key",
            "result.github_token",
            "db.password",
        ] {
            assert!(secret(key), "{key}");
        }
        for key in [
            "api_key_env",
            "automations.fix.secret_env",
            "model",
            "base_url",
        ] {
            assert!(!secret(key), "{key}");
        }
    }

    #[test]
    fn the_schema_says_what_a_repository_may_set() {
        assert_eq!(rule_of("model_file"), RepoRule::UserOnly);
        assert_eq!(rule_of("tool_calling"), RepoRule::Allowed);
        assert_eq!(rule_of("no.such.key"), RepoRule::UserOnly);
    }
}
