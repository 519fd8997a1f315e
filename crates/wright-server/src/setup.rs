//! What the server can run conversations with: the model server they use unless they
//! name one, and its models (`/api/models`), and `wright doctor`'s report on a setup
//! (`/api/doctor`: window, tool-calling mode, speed, sandbox, what to fix) — shown before
//! a conversation starts, so its warnings come before the first step.

use crate::api;
use crate::error::ApiError;
use crate::routes::AppState;
use axum::extract::rejection::QueryRejection;
use axum::extract::Query;
use axum::extract::State;
use axum::Json;
use std::sync::Arc;

/// The model server conversations use unless they name one, and its models.
#[utoipa::path(get, path = "/api/models",
    responses((status = 200, body = api::Models), (status = 502, body = crate::error::ErrorBody)))]
pub async fn models(State(state): State<Arc<AppState>>) -> Result<Json<api::Models>, ApiError> {
    state
        .runs
        .starter
        .models()
        .await
        .map(Json)
        .map_err(|err| ApiError::from(&err))
}

/// `wright doctor --json` for the server's setup, or the model, server, profile or
/// sandbox the query names: `ok`, `problems` (what makes a run fail, each with its fix),
/// `notes` (what a run warns about), and what was found (server, model, window,
/// tool calling, speed, sandbox).
#[utoipa::path(get, path = "/api/doctor", params(api::DoctorQuery),
    responses((status = 200, description = "the report, as `wright doctor --json` prints it"), (status = 400, body = crate::error::ErrorBody)))]
pub async fn doctor(
    State(state): State<Arc<AppState>>,
    query: Result<Query<api::DoctorQuery>, QueryRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let Query(query) = query?;
    let settings = query.settings();
    state
        .runs
        .starter
        .check(&settings)
        .map_err(|err| crate::session_error::bad_setting(&err, ""))?;
    Ok(Json(state.runs.starter.doctor(&settings).await))
}
