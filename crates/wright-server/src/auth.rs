//! Who may talk to the server: every request names an allowed host (no DNS rebinding: a
//! page of another site whose name resolves to this machine names its own), comes from no
//! other origin, and carries the key — `Authorization: Bearer KEY` or `X-Session-API-Key:
//! KEY`, and on a WebSocket, which a browser cannot give headers, `?session_api_key=KEY`.
//! A key presented twice must be right both times. No CORS header is ever sent, so a
//! browser shares no answer with another origin.
//!
//! The browser's cookie (see `browser`) counts as the key when it is right; a wrong one
//! counts as none, since cookies ignore ports and another program's page on this machine
//! may have set one of the same name. A request that does work (anything but a `GET`,
//! and the `GET`s that probe a model server) on the cookie alone must say it comes from
//! this server's own page — `Sec-Fetch-Site: same-origin`, or an `Origin` of ours — since
//! a page on another local port is the same site, and its `<img>` would carry the cookie
//! with no `Origin`.

use crate::error::ApiError;
use crate::key::ServerKey;
use axum::extract::Request;
use axum::extract::State;
use axum::http::header;
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::IntoResponse;
use axum::response::Response;
use std::net::IpAddr;
use std::sync::Arc;

/// The header OpenHands' agent server reads its key from.
pub const KEY_HEADER: &str = "x-session-api-key";
/// The query parameter a WebSocket may carry the key in.
pub const KEY_QUERY: &str = "session_api_key";

/// `GET` routes that do work (they reach a model server) rather than read state.
const WORKING_GETS: &[&str] = &["/api/doctor", "/api/models", "/v1/models"];

/// What a request asks of the server, as far as who may ask it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asks {
    /// The one-time token's route: no key (the token instead).
    Token,
    /// Reading stored state, or a page.
    Reading,
    /// Changing something or probing a model server.
    Work,
}

impl Asks {
    /// What a request of `method` on `path` asks.
    pub fn of(method: &axum::http::Method, path: &str) -> Self {
        if path == crate::browser::AUTH_PATH || crate::signin::PUBLIC.contains(&path) {
            return Asks::Token;
        }
        let reads = matches!(*method, axum::http::Method::GET | axum::http::Method::HEAD);
        match reads && !WORKING_GETS.contains(&path) {
            true => Asks::Reading,
            false => Asks::Work,
        }
    }
}

/// The server's checks of every request.
pub struct Guard {
    key: ServerKey,
    /// The port the server listens on (a loopback page must be on it).
    port: u16,
    /// The one-time token and the cookie it becomes.
    pub browser: crate::browser::Browser,
    /// Host names (lower case, without port) requests may name besides loopback ones.
    hosts: Vec<String>,
}

