//! Signing a browser in. A browser that opens the UI without a session (no cookie, or a
//! wrong or stray one, which counts as none) gets a page saying how to sign in — open
//! the address `wright serve` printed, or paste the server's key — never the API's
//! `missing_key` JSON (a program, which does not ask for HTML, still gets that). Pasting the key (`POST /auth` with it, from the page's script)
//! sets the same cookie as the one-time address does.
//!
//! Where a sign-in leads afterwards (`next`) is a path of this server only: it starts
//! with one `/`, holds no backslash, no control character and no scheme, so neither the
//! one-time address nor the form can send a browser to another site.

use crate::error::ApiError;
use crate::routes::AppState;
use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::Json;
use std::sync::Arc;

/// The UI files the sign-in page needs, served without a session (what every copy of
/// wright holds: no data of this server's).
pub const PUBLIC: &[&str] = &["/ui/signin.js", "/ui/style.css", "/ui/icon.svg"];

/// Where a sign-in goes when nothing (or nothing acceptable) was asked.
pub const HOME: &str = "/";

/// `next` when it is a path of this server: one leading `/` (not `//`, which a browser
/// reads as another host), no backslash (which browsers read as `/`), no control
/// character or space, no scheme before the first `/`.
pub fn safe_next(next: &str) -> Option<&str> {
    let rest = next.strip_prefix('/')?;
    let plain = !rest.starts_with('/')
        && !next.contains('\\')
        && next.chars().all(|c| !c.is_control() && c != ' ')
        && next.len() <= 2048;
    plain.then_some(next)
}

/// Whether a request is a browser opening a page (it takes HTML): it gets the sign-in
/// page where a program gets the API's JSON error.
pub fn wants_page(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get_all(axum::http::header::ACCEPT)
        .iter()
        .any(|value| value.to_str().is_ok_and(|v| v.contains("text/html")))
}

/// The sign-in page, with `status` (401: the browser has no session).
pub fn page(status: StatusCode) -> Response {
    let mut response = crate::ui::named("signin.html");
    *response.status_mut() = status;
    response
}

#[derive(serde::Deserialize)]
pub struct KeyGiven {
    key: String,
    #[serde(default)]
    next: Option<String>,
}

#[derive(serde::Serialize)]
pub struct SignedIn {
    /// Where the page goes now: the `next` asked for when it is safe, else `/`.
    next: String,
}

/// `POST /auth` `{"key": KEY, "next": PATH}`: the server's key for the browser's cookie.
/// JSON only (a form of another site cannot send it, and its `Origin` is refused before
/// this runs).
pub async fn with_key(
    State(state): State<Arc<AppState>>,
    body: Result<Json<KeyGiven>, JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(given) = body?;
    if !state.guard.key_matches(given.key.trim().as_bytes()) {
        return Err(ApiError::unauthorized(
            "wrong_key",
            "that is not this server's key: it is the `key` line wright serve printed at start (or WRIGHT_SERVER_KEY)",
        ));
    }
    let next = given
        .next
        .as_deref()
        .and_then(safe_next)
        .unwrap_or(HOME)
        .to_string();
    let mut response = Json(SignedIn { next }).into_response();
    response.headers_mut().insert(
        axum::http::header::SET_COOKIE,
        state.guard.browser.cookie()?,
    );
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_is_a_path_of_this_server_only() {
        for good in [
            "/",
            "/#/c/20260101-000000-b2k0",
            "/#/c/ID/diff",
            "/?x=1#/new",
        ] {
            assert_eq!(safe_next(good), Some(good), "{good}");
        }
        for bad in [
            "",
            "//evil.example/",
            "https://evil.example/",
            "http:/evil",
            "evil.example",
            "/\\evil.example",
            "\\\\evil.example",
            "/\t/evil.example",
            "/ /evil",
            "javascript:alert(1)",
            "#/c/ID",
        ] {
            assert_eq!(safe_next(bad), None, "{bad:?}");
        }
    }
}
