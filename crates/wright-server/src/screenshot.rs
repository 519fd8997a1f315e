//! `GET /api/conversations/{id}/screenshots/{name}`: a screenshot the conversation's
//! `browser` tool saved, for the UI to show beside its step.
//!
//! What it guarantees: behind the same guard and tenancy as every conversation route
//! (another user's conversation is answered as an unknown one before this runs); only a
//! name the tool gives (`screenshot-N.png`) is read, from the conversation's own
//! `screenshots/` and never through a link (`wright_session::screenshots`); only bytes
//! that begin as a PNG are given, as `image/png`, with `nosniff` and a policy that lets a
//! browser do nothing with it but show it as an image.

use crate::actions::blocking;
use crate::actions::logged;
use crate::error::plain_id;
use crate::error::ApiError;
use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use axum::http::header;
use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use wright_session::screenshots::ScreenshotError;

/// One screenshot of the conversation, as `image/png`.
#[utoipa::path(get, path = "/api/conversations/{id}/screenshots/{name}",
    params(("id" = String, Path, description = "the conversation"),
           ("name" = String, Path, description = "screenshot-N.png, as the tool's output names it")),
    responses((status = 200, description = "the PNG's bytes", content_type = "image/png"),
              (status = 400, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody)))]
pub async fn screenshot(
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let Path((id, name)) = path?;
    let id = plain_id(&id)?.to_string();
    let dir = logged(&id)?;
    let png = blocking(move || wright_session::screenshots::read(&dir, &name))
        .await?
        .map_err(|err| match err {
            ScreenshotError::BadName => ApiError::bad_request(err.to_string()),
            ScreenshotError::NotFound | ScreenshotError::NotPng => {
                ApiError::new(StatusCode::NOT_FOUND, "no_screenshot", "no such screenshot")
            }
            ScreenshotError::TooLarge => {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", err.to_string())
            }
            ScreenshotError::Unreadable(_) => ApiError::internal(&anyhow::anyhow!("{err}")),
        })?;
    let mut response = png.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("image/png"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'; sandbox"),
    );
    // Behind the key: no shared cache keeps it.
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=3600"),
    );
    Ok(response)
}
