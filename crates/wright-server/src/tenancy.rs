//! Users' keys (with `--database`): a request whose key is not the server key but a
//! user's (`wright user add`) acts as that user, and sees only that user's conversations.
//! The server key is the admin's and sees all, as without a database.
//!
//! What it guarantees: a user's request naming a conversation that is not theirs — on
//! any route under `/api/conversations/{id}` and on `/sockets/events/{id}` — is answered
//! exactly as an unknown id is (404 `not_found`, the same body), before any handler runs,
//! so nothing of it is read, changed or confirmed to exist; the list holds theirs only;
//! what they create is theirs, on a `repository_url`'s clone or a directory under the
//! roots the admin allowed them (`crate::rights`), never elsewhere. Their secrets are
//! theirs (`crate::user_secrets`). Every other route is the admin's (403), so a route added
//! later is closed to users until it is made theirs.

use crate::error::ApiError;
use crate::routes::AppState;
use axum::extract::Request;
use axum::http::header;
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::IntoResponse;
use axum::response::Response;
use std::sync::Arc;
use wright_session::database::Owner;
use wright_session::database::User;

/// The user a request acts as (absent: the admin).
#[derive(Debug, Clone)]
pub struct Caller(pub User);

impl Caller {
    pub fn owner(&self) -> Owner {
        Owner::User(self.0.id)
    }
}

/// Routes a user may take besides their conversations': the static UI, the API's
/// description, the models.
const OPEN_TO_USERS: &[&str] = &[
    "/",
    "/openapi.json",
    "/api/models",
    "/api/conversations",
    "/api/secrets",
];

/// The one key a request carries (headers, or a WebSocket's query), when the server
/// key check refused it as a wrong key (host and origin were right): a user's, maybe.
/// Read before anything is awaited, so no borrow of the request outlives it.
pub fn presented_key(
    headers: &HeaderMap,
    query: Option<&str>,
    refused: &ApiError,
) -> Option<String> {
    if refused.code != "wrong_key" {
        return None;
    }
    let mut presented: Vec<String> = Vec::new();
    for value in headers.get_all(header::AUTHORIZATION) {
        let text = value.to_str().ok()?;
        if !text.get(..7)?.eq_ignore_ascii_case("bearer ") {
            return None;
        }
        presented.push(text.get(7..)?.to_string());
    }
    for value in headers.get_all(crate::auth::KEY_HEADER) {
        presented.push(value.to_str().ok()?.to_string());
    }
    if let Some(value) = query.and_then(|q| crate::auth::query_value(q, crate::auth::KEY_QUERY)) {
        presented.push(value);
    }
    // One key, however many times given: two different ones are refused.
    presented.sort();
    presented.dedup();
    match presented.as_slice() {
        [key] => Some(key.clone()),
        _ => None,
    }
}

/// The user whose key `key` is, when the server has a database.
pub async fn user_of(state: &AppState, key: Option<String>) -> Option<User> {
    let store = state.runs.store()?;
    store.user_by_key(&key?).await.ok().flatten()
}

/// Runs `request` as `user`: their conversations only, the routes open to users only.
pub async fn run_as(
    state: Arc<AppState>,
    user: User,
    mut request: Request,
    next: Next,
) -> Response {
    let caller = Caller(user);
    let path = request.uri().path().to_string();
    let named = path
        .strip_prefix("/api/conversations/")
        .or_else(|| path.strip_prefix("/sockets/events/"))
        .map(|rest| rest.split('/').next().unwrap_or_default());
    match named {
        Some(id) => match owns(&state, &caller, id).await {
            Ok(true) => {}
            // Theirs or nobody's: the same answer.
            Ok(false) => return ApiError::not_found(id).into_response(),
            Err(err) => return err.into_response(),
        },
        None if OPEN_TO_USERS.contains(&path.as_str())
            || path.starts_with("/ui/")
            || path.starts_with("/api/secrets/") => {}
        None => {
            return ApiError::forbidden(
                "admin_only",
                "this route is the admin's (the server key's), not a user's",
            )
            .into_response()
        }
    }
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// Whether conversation `id` is the caller's: as the database recorded it, else (queued,
/// nothing logged yet) as this server's runs know it.
async fn owns(state: &AppState, caller: &Caller, id: &str) -> Result<bool, ApiError> {
    let recorded = match state.runs.store() {
        Some(store) => store
            .owner(id)
            .await
            .map_err(|err| ApiError::internal(&err.into()))?,
        None => None,
    };
    let owner = recorded.or_else(|| state.runs.job_owner(id));
    Ok(owner == Some(caller.owner()))
}

/// The conversations among `ids` the caller sees (all of them for the admin).
pub async fn visible(
    state: &AppState,
    caller: Option<&Caller>,
    ids: Vec<String>,
) -> Result<Vec<String>, ApiError> {
    let Some(caller) = caller else {
        return Ok(ids);
    };
    let mut theirs = Vec::new();
    for id in ids {
        if owns(state, caller, &id).await? {
            theirs.push(id);
        }
    }
    Ok(theirs)
}

/// Refuses settings that widen what a run reaches (`crate::widening`) when a user asks
/// for them and the server's configuration does not let users; the admin may.
pub fn may_set(
    state: &AppState,
    caller: Option<&Caller>,
    settings: &crate::api::Settings,
) -> Result<(), ApiError> {
    match caller {
        None => Ok(()),
        Some(_) => state.runs.starter.user_limits().check_user(settings),
    }
}

/// Creates a conversation of the caller's: on a `repository_url`'s clone, or a workspace
/// under one of their roots (`crate::rights`, taken as its canonical path); its owner is
/// recorded in the database before anything of it runs.
pub async fn create(
    state: &AppState,
    caller: &Caller,
    mut request: crate::api::NewConversation,
) -> Result<String, ApiError> {
    may_set(state, Some(caller), &request.settings)?;
    if let Some(given) = &request.workspace {
        request.workspace = Some(crate::rights::workspace_of(state, caller, given).await?);
    }
    crate::rights::may_run(state, Some(caller), "").await?;
    let id = state.runs.create_as(request, caller.owner())?;
    if let Some(store) = state.runs.store() {
        store
            .add_conversation(&id, caller.owner())
            .await
            .map_err(|err| ApiError::internal(&err.into()))?;
    }
    Ok(id)
}
