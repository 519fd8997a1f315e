//! The conversation's current files for the UI's file tree: `GET
//! /api/conversations/{id}/files?path=DIR` lists one directory of its workspace (its
//! clone while it runs), with the file route's guarantees — opened beneath the
//! workspace's descriptor, so neither `..` nor a link leads out; entries' kinds as the
//! directory says them (a link or a FIFO is listed, never followed or opened); at most
//! `ENTRY_CAP` entries.

use crate::actions::blocking;
use crate::actions::file_error;
use crate::actions::logged;
use crate::error::ApiError;
use crate::routes::path_id;
use axum::extract::rejection::PathRejection;
use axum::extract::rejection::QueryRejection;
use axum::extract::Path;
use axum::extract::Query;
use axum::Json;
use wright_session::workspace_file::Listing;

/// The most entries one listing gives.
pub const ENTRY_CAP: usize = 2000;

/// `?path=DIR`: a directory of the workspace (empty or absent: its top).
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct DirPath {
    /// Relative to its workspace; it may not lead out (by `..` or a link).
    #[serde(default)]
    path: String,
}

/// One directory of the conversation's workspace, as it is now.
#[utoipa::path(get, path = "/api/conversations/{id}/files", params(DirPath),
    responses((status = 200, description = "the directory (`path`), its entries (`name`, `kind`: file, dir, link or other, a file's `size`) and whether some were left out (`cut`)"),
        (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn files(
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<DirPath>, QueryRejection>,
) -> Result<Json<Listing>, ApiError> {
    let id = path_id(path)?;
    let Query(wanted) = query?;
    let dir = logged(&id)?;
    let listing =
        blocking(move || wright_session::workspace_file::list(&dir, &wanted.path, ENTRY_CAP))
            .await?
            .map_err(file_error)?;
    Ok(Json(listing))
}
