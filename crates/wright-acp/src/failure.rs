//! The session's errors as the editor is answered: the protocol's code (invalid params
//! for settings that do not resolve, auth required for a missing API key, internal
//! otherwise) and the sentence with what to do, worded for `wright acp`, whose flags and
//! configuration give every session its settings.

use agent_client_protocol::Error;
use agent_client_protocol::ErrorCode;
use wright_llm::Remedy;
use wright_session::SessionError;

/// The editor's answer to a session that could not start or go on; `otherwise`: the
/// code of an error that is not the settings' nor a missing key (a workspace the editor
/// named that is not one is the request's, a broken disk is wright's).
pub(crate) fn answer(err: &SessionError, otherwise: ErrorCode) -> Error {
    let code = match (err, err.remedy()) {
        (SessionError::Settings(_) | SessionError::Workspace(_), _) => ErrorCode::INVALID_PARAMS,
        (_, Some(Remedy::GiveApiKey)) => ErrorCode::AUTH_REQUIRED,
        _ => otherwise,
    };
    let facts = match err {
        SessionError::Workspace(_) => format!("{err}: commit once in it"),
        _ => format!("{err:#}"),
    };
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
    Error::new(code, message)
}

/// An error of a prompt's run: the session's typed, anything else as it says itself.
pub(crate) fn of_run(err: &anyhow::Error) -> Error {
    match err.downcast_ref::<SessionError>() {
        Some(typed) => answer(typed, ErrorCode::INTERNAL_ERROR),
        None => Error::new(ErrorCode::INTERNAL_ERROR, format!("{err:#}")),
    }
}

/// What to do, for the person who starts `wright acp` (its flags, its configuration).
fn hint(remedy: Remedy) -> &'static str {
    match remedy {
        Remedy::NameServer => {
            "Start the model server, or name a running one: start `wright acp` with --base-url URL (and --model NAME)"
        }
        Remedy::ChooseModel => "Start `wright acp` with --model NAME",
        Remedy::ChooseModelFile => "Start `wright acp` with --model-file NAME",
        Remedy::GetModel => {
            "Get a model with `wright model pull NAME`, or start a server and start `wright acp` with --base-url URL"
        }
        Remedy::GiveApiKey => {
            "Give the key to `wright acp` with --api-key KEY or OPENAI_API_KEY (or a profile's api_key_env)"
        }
        Remedy::AllowLongerSilence => "Start `wright acp` with --idle-timeout SECS",
    }
}
