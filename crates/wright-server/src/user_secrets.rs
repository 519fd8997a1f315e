//! A user's secrets through the API (with `--database`): `GET /api/secrets` lists the
//! caller's names, `PUT /api/secrets/{name}` sets one, `DELETE /api/secrets/{name}`
//! removes one. Every call acts on the caller's own (the key says whose); no route
//! returns a value. Their values go to the shells of that user's conversations only,
//! masked in everything logged, shown or sent (`secrets_for`), and a user's conversation
//! gets none of the server's own secrets (`wright serve --secret`, the configuration's)
//! but those the admin shares (`wright serve --share-secret NAME`, `SettingsStarter`).
//!
//! The server key's secrets are the server's store (`wright secrets`, on the server):
//! these routes answer the admin 403 `users_only`, and 404 `no_database` without users.

use crate::error::ApiError;
use crate::routes::AppState;
use crate::tenancy::Caller;
use axum::extract::rejection::JsonRejection;
use axum::extract::Path;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Extension;
use axum::Json;
use serde::Deserialize;
use serde::Serialize;
use std::sync::Arc;
use utoipa::ToSchema;
use wright_session::database::Owner;
use wright_session::database::Store;
use wright_session::database::StoreError;

/// The names of the caller's secrets.
#[derive(Debug, Serialize, ToSchema)]
pub struct SecretNames {
    pub names: Vec<String>,
}

/// A secret's value, to set.
#[derive(Deserialize, ToSchema)]
pub struct SecretValue {
    pub value: String,
}

/// The user and the database a secrets route acts on.
fn of(state: &AppState, caller: Option<Extension<Caller>>) -> Result<(Store, i64), ApiError> {
    let Some(Extension(caller)) = caller else {
        return Err(ApiError::forbidden(
            "users_only",
            "these are users' secrets; the server's own are set on the server (wright secrets set NAME)",
        ));
    };
    let store = state.runs.store().ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "no_database",
            "this server has no users (start it with --database)",
        )
    })?;
    Ok((store.clone(), caller.0.id))
}

fn refused(err: StoreError) -> ApiError {
    match err {
        StoreError::BadSecretName(_) => ApiError::bad_request(err.to_string()),
        other => ApiError::internal(&other.into()),
    }
}

/// The names of the caller's secrets (never their values).
#[utoipa::path(get, path = "/api/secrets",
    responses((status = 200, body = SecretNames), (status = 403, body = crate::error::ErrorBody)))]
pub async fn list(
    State(state): State<Arc<AppState>>,
    caller: Option<Extension<Caller>>,
) -> Result<Json<SecretNames>, ApiError> {
    let (store, user) = of(&state, caller)?;
    let names = store.secret_names(user).await.map_err(refused)?;
    Ok(Json(SecretNames { names }))
}

/// Sets the caller's secret `name` (an environment variable's name): their conversations'
/// shells get it from their next run on, masked. 204.
#[utoipa::path(put, path = "/api/secrets/{name}", request_body = SecretValue,
    responses((status = 204), (status = 400, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody)))]
pub async fn set(
    State(state): State<Arc<AppState>>,
    caller: Option<Extension<Caller>>,
    Path(name): Path<String>,
    body: Result<Json<SecretValue>, JsonRejection>,
) -> Result<StatusCode, ApiError> {
    let (store, user) = of(&state, caller)?;
    let Json(body) = body?;
    if body.value.is_empty() {
        return Err(ApiError::bad_request("a secret's value is not empty"));
    }
    if wright_sandbox::set_for_shell(&name) {
        return Err(ApiError::bad_request(format!(
            "{name} is a variable wright sets for the shell itself: store it under another name"
        )));
    }
    store
        .set_secret(user, &name, &body.value)
        .await
        .map_err(refused)?;
    Ok(StatusCode::NO_CONTENT)
}

/// Removes the caller's secret `name`. 204; 404 `no_secret` when they have none of it.
#[utoipa::path(delete, path = "/api/secrets/{name}",
    responses((status = 204), (status = 404, body = crate::error::ErrorBody)))]
pub async fn remove(
    State(state): State<Arc<AppState>>,
    caller: Option<Extension<Caller>>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    let (store, user) = of(&state, caller)?;
    match store.remove_secret(user, &name).await.map_err(refused)? {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "no_secret",
            format!("you have no secret named {name}"),
        )),
    }
}

/// The secrets a run of `owner`'s conversation is given: `None` for the admin's (the
/// server's own, as without users); all of a user's own, and only those, for a user's.
pub async fn secrets_for(
    store: Option<&Store>,
    owner: Owner,
) -> anyhow::Result<Option<Vec<(String, String)>>> {
    let (Some(store), Owner::User(user)) = (store, owner) else {
        return Ok(None);
    };
    let names = store.secret_names(user).await?;
    Ok(Some(store.secret_values(user, &names).await?))
}
