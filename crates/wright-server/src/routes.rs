//! The REST routes, shaped after OpenHands' agent server (`/api/conversations`, its
//! events), each a few lines over `Runs` and the logs. Every route is behind the guard
//! (`auth::require`); every error is `ApiError`'s JSON.

use crate::api;
use crate::auth::Guard;
use crate::error::plain_id;
use crate::error::ApiError;
use crate::runs::Runs;
use axum::extract::rejection::JsonRejection;
use axum::extract::rejection::PathRejection;
use axum::extract::rejection::QueryRejection;
use axum::extract::DefaultBodyLimit;
use axum::extract::Path;
use axum::extract::Query;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::routing::post;
use axum::Json;
use axum::Router;
use std::sync::Arc;

pub struct AppState {
    pub runs: Arc<Runs>,
    pub guard: Guard,
    /// The workspace of the OpenAI-compatible endpoint (`--workspace`).
    pub workspace: Option<std::path::PathBuf>,
    /// What the OpenAI-compatible endpoint answered, by conversation.
    pub exchanges: Arc<crate::openai_history::Exchanges>,
    /// The automations and what their firings did.
    pub automations: Arc<crate::automations::Automations>,
}

type Shared = State<Arc<AppState>>;

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route(
            "/api/conversations",
            post(create_conversation).get(list_conversations),
        )
        .route(
            "/api/conversations/{id}",
            get(get_conversation).delete(delete_conversation),
        )
        .route("/api/secrets", get(crate::user_secrets::list))
        .route(
            "/api/secrets/{name}",
            axum::routing::put(crate::user_secrets::set).delete(crate::user_secrets::remove),
        )
        .route("/api/conversations/{id}/events", get(conversation_events))
        .route("/api/conversations/{id}/interrupt", post(interrupt))
        // OpenHands' agent server calls it so.
        .route("/api/conversations/{id}/pause", post(interrupt))
        .route("/api/conversations/{id}/run", post(run))
        .route("/api/conversations/{id}/condense", post(condense))
        .route("/api/conversations/{id}/ask", post(crate::aside::ask))
        .route("/api/conversations/{id}/messages", post(send_message))
        .route("/api/conversations/{id}/diff", get(crate::changes::diff))
        .route(
            "/api/conversations/{id}/live-diff",
            get(crate::live::live_diff),
        )
        .route("/api/conversations/{id}/fork", post(crate::actions::fork))
        .route("/api/conversations/{id}/apply", post(crate::actions::apply))
        .route(
            "/api/conversations/{id}/discard",
            post(crate::actions::discard),
        )
        .route("/api/conversations/{id}/file", get(crate::actions::file))
        .route(
            "/api/conversations/{id}/screenshots/{name}",
            get(crate::screenshot::screenshot),
        )
        .route(
            "/api/conversations/{id}/files",
            get(crate::workspace::files),
        )
        .route("/api/automations", get(crate::automations::list))
        .route("/api/models", get(crate::setup::models))
        .route("/api/agents", get(crate::agents_view::agents))
        .route("/api/doctor", get(crate::setup::doctor))
        .route(
            "/api/settings",
            get(crate::settings_view::settings).put(crate::settings_view::change),
        )
        .route(
            "/api/conversations/{id}/confirm",
            post(crate::confirm::confirm),
        )
        .route("/v1/models", get(crate::openai::models))
        .route("/v1/chat/completions", post(crate::openai::completions))
        .route("/sockets/events/{id}", get(crate::socket::events))
        .route("/openapi.json", get(crate::openapi::document))
        .route(
            crate::browser::AUTH_PATH,
            get(crate::browser::open).post(crate::signin::with_key),
        )
        .route("/", get(crate::ui::index))
        .route("/ui/{name}", get(crate::ui::file))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(crate::BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::auth::require,
        ))
        .layer(axum::middleware::from_fn(crate::ui::harden))
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not take that method",
    )
}

/// The id in a path, plain or refused.
pub fn path_id(path: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    let Path(id) = path?;
    plain_id(&id).map(str::to_string)
}

/// Creates a conversation and starts it in the background (queued while `--max-runs`
/// others run). A user's (with `--database`): on a `repository_url`, or a workspace under
/// their roots (any other path: 400, the same answer whether it exists or not); 429
/// `quota_exceeded` while their limit of runs at once is reached.
#[utoipa::path(post, path = "/api/conversations", request_body = api::NewConversation,
    responses((status = 202, body = api::Conversation), (status = 400, body = crate::error::ErrorBody), (status = 429, body = crate::error::ErrorBody)))]