/// Whether `host` (a name or an address, without port) is this machine's loopback.
pub fn is_loopback_name(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl Guard {
    pub fn new(
        key: ServerKey,
        port: u16,
        hosts: Vec<String>,
        browser: crate::browser::Browser,
    ) -> Self {
        let hosts = hosts
            .into_iter()
            .map(|h| {
                h.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_ascii_lowercase()
            })
            .collect();
        Self {
            key,
            port,
            hosts,
            browser,
        }
    }

    /// Whether `presented` is the server's key (in constant time).
    pub fn key_matches(&self, presented: &[u8]) -> bool {
        self.key.matches(presented)
    }

    /// Whether a `Host` value (a name or address, maybe with a port) is one of ours.
    fn host_allowed(&self, value: &str) -> bool {
        let Some(name) = host_name(value) else {
            return false;
        };
        is_loopback_name(&name) || self.hosts.contains(&name)
    }

    /// Whether an `Origin` value is a page of this server's.
    /// A page on a loopback name must be this server's own, port included: another
    /// program's page on this machine (another port) is the same site to a browser, and
    /// would send its cookie. A page on an allowed name comes through a proxy, whose port
    /// is its own.
    fn origin_allowed(&self, value: &str) -> bool {
        let Some(rest) = value
            .strip_prefix("http://")
            .or_else(|| value.strip_prefix("https://"))
        else {
            return false;
        };
        if rest.contains('/') {
            return false;
        }
        match host_and_port(rest) {
            Some((name, port)) if is_loopback_name(&name) => port == Some(self.port),
            Some((name, _)) => self.hosts.contains(&name),
            None => false,
        }
    }

    /// Checks `headers` (and, on a WebSocket, `query`): the host, the origin, the key
    /// (or the cookie). The token route wants no key: only the host and origin.
    pub fn check(
        &self,
        headers: &HeaderMap,
        query: Option<&str>,
        asks: Asks,
    ) -> Result<(), ApiError> {
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if !self.host_allowed(host) {
            return Err(ApiError::forbidden(
                "bad_host",
                "the Host header names no host this server answers to (start it with --allow-host NAME to add one)",
            ));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            if !origin.to_str().is_ok_and(|o| self.origin_allowed(o)) {
                return Err(ApiError::forbidden(
                    "bad_origin",
                    "requests from pages of another origin are refused",
                ));
            }
        }
        if asks == Asks::Token {
            return Ok(());
        }
        let mut presented: Vec<&[u8]> = Vec::new();
        for value in headers.get_all(header::AUTHORIZATION) {
            let bytes = value.as_bytes();
            match bytes.get(..7) {
                Some(scheme) if scheme.eq_ignore_ascii_case(b"bearer ") => {
                    presented.push(&bytes[7..])
                }
                _ => {
                    return Err(ApiError::unauthorized(
                        "wrong_key",
                        "the Authorization header must be `Bearer KEY`",
                    ))
                }
            }
        }
        for value in headers.get_all(KEY_HEADER) {
            presented.push(value.as_bytes());
        }
        let in_query = query.and_then(|q| query_value(q, KEY_QUERY));
        if let Some(value) = &in_query {
            presented.push(value.as_bytes());
        }
        if !presented.is_empty() {
            // Every one is compared, so timing does not say which was wrong.
            let right = presented
                .iter()
                .fold(true, |all, given| self.key.matches(given) & all);
            return match right {
                true => Ok(()),
                false => Err(ApiError::unauthorized("wrong_key", "the key is wrong")),
            };
        }
        // A wrong cookie is another program's of the same name: as if there were none.
        let cookie_right = crate::browser::cookies(headers)
            .iter()
            .fold(false, |any, given| self.browser.matches(given) | any);
        if !cookie_right {
            return Err(ApiError::unauthorized(
                "missing_key",
                "this server wants its key: `Authorization: Bearer KEY` or `X-Session-API-Key: KEY` (a browser opens the address printed at start)",
            ));
        }
        let same_origin = headers
            .get("sec-fetch-site")
            .is_some_and(|site| site.as_bytes() == b"same-origin");
        // An Origin present was checked above: it is ours.
        if asks == Asks::Work && !same_origin && headers.get(header::ORIGIN).is_none() {
            return Err(ApiError::forbidden(
                "not_same_origin",
                "on the browser's cookie, a request that does work must come from this server's own page (Sec-Fetch-Site: same-origin); other programs give the key",
            ));
        }
        Ok(())
    }
}

/// The host name of a `Host` value, lower case, without its port; `None` when malformed.
fn host_name(value: &str) -> Option<String> {
    host_and_port(value).map(|(name, _)| name)
}

/// The host name (lower case) and the port, if any, of a `Host` value or of an origin
/// without its scheme; `None` when malformed.
fn host_and_port(value: &str) -> Option<(String, Option<u16>)> {
    let value = value.trim();
    let (name, port) = if let Some(rest) = value.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        match after {
            "" => (inside, None),
            _ => (inside, Some(after.strip_prefix(':')?)),
        }
    } else {
        match value.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (value, None),
        }
    };
    let port = match port {
        Some(port) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            Some(port.parse().ok()?)
        }
        Some(_) => return None,
        None => None,
    };
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:".contains(&b));
    ok.then(|| (name.to_ascii_lowercase(), port))
}

/// The value of `name` in a query string (percent-decoded).
pub(crate) fn query_value(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then(|| percent_decode(value))
    })
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The middleware: every route goes through it.
pub async fn require(
    State(state): State<Arc<crate::routes::AppState>>,
    request: Request,
    next: Next,
) -> Response {
    // The key in the query only where headers cannot be set: the WebSocket.
    let query = request
        .uri()
        .path()
        .starts_with("/sockets/")
        .then(|| request.uri().query())
        .flatten();
    let asks = Asks::of(request.method(), request.uri().path());
    match state.guard.check(request.headers(), query, asks) {
        Ok(()) => next.run(request).await,
        // Not the server key: a user's, when the server has users (`tenancy`).
        Err(err) => {
            let key = crate::tenancy::presented_key(request.headers(), query, &err);
            match crate::tenancy::user_of(&state, key).await {
                Some(user) => crate::tenancy::run_as(state, user, request, next).await,
                // A browser opening the UI without a session: how to sign in, not JSON.
                None if err.status == axum::http::StatusCode::UNAUTHORIZED
                    && request.method() == axum::http::Method::GET
                    && request.uri().path() == "/"
                    && crate::signin::wants_page(request.headers()) =>
                {
                    crate::signin::page(err.status)
                }
                None => err.into_response(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn hosts_are_read_without_their_port() {
        assert_eq!(host_name("127.0.0.1:3000").as_deref(), Some("127.0.0.1"));
        assert_eq!(host_name("LocalHost").as_deref(), Some("localhost"));
        assert_eq!(host_name("[::1]:80").as_deref(), Some("::1"));
        assert_eq!(
            host_name("evil.example:3000").as_deref(),
            Some("evil.example")
        );
        assert_eq!(host_name("a b:1"), None);
        assert_eq!(host_name("x:y"), None);
        assert_eq!(host_name("[::1]x"), None);
        assert_eq!(host_name("x:"), None);
        assert_eq!(
            host_and_port("[::1]:8080"),
            Some(("::1".into(), Some(8080)))
        );
        assert_eq!(host_and_port("a:99999"), None);
        assert!(is_loopback_name("[::1]"));
        assert!(is_loopback_name("127.0.0.2"));
        assert!(!is_loopback_name("localhost.evil.example"));
        assert_eq!(
            query_value("a=1&session_api_key=k%2By", KEY_QUERY).as_deref(),
            Some("k+y")
        );
    }
}
