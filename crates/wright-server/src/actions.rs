//! What a client does with a conversation besides running it: fork it (at an event, and
//! go on), take its changes (`apply`), drop them (`discard`), and read one of its
//! workspace's files. Each is the session library's own operation (the same as `wright
//! fork`, `wright apply`, `wright discard`), run off the async threads; none runs while
//! the conversation does.

use crate::api;
use crate::error::ApiError;
use crate::model_record::ModelRecord;
use crate::routes::path_id;
use crate::routes::AppState;
use axum::extract::rejection::JsonRejection;
use axum::extract::rejection::PathRejection;
use axum::extract::rejection::QueryRejection;
use axum::extract::Path;
use axum::extract::Query;
use axum::extract::State;
use axum::http::header;
use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::Json;
use std::sync::Arc;
use wright_session::fork::ForkError;
use wright_session::working_copy::Dropped;
use wright_session::working_copy::Record;
use wright_session::workspace_file::FileError;
use wright_session::Unattended;

type Shared = State<Arc<AppState>>;

/// The largest file the file route gives.
pub const FILE_CAP: u64 = 16 * 1024 * 1024;

/// The conversation's directory, once it has a log; 404 otherwise.
pub(crate) fn logged(id: &str) -> Result<std::path::PathBuf, ApiError> {
    let dir = wright_session::stored::conversation_dir(id);
    if dir.join("events.jsonl").is_file() {
        Ok(dir)
    } else {
        Err(ApiError::not_found(id))
    }
}

/// Refuses while the server runs (or is about to run) `id`.
fn idle(state: &AppState, id: &str, what: &str) -> Result<(), ApiError> {
    if state.runs.is_active(id) {
        return Err(ApiError::conflict(format!(
            "conversation {id} is running; {what} once it has ended (or interrupt it)"
        )));
    }
    Ok(())
}

pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| ApiError::internal(&anyhow::anyhow!("{err}")))
}