pub async fn create_conversation(
    State(state): Shared,
    caller: Option<axum::Extension<crate::tenancy::Caller>>,
    body: Result<Json<api::NewConversation>, JsonRejection>,
) -> Result<(StatusCode, Json<api::Conversation>), ApiError> {
    let Json(request) = body?;
    let id = match caller {
        Some(axum::Extension(caller)) => crate::tenancy::create(&state, &caller, request).await?,
        None => state.runs.create(request)?,
    };
    let info = state
        .runs
        .info(&id)
        .ok_or_else(|| ApiError::not_found(&id))?;
    Ok((StatusCode::ACCEPTED, Json(info)))
}

/// Every conversation, newest first (read from the logs: a restarted server lists them
/// all), or those in a state, or whose task holds a text.
#[utoipa::path(get, path = "/api/conversations", params(api::Search),
    responses((status = 200, body = api::Conversations), (status = 400, body = crate::error::ErrorBody)))]
pub async fn list_conversations(
    State(state): Shared,
    caller: Option<axum::Extension<crate::tenancy::Caller>>,
    query: Result<Query<api::Search>, QueryRejection>,
) -> Result<Json<api::Conversations>, ApiError> {
    let Query(search) = query?;
    let runs = state.runs.clone();
    let mut conversations = tokio::task::spawn_blocking(move || runs.list())
        .await
        .map_err(|err| ApiError::internal(&anyhow::anyhow!("{err}")))?
        .map_err(|err| ApiError::internal(&err))?;
    let ids = conversations.iter().map(|c| c.id.clone()).collect();
    let seen = crate::tenancy::visible(&state, caller.as_deref(), ids).await?;
    conversations.retain(|c| seen.contains(&c.id));
    let text = search.q.map(|q| q.to_lowercase());
    conversations.retain(|c| {
        search.state.is_none_or(|state| c.state == state)
            && text
                .as_deref()
                .is_none_or(|text| c.task.to_lowercase().contains(text))
    });
    Ok(Json(api::Conversations { conversations }))
}

#[utoipa::path(get, path = "/api/conversations/{id}",
    responses((status = 200, body = api::Conversation), (status = 404, body = crate::error::ErrorBody)))]
pub async fn get_conversation(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<api::Conversation>, ApiError> {
    let id = path_id(path)?;
    state
        .runs
        .info(&id)
        .map(Json)
        .ok_or_else(|| ApiError::not_found(&id))
}

/// A page of the conversation's events, from its log.
#[utoipa::path(get, path = "/api/conversations/{id}/events", params(api::Page),
    responses((status = 200, body = api::EventsPage), (status = 404, body = crate::error::ErrorBody)))]
pub async fn conversation_events(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<api::Page>, QueryRejection>,
) -> Result<Json<api::EventsPage>, ApiError> {
    let id = path_id(path)?;
    let Query(page) = query?;
    let limit = page.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_query",
            "limit is from 1 to 1000",
        ));
    }
    let log = wright_session::stored::conversations_root()
        .join(&id)
        .join("events.jsonl");
    let after = page.after;
    let read = tokio::task::spawn_blocking(move || wright_protocol::read_page(&log, after, limit))
        .await
        .map_err(|err| ApiError::internal(&anyhow::anyhow!("{err}")))?;
    let (events, more) = match read {
        Ok(page) => (page.events, page.more),
        Err(wright_protocol::LogError::Io { .. }) if state.runs.info(&id).is_some() => {
            // Accepted, and not started yet: no log so far.
            (Vec::new(), false)
        }
        Err(wright_protocol::LogError::Io { .. }) => return Err(ApiError::not_found(&id)),
        Err(err) => return Err(ApiError::internal(&err.into())),
    };
    let next_after = more.then(|| events.last().map(|e| e.id)).flatten();
    Ok(Json(api::EventsPage { events, next_after }))
}

