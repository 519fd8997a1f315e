//! The session's errors as the server answers them: a status and a code a client branches
//! on (`unknown_profile`, `bad_settings`, `choose_model`, `api_key`, `model_server`,
//! `no_server_answered`, `internal`), and the sentence with what to do worded in the
//! request's own fields (`settings.model`, `settings.base_url`, `settings.profile`), never
//! a command line's flags.

use crate::error::ApiError;
use axum::http::StatusCode;
use wright_config::ConfigError;
use wright_llm::Remedy;
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
                match err.remedy() {
                    Some(Remedy::ChooseModel | Remedy::ChooseModelFile | Remedy::GetModel) => {
                        (StatusCode::BAD_REQUEST, "choose_model")
                    }
                    Some(Remedy::GiveApiKey) => (StatusCode::BAD_REQUEST, "api_key"),
                    Some(Remedy::NameServer | Remedy::AllowLongerSilence) | None => {
                        (StatusCode::BAD_GATEWAY, "model_server")
                    }
                }
            }
            SessionError::Other(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        let facts = format!("{err:#}");
        let message = match err.remedy().map(hint) {
            Some(hint) => {
                let stop = if facts.ends_with(['.', '?', '!']) {
                    ""
                } else {
                    "."
                };
                format!("{facts}{stop} {hint}")
            }
            None => facts,
        };
        ApiError::new(status, code, message)
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
