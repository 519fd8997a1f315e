//! Browsers: a page load or a WebSocket from a browser cannot carry a header, so the
//! address printed at start carries a one-time token (`/auth?token=…`). Opened once, it
//! becomes a cookie — HttpOnly (no script reads it), SameSite=Strict (no other site's
//! request carries it) — holding a secret of its own (not the key), and the token is
//! spent. The cookie counts as the key on every route; Host and Origin are checked as
//! for any request.

use crate::error::ApiError;
use crate::key::ServerKey;
use crate::routes::AppState;
use axum::extract::Query;
use axum::extract::State;
use axum::http::header;
use axum::http::HeaderMap;
use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use std::sync::Arc;
use std::sync::Mutex;

/// The cookie's name.
pub const COOKIE: &str = "wright_session";
/// The one route a request may take without the key (with the token instead).
pub const AUTH_PATH: &str = "/auth";

pub struct Browser {
    /// The one-time token, until it is used.
    token: Mutex<Option<ServerKey>>,
    /// For printing.
    token_text: String,
    /// What the cookie holds.
    secret: ServerKey,
}

impl Browser {
    pub fn new() -> std::io::Result<Self> {
        let token = ServerKey::generate()?;
        Ok(Self {
            token_text: token.as_str().to_string(),
            token: Mutex::new(Some(token)),
            secret: ServerKey::generate()?,
        })
    }

    pub fn token(&self) -> &str {
        &self.token_text
    }

    /// Spends the token when `presented` is it.
    fn spend(&self, presented: &[u8]) -> bool {
        let Ok(mut slot) = self.token.lock() else {
            return false;
        };
        let right = slot.as_ref().is_some_and(|token| token.matches(presented));
        if right {
            *slot = None;
        }
        right
    }

    /// The `Set-Cookie` value that gives a browser its session.
    pub fn cookie(&self) -> Result<HeaderValue, ApiError> {
        let cookie = format!(
            "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
            self.secret.as_str()
        );
        HeaderValue::from_str(&cookie).map_err(|err| ApiError::internal(&anyhow::anyhow!("{err}")))
    }

    /// Whether `presented` is the cookie's secret (in constant time).
    pub fn matches(&self, presented: &[u8]) -> bool {
        self.secret.matches(presented)
    }
}

/// The values of wright's cookie in `headers`.
pub fn cookies(headers: &HeaderMap) -> Vec<&[u8]> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .flat_map(|value| value.as_bytes().split(|&b| b == b';'))
        .filter_map(|pair| {
            let pair = pair.trim_ascii();
            let (name, value) = pair.split_at(pair.iter().position(|&b| b == b'=')?);
            (name == COOKIE.as_bytes()).then_some(&value[1..])
        })
        .collect()
}

#[derive(serde::Deserialize)]
pub struct Token {
    token: String,
    /// Where to go once signed in: a path of this server (`crate::signin::safe_next`).
    #[serde(default)]
    next: Option<String>,
}

/// `GET /auth?token=…[&next=PATH]`: the token, once, for the cookie; then to `next`
/// (a path of this server, else refused before the token is spent) or `/`. A browser
/// with a wrong or spent token gets the sign-in page.
pub async fn open(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    query: Result<Query<Token>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(Token { token, next }) = query?;
    let next = match next.as_deref() {
        None => crate::signin::HOME,
        Some(asked) => crate::signin::safe_next(asked).ok_or_else(|| {
            ApiError::bad_request(
                "next must be a path of this server (one leading /, no backslash)",
            )
        })?,
    };
    let browser = &state.guard.browser;
    if !browser.spend(token.as_bytes()) {
        if crate::signin::wants_page(&headers) {
            return Ok(crate::signin::page(StatusCode::UNAUTHORIZED));
        }
        return Err(ApiError::unauthorized(
            "wrong_token",
            "this token is wrong or was used already: the address printed at start opens once",
        ));
    }
    let location =
        HeaderValue::from_str(next).map_err(|err| ApiError::internal(&anyhow::anyhow!("{err}")))?;
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, browser.cookie()?);
    Ok(response)
}
