//! `GET /api/conversations/{id}/live-diff`: the conversation's changes so far, also while
//! it runs (today's `/diff` answers only once its run handed them over).
//!
//! What it guarantees: while the conversation runs, the diff is its working copy against
//! the commit it started from, made by git *inside the conversation's own sandbox*
//! (`GitInspector`, as the review before `finish` reads it) — the clone's configuration,
//! attributes and filters are the agent's and never run on the host; no textconv, no
//! external diff, no optional lock taken (the agent's own git is never blocked), a link
//! or a FIFO named, never read, the output bounded. Once the run ended, it answers what
//! `/diff` answers; while it ends (its sandbox taken down, its changes being handed
//! over) it answers 409, and the client asks again. Like every route under `/api/conversations/{id}`, another user's id
//! is answered as an unknown one (`tenancy`).

use crate::api;
use crate::error::ApiError;
use crate::routes::path_id;
use crate::routes::AppState;
use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// Live reads at once, for all clients: each runs git in a sandbox, and a page reads
/// again on every tool's result.
static READS: Semaphore = Semaphore::const_new(2);

/// The changes so far, while the conversation runs or after.
#[utoipa::path(get, path = "/api/conversations/{id}/live-diff",
    responses((status = 200, body = api::LiveDiff), (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn live_diff(
    State(state): State<Arc<AppState>>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<api::LiveDiff>, ApiError> {
    let id = path_id(path)?;
    if state.runs.is_active(&id) {
        let Some(inspector) = state.runs.inspector(&id) else {
            // Queued, or its session is being prepared: no working copy yet.
            return Err(ApiError::conflict(format!(
                "conversation {id} has not started its run yet: its changes show once it runs"
            )));
        };
        let _turn = READS
            .acquire()
            .await
            .map_err(|err| ApiError::internal(&anyhow::anyhow!("{err}")))?;
        let text = match crate::actions::blocking(move || inspector.changes_text()).await? {
            Ok(text) => text,
            // Its run ended meanwhile (its sandbox gone): what it handed over.
            Err(_) if !state.runs.is_active(&id) => return ended(&id).await,
            // Its run is ending: the sandbox is being taken down, the changes handed over.
            Err(err) => {
                return Err(ApiError::conflict(format!(
                    "conversation {id} is ending: its changes are handed over in a moment ({err})"
                )))
            }
        };
        let (diff, none) = if text.trim().is_empty() {
            (None, Some("no changes yet".to_string()))
        } else {
            (Some(text), None)
        };
        let answer = api::Diff::of(diff, none);
        return Ok(Json(api::LiveDiff {
            live: true,
            diff: answer.diff,
            files: answer.files,
            none: answer.none,
        }));
    }
    ended(&id).await
}

/// What the conversation `id`, whose run ended, handed over.
async fn ended(id: &str) -> Result<Json<api::LiveDiff>, ApiError> {
    let answer = crate::changes::handed(id).await?;
    Ok(Json(api::LiveDiff {
        live: false,
        diff: answer.diff,
        files: answer.files,
        none: answer.none,
    }))
}
