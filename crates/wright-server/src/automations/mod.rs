//! Automations: conversations the server starts without a person, from a forge's
//! webhook (`POST /hooks/NAME`) or a schedule, defined in the user's configuration
//! (`wright_config::automations`), and what their firings did (`GET /api/automations`).
//!
//! What it guarantees: a webhook needs no server key, only the forge's signature of its
//! raw body, checked before anything parses it (401 when missing or wrong); an unknown
//! automation is 404, a body over `HOOK_BODY_LIMIT` 413; a delivery seen before (by id
//! or body digest, remembered durably first) is answered 200 and starts nothing. Nothing
//! of the event chooses the automation's repository, profile, limits, sandbox or
//! network: the event only fills the task's fields, as untrusted content; the run is
//! unattended (an action confirmation would ask about is refused, not waited for).

mod clean;
mod event;
mod fire;
pub(crate) mod forge;
mod handback;
mod log;
mod outcome;
mod payloads;
mod schedule;
mod signature;
mod store;
mod task;

use crate::error::ApiError;
use crate::runs::Runs;
use axum::extract::Path;
use axum::extract::Request;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::post;
use axum::Json;
use axum::Router;
use futures_util::StreamExt;
use serde::Serialize;
use sha2::Digest;
use std::sync::Arc;
use tokio::sync::Semaphore;
use wright_config::automations::Automation;
use wright_config::automations::Trigger;

pub use schedule::Clock;
pub use schedule::SystemClock;

/// The largest webhook body taken (GitHub's issue bodies are at most 65,536 characters;
/// a payload with all its objects stays well below).
pub const HOOK_BODY_LIMIT: usize = 1024 * 1024;

/// How much of an oversized body is read and thrown away before the 413 goes out.
/// A client still writing when the server closes gets a broken pipe instead of the
/// answer; reading a bounded excess lets an ordinary sender see why it was refused,
/// while a body past this is cut off.
const DISCARDED_AT_MOST: usize = 16 * HOOK_BODY_LIMIT;

/// Why the server refuses to start with the automations defined.
#[derive(Debug, thiserror::Error)]
pub enum AutomationStartError {
    #[error("automation '{name}': its webhook secret is in the environment variable {var}, which is not set (or empty) for `wright serve`")]
    NoSecret { name: String, var: String },
}

/// One automation the server runs.
pub(crate) struct Defined {
    pub(crate) automation: Automation,
    /// The webhook's secret, read at start.
    secret: Option<String>,
    pub(crate) store: store::Store,
    /// Its firings running at once (`max_running`).
    pub(crate) slots: Arc<Semaphore>,
}

impl Defined {
    /// The shape of the forge's API its results go through: its webhook's forge, or its
    /// schedule's `forge`.
    pub(crate) fn api_shape(&self) -> wright_config::automations::Forge {
        self.automation.forge
    }
}

/// A repository's automations file waiting for the user's approval: nothing of it is
/// defined, so nothing of it fires.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Waiting {
    /// The repository (its top level on the server).
    pub repository: String,
    /// The branch the file was read from.
    pub branch: String,
    pub file: String,
    /// The SHA-256 of its content, which an approval is for.
    pub hash: String,
    /// The command that approves it.
    pub allow: String,
}

/// The automations of this server.
pub struct Automations {
    pub(crate) defined: Vec<Arc<Defined>>,
    pub(crate) waiting: Option<Waiting>,
    pub(crate) runs: Arc<Runs>,
}

impl Automations {
    /// Checks that each webhook's secret is set (a server that could not check a
    /// signature must not start).
    pub fn new(
        automations: Vec<Automation>,
        waiting: Option<Waiting>,
        runs: Arc<Runs>,
    ) -> Result<Arc<Self>, AutomationStartError> {
        let mut defined = Vec::new();
        for automation in automations {
            let secret = match &automation.trigger {
                Trigger::Webhook { secret_env, .. } => Some(
                    std::env::var(secret_env)
                        .ok()
                        .filter(|s| !s.is_empty())
                        .ok_or_else(|| AutomationStartError::NoSecret {
                            name: automation.name.clone(),
                            var: secret_env.clone(),
                        })?,
                ),
                Trigger::Schedule { .. } => None,
            };
            defined.push(Arc::new(Defined {
                store: store::Store::new(&automation.name),
                slots: Arc::new(Semaphore::new(automation.max_running)),
                secret,
                automation,
            }));
        }
        Ok(Arc::new(Self {
            defined,
            waiting,
            runs,
        }))
    }

