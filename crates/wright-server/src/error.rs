//! The server's errors: a status and a JSON body `{"error": CODE, "message": TEXT}`, a
//! code clients branch on and a sentence people read. Bad input of every kind (malformed
//! JSON, an oversized body, a bad id, a bad query) is answered this way, never with
//! axum's plain-text rejections.

use axum::extract::rejection::JsonRejection;
use axum::extract::rejection::PathRejection;
use axum::extract::rejection::QueryRejection;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

/// An error answered to a client.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

/// The body of every error.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong, for programs: `missing_key`, `wrong_key`, `bad_host`,
    /// `bad_origin`, `bad_id`, `not_found`, `bad_json`, `too_large`, `bad_query`,
    /// `bad_request`, `conflict`, `internal`.
    pub error: String,
    /// What went wrong, for people.
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }
    pub fn unauthorized(code: &'static str, message: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, code, message)
    }
    pub fn forbidden(code: &'static str, message: &str) -> Self {
        Self::new(StatusCode::FORBIDDEN, code, message)
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }
    pub fn not_found(id: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no conversation {id}"),
        )
    }
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", message)
    }
    pub fn internal(err: &anyhow::Error) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("{err:#}"),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            Json(ErrorBody {
                error: self.code.to_string(),
                message: self.message,
            }),
        )
            .into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        let status = rejection.status();
        let code = match status {
            StatusCode::PAYLOAD_TOO_LARGE => "too_large",
            _ => "bad_json",
        };
        let message = match status {
            StatusCode::PAYLOAD_TOO_LARGE => {
                format!("the body is larger than {} bytes", crate::BODY_LIMIT)
            }
            _ => rejection.body_text(),
        };
        // A body that is not JSON at all, or JSON of the wrong shape: both the client's.
        let status = match status {
            StatusCode::PAYLOAD_TOO_LARGE | StatusCode::UNSUPPORTED_MEDIA_TYPE => status,
            _ => StatusCode::BAD_REQUEST,
        };
        Self::new(status, code, message)
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_query", rejection.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_id", rejection.body_text())
    }
}

/// A conversation's id from a path, refused unless it is plain (no separator, no `..`):
/// ids name directories.
pub fn plain_id(id: &str) -> Result<&str, ApiError> {
    if wright_session::stored::is_plain_id(id) {
        Ok(id)
    } else {
        Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_id",
            "a conversation's id is letters, digits and dashes",
        ))
    }
}
