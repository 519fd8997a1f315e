//! The browser UI: static files (plain JavaScript modules and CSS, hand-written, no build
//! step) embedded in the binary, served at `/` and `/ui/NAME` behind the same guard as
//! every route (the one-time address's cookie counts as the key).
//!
//! What it guarantees: the UI's pages run only the server's own scripts — a strict
//! Content-Security-Policy (no inline script, no `eval`, no other origin, Trusted Types
//! required, so an `innerHTML` of a string throws) — and every answer of the server,
//! API and UI alike, says `X-Content-Type-Options: nosniff` and may not be framed.

use axum::extract::Path;
use axum::extract::Request;
use axum::http::header;
use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::IntoResponse;
use axum::response::Response;

/// The UI pages' policy: only this server's scripts, styles and connections (its
/// WebSocket included: `'self'` covers `ws:` on the same host and port), nothing framed,
/// no plugin, no `<base>`, and no string ever turned into HTML or script.
pub const UI_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self'; connect-src 'self'; form-action 'none'; base-uri 'none'; \
frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'";

/// What every other answer (JSON, downloads) may do when a browser renders it: nothing.
const API_POLICY: &str = "default-src 'none'; frame-ancestors 'none'; sandbox";

/// One embedded file.
struct Asset {
    name: &'static str,
    mime: &'static str,
    bytes: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $mime:expr) => {
        Asset {
            name: $name,
            mime: $mime,
            bytes: include_bytes!(concat!("../web/", $name)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// The UI's files, as `/ui/NAME` serves them (`index.html` is also `/`).
const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("signin.html", "text/html; charset=utf-8"),
    asset!("signin.js", JS),
    asset!("style.css", "text/css; charset=utf-8"),
    asset!("app.js", JS),
    asset!("api.js", JS),
    asset!("dom.js", JS),
    asset!("list.js", JS),
    asset!("new.js", JS),
    asset!("conversation.js", JS),
    asset!("controls.js", JS),
    asset!("events.js", JS),
    asset!("tools.js", JS),
    asset!("rows.js", JS),
    asset!("fields.js", JS),
    asset!("kinds.js", JS),
    asset!("feed.js", JS),
    asset!("stats.js", JS),
    asset!("diff.js", JS),
    asset!("confirm.js", JS),
    asset!("workspace.js", JS),
    asset!("live.js", JS),
    asset!("automations.js", JS),
    asset!("settings.js", JS),
    asset!("screenshot.js", JS),
    asset!("icon.svg", "image/svg+xml"),
];

fn serve(asset: &Asset) -> Response {
    let mut response = (StatusCode::OK, asset.bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.mime));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(UI_POLICY),
    );
    // A new binary's files are taken at once; the server is local, revalidating is cheap.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// `GET /`: the UI's page.
pub async fn index() -> Response {
    named("index.html")
}

/// One of the UI's pages by its name, with the UI's headers.
pub fn named(name: &str) -> Response {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(asset) => serve(asset),
        None => {
            crate::error::ApiError::new(StatusCode::NOT_FOUND, "not_found", "no UI").into_response()
        }
    }
}

/// `GET /ui/NAME`: one of the UI's files.
pub async fn file(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(asset) => serve(asset),
        None => crate::error::ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "the UI has no such file",
        )
        .into_response(),
    }
}

/// Every answer: `nosniff` (a browser never reads a download or a JSON body as a page or
/// a script) and, unless it is a UI page with its own, a policy that lets it do nothing.
pub async fn harden(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(API_POLICY),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of every asset: what a first load costs at most.
    fn total_bytes() -> usize {
        ASSETS.iter().map(|a| a.bytes.len()).sum()
    }

    #[test]
    fn the_ui_is_small_and_every_module_it_imports_is_served() {
        // The budget for a first load: 300 KB, all assets.
        assert!(total_bytes() < 300 * 1024, "{} bytes", total_bytes());
        for asset in ASSETS.iter().filter(|a| a.name.ends_with(".js")) {
            let text = String::from_utf8_lossy(asset.bytes);
            for line in text.lines().filter(|l| l.starts_with("import ")) {
                let Some(from) = line.split('"').nth(1) else {
                    continue;
                };
                let name = from.trim_start_matches("./");
                assert!(
                    ASSETS.iter().any(|a| a.name == name),
                    "{} imports {from}, which is not served",
                    asset.name
                );
            }
        }
    }

    #[test]
    fn no_asset_turns_a_string_into_html_or_code() {
        for asset in ASSETS.iter().filter(|a| a.name.ends_with(".js")) {
            let text = String::from_utf8_lossy(asset.bytes);
            for sink in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
                "eval(",
                "new Function",
                "srcdoc",
                "createContextualFragment",
            ] {
                assert!(!text.contains(sink), "{} uses {sink}", asset.name);
            }
        }
    }
}