    fn find(&self, name: &str) -> Option<&Arc<Defined>> {
        self.defined.iter().find(|d| d.automation.name == name)
    }

    /// Starts the schedules' clock (each schedule fires on its times, and once at start
    /// for a time missed while the server was down, unless told to skip it).
    pub fn start_schedules(self: &Arc<Self>, clock: Arc<dyn Clock>) {
        schedule::start(self.clone(), clock);
    }
}

/// The webhook routes: outside the server key's guard (the forge's signature is their
/// key).
pub fn router(automations: Arc<Automations>) -> Router {
    Router::new()
        .route("/hooks/{name}", post(hook))
        .with_state(automations)
}

#[derive(Serialize)]
struct Answer {
    /// `accepted`, `duplicate` or `ignored`.
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    firing: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<String>,
}

async fn hook(
    State(automations): State<Arc<Automations>>,
    Path(name): Path<String>,
    request: Request,
) -> Response {
    let Some(defined) = automations.find(&name).cloned() else {
        return ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no automation {name}"),
        )
        .into_response();
    };
    let Trigger::Webhook { forge, .. } = defined.automation.trigger else {
        return ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("automation {name} runs on a schedule, not a webhook"),
        )
        .into_response();
    };
    let (parts, body) = request.into_parts();
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("a webhook's body may be at most {HOOK_BODY_LIMIT} bytes"),
        )
        .into_response()
    };
    let declared = parts
        .headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > HOOK_BODY_LIMIT) {
        discard(body).await;
        return too_large();
    }
    let mut frames = body.into_data_stream();
    let mut body = Vec::new();
    while let Some(frame) = frames.next().await {
        let Ok(frame) = frame else {
            return too_large();
        };
        if body.len() + frame.len() > HOOK_BODY_LIMIT {
            discard_rest(frames).await;
            return too_large();
        }
        body.extend_from_slice(&frame);
    }
    let secret = defined.secret.as_deref().unwrap_or_default();
    if let Err(refusal) = signature::verify(forge, &parts.headers, &body, secret) {
        return ApiError::unauthorized("bad_signature", refusal.words()).into_response();
    }
    let digest: String = sha2::Sha256::digest(&body)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let delivery = event::delivery_id(forge, &parts.headers);
    match defined.store.remember(delivery.as_deref(), &digest) {
        Ok(store::Delivery::Duplicate) => {
            return (
                StatusCode::OK,
                Json(Answer {
                    outcome: "duplicate",
                    firing: None,
                    why: Some("this delivery was taken before: it starts nothing new".into()),
                }),
            )
                .into_response()
        }
        Ok(store::Delivery::Fresh) => {}
        Err(err) => return ApiError::internal(&err.into()).into_response(),
    }
    let firing = fire::firing_id();
    let decided = event::read(forge, defined.automation.event, &parts.headers, &body)
        .and_then(|e| event::fires(&defined.automation, &e).map(|()| e));
    match decided {
        Err(ignored) => {
            let mut step = store::Step::new(&firing, store::StepKind::Ignored);
            step.detail = Some(ignored.words());
            let _ = defined.store.log(&step);
            (
                StatusCode::OK,
                Json(Answer {
                    outcome: "ignored",
                    firing: None,
                    why: Some(ignored.words()),
                }),
            )
                .into_response()
        }
        Ok(event) => {
            let mut step = store::Step::new(&firing, store::StepKind::Fired);
            step.issue = (event.number != 0).then_some(event.number);
            step.detail = delivery.map(|d| format!("delivery {d}"));
            if !event.branch.is_empty() {
                step.detail = Some(format!(
                    "{}; on branch {}",
                    step.detail.unwrap_or_default(),
                    event.branch
                ));
            }
            let _ = defined.store.log(&step);
            tokio::spawn(fire::fire(
                automations.runs.clone(),
                defined,
                firing.clone(),
                Some(event),
            ));
            (
                StatusCode::ACCEPTED,
                Json(Answer {
                    outcome: "accepted",
                    firing: Some(firing),
                    why: None,
                }),
            )
                .into_response()
        }
    }
}