/// A new conversation from a prefix of this one, in its own clone on its own branch, with
/// the files as they were at `at`; with a message it goes on at once (queued like any
/// run).
#[utoipa::path(post, path = "/api/conversations/{id}/fork", request_body = api::Fork,
    responses((status = 202, body = api::Conversation), (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn fork(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
    caller: Option<axum::Extension<crate::tenancy::Caller>>,
    body: Result<Json<api::Fork>, JsonRejection>,
) -> Result<(StatusCode, Json<api::Conversation>), ApiError> {
    let id = path_id(path)?;
    let Json(request) = body?;
    crate::tenancy::may_set(&state, caller.as_deref(), &request.settings)?;
    if request.message.is_some() {
        crate::rights::may_run(&state, caller.as_deref(), "").await?;
    }
    let source = logged(&id)?;
    if let Some(message) = &request.message {
        if message.trim().is_empty() {
            return Err(ApiError::bad_request("the message is empty"));
        }
    }
    state
        .runs
        .starter
        .check(&request.settings)
        .map_err(|err| crate::session_error::bad_setting(&err, "settings."))?;
    let starter = state.runs.starter.clone();
    let settings = request.settings.clone();
    let at = request.at;
    let forked = blocking(move || {
        let sandbox_for = |source: &wright_session::repo_config::RepoConfigSource| {
            starter
                .sandbox(&settings, source)
                .map_err(anyhow::Error::from)
        };
        wright_session::fork::fork(&source, at, &sandbox_for, &Unattended)
    })
    .await?
    .map_err(|err| match err {
        ForkError::Refused(refused) => ApiError::bad_request(refused.to_string()),
        ForkError::Failed(err) => ApiError::internal(&err),
    })?;
    // A user's fork is theirs, recorded before anything of it runs (else the admin's).
    if let (Some(caller), Some(store)) = (caller.as_deref(), state.runs.store()) {
        store
            .add_conversation(&forked.id, caller.owner())
            .await
            .map_err(|err| ApiError::internal(&err.into()))?;
    }
    // The fork goes on with the original's model and server unless the request names
    // others, as the server recorded them (never as the log says).
    let record = ModelRecord::read(&id)
        .unwrap_or_default()
        .then(&ModelRecord::of(&request.settings));
    record
        .write(&forked.id)
        .map_err(|err| ApiError::internal(&err))?;
    if let Some(text) = request.message {
        state.runs.message(
            &forked.id,
            api::Message {
                text,
                settings: request.settings,
                condense: false,
            },
        )?;
    }
    let info = state
        .runs
        .info(&forked.id)
        .ok_or_else(|| ApiError::not_found(&forked.id))?;
    Ok((StatusCode::ACCEPTED, Json(info)))
}

/// Takes the conversation's branch into the current branch of the repository it worked
/// on, as `wright apply` does: refused (409) over uncommitted changes, an operation in
/// progress, a conflict (undone), or files that configure git unless `with_git_config`.
#[utoipa::path(post, path = "/api/conversations/{id}/apply", request_body = api::Apply,
    responses((status = 200, body = api::Applied), (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn apply(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
    body: Result<Json<api::Apply>, JsonRejection>,
) -> Result<Json<api::Applied>, ApiError> {
    let id = path_id(path)?;
    let Json(how) = body?;
    let dir = logged(&id)?;
    idle(&state, &id, "take its changes")?;
    let taken = blocking(move || {
        let record = Record::read(&dir)?;
        wright_session::working_copy::apply(
            &dir,
            how.cherry_pick,
            how.with_git_config,
            &Unattended,
        )?;
        anyhow::Ok(record)
    })
    .await?
    .map_err(|err| ApiError::conflict(format!("{err:#}")))?;
    match taken {
        Record::Clone {
            repo_root, branch, ..
        } => Ok(Json(api::Applied {
            branch,
            into: repo_root.display().to_string(),
        })),
        // `apply` refuses these: their changes are where they were made.
        Record::Direct { .. } | Record::InPlace { .. } => Err(ApiError::conflict(
            "this conversation's changes are already where it worked",
        )),
    }
}

/// Drops the conversation's changes: its branch and clone, or a directory worked in
/// directly put back as it was.
#[utoipa::path(post, path = "/api/conversations/{id}/discard",
    responses((status = 200, body = api::Discarded), (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn discard(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<api::Discarded>, ApiError> {
    let id = path_id(path)?;
    let dir = logged(&id)?;
    idle(&state, &id, "discard its changes")?;
    let dropped = blocking(move || wright_session::working_copy::drop_work(&dir, &Unattended))
        .await?
        .map_err(|err| ApiError::conflict(format!("{err:#}")))?;
    let (outcome, branch) = match dropped {
        Dropped::Removed(branch) => (api::DiscardOutcome::Removed, Some(branch)),
        Dropped::AlreadyGone(branch) => (api::DiscardOutcome::AlreadyGone, Some(branch)),
        Dropped::Restored => (api::DiscardOutcome::Restored, None),
    };
    Ok(Json(api::Discarded { outcome, branch }))
}

/// One file of the conversation's workspace, as a download: never rendered by a browser
/// (an attachment, `nosniff`, a sandboxing CSP), never followed out of the workspace.
#[utoipa::path(get, path = "/api/conversations/{id}/file", params(api::FilePath),
    responses((status = 200, description = "the file's bytes"), (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn file(
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<api::FilePath>, QueryRejection>,
) -> Result<Response, ApiError> {
    let id = path_id(path)?;
    let Query(wanted) = query?;
    let dir = logged(&id)?;
    let relative = wanted.path.clone();
    let bytes = blocking(move || wright_session::workspace_file::read(&dir, &relative, FILE_CAP))
        .await?
        .map_err(file_error)?;
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(header::CONTENT_DISPOSITION, attachment(&wanted.path));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox; default-src 'none'"),
    );
    Ok(response)
}

/// A file's or a directory's refusal, as the API answers it.
pub(crate) fn file_error(err: FileError) -> ApiError {
    match err {
        FileError::NotFound(_) | FileError::Gone(_) => {
            ApiError::new(StatusCode::NOT_FOUND, "no_file", err.to_string())
        }
        FileError::Refused(_) | FileError::NotAFile(_) => ApiError::bad_request(err.to_string()),
        FileError::TooLarge { .. } => {
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", err.to_string())
        }
    }
}

/// `attachment; filename="NAME"` with the name cut to safe characters (the agent chose
/// it): never a quote, a control character or a path.
fn attachment(path: &str) -> HeaderValue {
    let name: String = path
        .rsplit('/')
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "._-+".contains(*c))
        .take(100)
        .collect();
    let name = if name.trim_matches('.').is_empty() {
        "file".to_string()
    } else {
        name
    };
    HeaderValue::from_str(&format!("attachment; filename=\"{name}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("attachment"))
}
