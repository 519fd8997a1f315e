//! What a conversation changed (`/api/conversations/{id}/diff`: the diff it handed over
//! and its files, read from the user's repository as `wright diff` reads it).

use crate::api;
use crate::error::ApiError;
use crate::routes::path_id;
use crate::routes::AppState;
use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use wright_session::handed_over::Handed;
use wright_session::handed_over::Missing;
use wright_session::working_copy::status::Change;

/// The change the conversation handed over, once its run ended.
#[utoipa::path(get, path = "/api/conversations/{id}/diff",
    responses((status = 200, body = api::Diff), (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn diff(
    State(state): State<Arc<AppState>>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<api::Diff>, ApiError> {
    let id = path_id(path)?;
    if state.runs.is_active(&id) {
        return Err(ApiError::conflict(format!(
            "conversation {id} is running: its changes are handed over at its end"
        )));
    }
    handed(&id).await.map(Json)
}

/// What the conversation `id` handed over (404 when it has no log).
pub(crate) async fn handed(id: &str) -> Result<api::Diff, ApiError> {
    let dir = crate::actions::logged(id)?;
    let handed =
        tokio::task::spawn_blocking(move || wright_session::handed_over::handed_over(&dir))
            .await
            .map_err(|err| ApiError::internal(&anyhow::anyhow!("{err}")))?
            .map_err(|err| ApiError::internal(&err))?;
    let (diff, none) = match handed {
        Handed::Diff(text) => (Some(text), None),
        Handed::NoChanges => (None, "it made no changes".to_string().into()),
        Handed::Missing(missing) => (None, Some(why_none(&missing))),
    };
    Ok(api::Diff::of(diff, none))
}

fn why_none(missing: &Missing) -> String {
    match missing {
        Missing::NotGit(dir) => format!(
            "it worked in {}, which is not a git repository, and kept no snapshot of it",
            dir.display()
        ),
        Missing::NoBranch { branch, change } => {
            let what = match change {
                Change::Discarded => "it was discarded",
                Change::InClone => "its run did not hand its changes over; they are in its clone (a message goes on there)",
                Change::RepoGone => "its repository is gone",
                _ => "the branch was deleted",
            };
            format!("no branch {branch}: {what}")
        }
        Missing::LeftInTree(dir) => format!(
            "it left its changes uncommitted in {}, among other changes",
            dir.display()
        ),
        Missing::NoCommit => "it worked in place and no commit of wright's is recorded".into(),
    }
}