/// An automation, as `GET /api/automations` lists it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Listed {
    pub name: String,
    /// `webhook` or `schedule`.
    pub on: String,
    /// The webhook's path, for a webhook.
    pub hook: Option<String>,
    /// The forge its webhooks come from and its results go to.
    pub forge: Option<String>,
    /// A webhook's kind of event: `issue`, `check_run`, `comment` or `push`.
    pub event: Option<String>,
    /// The branch it fires for (check runs, pushes), when it names one.
    pub branch: Option<String>,
    pub schedule: Option<String>,
    pub timezone: Option<String>,
    pub repository: String,
    pub label: Option<String>,
    pub push: bool,
    pub pull_request: bool,
    /// Its last firings, newest first (at most 20).
    pub firings: Vec<Firing>,
}

/// One firing and what it did, step by step.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Firing {
    pub firing: String,
    /// When it fired, in seconds since 1970.
    pub at: u64,
    pub issue: Option<u64>,
    pub conversation: Option<String>,
    /// Its last step's kind: where it is, or how it ended.
    pub outcome: store::StepKind,
    /// Its last step's words.
    pub detail: Option<String>,
    pub pull_request: Option<String>,
    pub steps: Vec<store::Step>,
}

/// Every automation and its last firings.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct List {
    pub automations: Vec<Listed>,
    /// A repository's automations file waiting for approval (none of it fires).
    pub waiting: Vec<Waiting>,
}

fn firings_of(steps: Vec<store::Step>) -> Vec<Firing> {
    let mut firings: Vec<Firing> = Vec::new();
    for step in steps {
        let at = firings.iter().position(|f| f.firing == step.firing);
        let firing = match at {
            Some(at) => &mut firings[at],
            None => {
                firings.push(Firing {
                    firing: step.firing.clone(),
                    at: step.at,
                    issue: None,
                    conversation: None,
                    outcome: step.kind,
                    detail: None,
                    pull_request: None,
                    steps: Vec::new(),
                });
                let last = firings.len() - 1;
                &mut firings[last]
            }
        };
        firing.issue = firing.issue.or(step.issue);
        firing.conversation = firing.conversation.clone().or(step.conversation.clone());
        if matches!(
            step.kind,
            store::StepKind::PullRequestOpened | store::StepKind::PullRequestUpdated
        ) {
            firing.pull_request = step.url.clone();
        }
        firing.outcome = step.kind;
        firing.detail = step.detail.clone();
        firing.steps.push(step);
    }
    firings.reverse();
    firings.truncate(20);
    firings
}

/// `GET /api/automations`: the automations and their last firings (behind the key).
#[utoipa::path(get, path = "/api/automations",
    responses((status = 200, body = List)))]
pub async fn list(
    State(state): State<Arc<crate::routes::AppState>>,
) -> Result<Json<List>, ApiError> {
    let automations = state.automations.clone();
    let waiting: Vec<Waiting> = automations.waiting.iter().cloned().collect();
    let listed = tokio::task::spawn_blocking(move || {
        automations
            .defined
            .iter()
            .map(|d| {
                let a = &d.automation;
                let (on, hook, forge, schedule, timezone) = match &a.trigger {
                    Trigger::Webhook { forge, .. } => (
                        "webhook",
                        Some(format!("/hooks/{}", a.name)),
                        serde_json::to_value(forge)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string)),
                        None,
                        None,
                    ),
                    Trigger::Schedule { cron, timezone, .. } => (
                        "schedule",
                        None,
                        serde_json::to_value(a.forge)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string)),
                        Some(cron.clone()),
                        Some(timezone.clone()),
                    ),
                };
                Listed {
                    name: a.name.clone(),
                    on: on.to_string(),
                    hook,
                    forge,
                    event: matches!(a.trigger, Trigger::Webhook { .. })
                        .then(|| serde_json::to_value(a.event).ok())
                        .flatten()
                        .and_then(|v| v.as_str().map(str::to_string)),
                    branch: a.branch.clone(),
                    schedule,
                    timezone,
                    repository: a.repository.clone(),
                    label: a.label.clone(),
                    push: a.result.push,
                    pull_request: a.result.pull_request,
                    firings: firings_of(d.store.steps()),
                }
            })
            .collect()
    })
    .await
    .map_err(|err| ApiError::internal(&anyhow::anyhow!("{err}")))?;
    Ok(Json(List {
        automations: listed,
        waiting,
    }))
}

/// Reads and drops an oversized body, up to `DISCARDED_AT_MOST`.
async fn discard(body: axum::body::Body) {
    discard_rest(body.into_data_stream()).await;
}

async fn discard_rest(mut frames: axum::body::BodyDataStream) {
    let mut read = 0usize;
    while let Some(Ok(frame)) = frames.next().await {
        read += frame.len();
        if read > DISCARDED_AT_MOST {
            break;
        }
    }
}