/// Stops a queued or running conversation once its current step is logged.
#[utoipa::path(post, path = "/api/conversations/{id}/interrupt",
    responses((status = 202, body = api::Conversation), (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn interrupt(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
) -> Result<(StatusCode, Json<api::Conversation>), ApiError> {
    let id = path_id(path)?;
    state.runs.interrupt(&id)?;
    let info = state
        .runs
        .info(&id)
        .ok_or_else(|| ApiError::not_found(&id))?;
    Ok((StatusCode::ACCEPTED, Json(info)))
}

/// Goes on with a conversation that is not running: the message is the agent's next
/// instruction (as `wright resume ID MESSAGE`).
#[utoipa::path(post, path = "/api/conversations/{id}/messages", request_body = api::Message,
    responses((status = 202, body = api::Conversation), (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn send_message(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
    caller: Option<axum::Extension<crate::tenancy::Caller>>,
    body: Result<Json<api::Message>, JsonRejection>,
) -> Result<(StatusCode, Json<api::Conversation>), ApiError> {
    let id = path_id(path)?;
    let Json(message) = body?;
    crate::tenancy::may_set(&state, caller.as_deref(), &message.settings)?;
    crate::rights::may_run(&state, caller.as_deref(), &id).await?;
    state.runs.message(&id, message)?;
    let info = state
        .runs
        .info(&id)
        .ok_or_else(|| ApiError::not_found(&id))?;
    Ok((StatusCode::ACCEPTED, Json(info)))
}

/// Goes on with a conversation that stopped (a limit, an interrupt, a crash) from where
/// its log ends, without a message (as `wright resume ID`); a finished one needs a message.
#[utoipa::path(post, path = "/api/conversations/{id}/run", request_body = api::Run,
    responses((status = 202, body = api::Conversation), (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn run(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
    caller: Option<axum::Extension<crate::tenancy::Caller>>,
    body: Result<Option<Json<api::Run>>, JsonRejection>,
) -> Result<(StatusCode, Json<api::Conversation>), ApiError> {
    let id = path_id(path)?;
    // No body at all: the server's settings.
    let settings = body?.map(|Json(run)| run.settings).unwrap_or_default();
    crate::tenancy::may_set(&state, caller.as_deref(), &settings)?;
    crate::rights::may_run(&state, caller.as_deref(), &id).await?;
    state.runs.run(&id, settings, false)?;
    let info = state
        .runs
        .info(&id)
        .ok_or_else(|| ApiError::not_found(&id))?;
    Ok((StatusCode::ACCEPTED, Json(info)))
}

/// Condenses the conversation's history (masking old outputs, else a summary by the
/// model), then goes on: with the message, or from where its log ends.
#[utoipa::path(post, path = "/api/conversations/{id}/condense", request_body = api::Condense,
    responses((status = 202, body = api::Conversation), (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn condense(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
    caller: Option<axum::Extension<crate::tenancy::Caller>>,
    body: Result<Option<Json<api::Condense>>, JsonRejection>,
) -> Result<(StatusCode, Json<api::Conversation>), ApiError> {
    let id = path_id(path)?;
    let request = body?.map(|Json(request)| request).unwrap_or_default();
    crate::tenancy::may_set(&state, caller.as_deref(), &request.settings)?;
    crate::rights::may_run(&state, caller.as_deref(), &id).await?;
    match request.message {
        Some(text) => state.runs.message(
            &id,
            api::Message {
                text,
                settings: request.settings,
                condense: true,
            },
        )?,
        None => state.runs.run(&id, request.settings, true)?,
    }
    let info = state
        .runs
        .info(&id)
        .ok_or_else(|| ApiError::not_found(&id))?;
    Ok((StatusCode::ACCEPTED, Json(info)))
}

/// `?force=true`
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct Force {
    /// Remove it even when its changes were never taken.
    pub force: Option<bool>,
}

/// Removes a conversation that is not running: log, clone, branch (refused, 409, while
/// its changes were never taken, unless `force`).
#[utoipa::path(delete, path = "/api/conversations/{id}", params(Force),
    responses((status = 204), (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn delete_conversation(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<Force>, QueryRejection>,
) -> Result<StatusCode, ApiError> {
    let id = path_id(path)?;
    let Query(force) = query?;
    if state.runs.is_active(&id) {
        return Err(ApiError::conflict(format!(
            "conversation {id} is running; interrupt it first"
        )));
    }
    if state.runs.info(&id).is_none() {
        return Err(ApiError::not_found(&id));
    }
    let dir = wright_session::stored::conversation_dir(&id);
    if dir.join("events.jsonl").is_file() {
        let force = force.force.unwrap_or(false);
        let removed =
            tokio::task::spawn_blocking(move || wright_session::removal::remove(&dir, force))
                .await
                .map_err(|err| ApiError::internal(&anyhow::anyhow!("{err}")))?;
        match removed {
            Ok(_) => {}
            Err(wright_session::removal::RemoveError::HoldsWork(_)) => {
                return Err(ApiError::conflict(format!(
                    "conversation {id} holds changes nobody took; DELETE with ?force=true removes it all the same"
                )))
            }
            Err(err) => return Err(ApiError::internal(&err.into())),
        }
    }
    state.runs.forget(&id);
    // A removed conversation's history continues nothing any more.
    state.exchanges.forget(&id);
    Ok(StatusCode::NO_CONTENT)
}
