//! The session's errors as the server answers them: a status and a code a client branches
//! on (`unknown_profile`, `bad_settings`, `choose_model`, `api_key`, `model_server`,
//! `no_server_answered`, `no_commit`, `run_failed`, `internal`), and the sentence with what to do worded in the
//! request's own fields (`settings.model`, `settings.base_url`, `settings.profile`), never
//! a command line's flags.

use crate::error::ApiError;
use axum::http::StatusCode;
use wright_config::ConfigError;
use wright_llm::Remedy;
use wright_protocol::StopReason;
use wright_session::error::WorkspaceError;
use wright_session::settings::BadFlag;
use wright_session::SessionError;

impl From<&SessionError> for ApiError {
    fn from(err: &SessionError) -> Self {
        let (status, code) = match err {
            SessionError::Settings(ConfigError::NoProfile { .. }) => {
                (StatusCode::BAD_REQUEST, "unknown_profile")
            }
            SessionError::Settings(_) => (StatusCode::BAD_REQUEST, "bad_settings"),
            SessionError::NoneAnswered { .. } => (StatusCode::BAD_GATEWAY, "no_server_answered"),
            SessionError::ModelServer { .. } | SessionError::FallbackUnusable { .. } => {
                model_server(err.remedy())
            }
            SessionError::Workspace(WorkspaceError::NoCommit { .. }) => {
                let message = format!("{err}: commit once in it");
                return ApiError::new(StatusCode::BAD_REQUEST, "no_commit", message);
            }
            SessionError::Other(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        ApiError::new(status, code, with_hint(format!("{err:#}"), err.remedy()))
    }
}

/// A conversation whose run ended `failed` (its model server failed it mid-run, a tool
/// it cannot go on from): the run's own reason, with the code a client branches on.
#[derive(Debug, thiserror::Error)]
#[error("{stop}")]
pub struct RunFailed {
    pub stop: StopReason,
    pub remedy: Option<Remedy>,
}

/// A run's error as the API words it, with its code, when it is one of the typed ones:
/// the session's, the run's own end, a user's run limit.
pub fn typed(err: &anyhow::Error) -> Option<ApiError> {
    if let Some(session) = err.downcast_ref::<wright_session::SessionError>() {
        return Some(ApiError::from(session));
    }
    err.downcast_ref::<RunFailed>()
        .map(ApiError::from)
        .or_else(|| {
            err.downcast_ref::<crate::rights::QuotaFull>()
                .map(ApiError::from)
        })
}

impl From<&RunFailed> for ApiError {
    fn from(failed: &RunFailed) -> Self {
        let (status, code) = match failed.stop {
            StopReason::ModelError { .. } => model_server(failed.remedy),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "run_failed"),
        };
        ApiError::new(
            status,
            code,
            with_hint(failed.stop.to_string(), failed.remedy),
        )
    }
}

/// The status and code of a model server's failure, from what the user can do about it.
fn model_server(remedy: Option<Remedy>) -> (StatusCode, &'static str) {
    match remedy {
        Some(Remedy::ChooseModel | Remedy::ChooseModelFile | Remedy::GetModel) => {
            (StatusCode::BAD_REQUEST, "choose_model")
        }
        Some(Remedy::GiveApiKey) => (StatusCode::BAD_REQUEST, "api_key"),
        Some(Remedy::NameServer | Remedy::AllowLongerSilence) | None => {
            (StatusCode::BAD_GATEWAY, "model_server")
        }
    }
}

/// The facts, then what to do about them when there is something.
fn with_hint(facts: String, remedy: Option<Remedy>) -> String {
    match remedy.map(hint) {
        Some(hint) => {
            let stop = if facts.ends_with(['.', '?', '!']) {
                ""
            } else {
                "."
            };
            format!("{facts}{stop} {hint}")
        }
        None => facts,
    }
}

/// What to do, in the fields of a request to this server (or its own configuration).
fn hint(remedy: Remedy) -> &'static str {
    match remedy {
        Remedy::NameServer => {
            "Start the model server, or name a running one in the request's settings.base_url (and settings.model)"
        }
        Remedy::ChooseModel => "Choose one with the request's settings.model",
        Remedy::ChooseModelFile => {
            "Choose one with a profile's model_file in the server's configuration, and that profile with settings.profile"
        }
        Remedy::GetModel => {
            "Start a model server and name it in the request's settings.base_url (and settings.model), or give the server a model (`wright model pull NAME` where it runs)"
        }
        Remedy::GiveApiKey => {
            "Give the key in the server's environment (OPENAI_API_KEY, or a profile's api_key_env) and choose that profile with settings.profile"
        }
        Remedy::AllowLongerSilence => {
            "Allow a longer silence with run.idle_timeout in the server's configuration"
        }
    }
}

/// A setting of a request that the program refuses, named by the request's own field
/// (`prefix` and the field: `settings.max_steps`, or a query's `max_steps`), never by
/// the command line's flag the server's settings go through.
pub fn bad_setting(err: &BadFlag, prefix: &str) -> ApiError {
    let field = match err.flag {
        "--base-url" => "base_url",
        "--tool-calling" => "tool_calling",
        "--allow-host" => "allow_hosts",
        "--max-steps" => "max_steps",
        "--max-time" => "max_time",
        "--max-tokens" => "max_tokens",
        flag => flag.trim_start_matches('-'),
    };
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "bad_settings",
        format!("{prefix}{field}{}", err.problem),
    )
}
