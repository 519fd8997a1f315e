//! Confirming risky actions through the server: a run that reaches an action its
//! confirmation mode asks about waits (`awaiting_confirmation`, with the action in the
//! conversation's `pending`), and `POST /api/conversations/{id}/confirm` answers it —
//! to the run that waits, or, when no run waits any more (the server was killed, the run
//! was interrupted), by starting the conversation again with that answer. Nothing is run
//! without an answer: an action left waiting is asked about again by the next run.

use crate::api;
use crate::error::ApiError;
use crate::routes::path_id;
use crate::routes::AppState;
use crate::runs::log_path;
use crate::runs::Phase;
use crate::runs::Runs;
use crate::runs::Work;
use axum::extract::rejection::JsonRejection;
use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use std::sync::Arc;
use std::sync::Mutex;
use tokio::sync::oneshot;
use wright_protocol::Answer;
use wright_protocol::Decision;
use wright_protocol::Pending;
use wright_session::Confirmer;

/// The answers of one run, from its clients.
#[derive(Default)]
pub struct ServerConfirmer {
    /// Where the answer about a call goes while the run waits for one.
    waiting: Mutex<Option<(String, oneshot::Sender<Answer>)>>,
    /// An answer about a call given before the run asked (its waiting state is logged
    /// before it asks; a conversation started again to answer what it left waiting).
    /// Only the question about that call takes it.
    given: Mutex<Option<(String, Answer)>>,
    /// Nobody watches (an automation's run): every question is answered no at once.
    refuse: bool,
}

/// What the model is told when an unattended run's action is refused.
pub const UNATTENDED_REFUSAL: &str = "refused: this conversation runs unattended (an automation), so an action that needs confirmation is not run; do without it";

impl ServerConfirmer {
    /// With the answer to the first question already given.
    pub fn answered(call_id: &str, answer: Answer) -> Arc<Self> {
        Arc::new(Self {
            waiting: Mutex::default(),
            given: Mutex::new(Some((call_id.to_string(), answer))),
            refuse: false,
        })
    }

    /// Answers every question no (see `UNATTENDED_REFUSAL`).
    pub fn refusing() -> Self {
        Self {
            refuse: true,
            ..Self::default()
        }
    }

    /// Gives `answer` about `call_id` to the run: to its question if it waits for it,
    /// else kept for the question about it the run is about to ask.
    pub fn answer(&self, call_id: &str, answer: Answer) {
        let sender = self
            .waiting
            .lock()
            .ok()
            .and_then(|mut waiting| match waiting.as_ref() {
                Some((id, _)) if id == call_id => waiting.take().map(|(_, sender)| sender),
                _ => None,
            });
        let unsent = match sender {
            Some(sender) => sender.send(answer).err(),
            None => Some(answer),
        };
        if let (Some(answer), Ok(mut given)) = (unsent, self.given.lock()) {
            *given = Some((call_id.to_string(), answer));
        }
    }

    /// The answer given about `call_id`, if one was.
    fn take_given(&self, call_id: &str) -> Option<Answer> {
        let mut given = self.given.lock().ok()?;
        match given.as_ref() {
            Some((id, _)) if id == call_id => given.take().map(|(_, answer)| answer),
            _ => None,
        }
    }
}

#[async_trait::async_trait]
impl Confirmer for ServerConfirmer {
    fn can_answer(&self) -> bool {
        true
    }

    async fn ask(&self, pending: &Pending) -> Answer {
        if self.refuse {
            return Answer {
                decision: Decision::Rejected,
                reason: Some(UNATTENDED_REFUSAL.to_string()),
            };
        }
        if let Some(answer) = self.take_given(&pending.call_id) {
            return answer;
        }
        let (sender, receiver) = oneshot::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            *waiting = Some((pending.call_id.clone(), sender));
        }
        // An answer given between the check above and now.
        if let Some(answer) = self.take_given(&pending.call_id) {
            return answer;
        }
        receiver.await.unwrap_or(Answer {
            decision: Decision::Rejected,
            reason: None,
        })
    }
}

impl From<api::Confirm> for Answer {
    fn from(body: api::Confirm) -> Self {
        Answer::from(&body)
    }
}

impl From<&api::Confirm> for Answer {
    fn from(body: &api::Confirm) -> Self {
        let decision = match (body.approve, body.always.unwrap_or(false)) {
            (true, true) => Decision::Always,
            (true, false) => Decision::Approved,
            (false, _) => Decision::Rejected,
        };
        Answer {
            decision,
            reason: body.reason.clone().filter(|r| !r.trim().is_empty()),
        }
    }
}

/// What a pending action looks like to clients.
pub fn pending_view(pending: &Pending) -> api::PendingAction {
    api::PendingAction {
        call_id: pending.call_id.clone(),
        action: pending.action_event,
        tool: pending.tool.clone(),
        arguments: pending.arguments.clone(),
        risk: pending.risk.as_str().to_string(),
        reason: pending.reason.clone(),
        flag: pending.flag.as_ref().map(ToString::to_string),
    }
}

/// Answers the action a conversation waits for: `approve` runs it (`always`: and every
/// later call of its tool in this conversation), else it is not run and the model is
/// told, with `reason`. 202 and the conversation; 409 when nothing waits.
#[utoipa::path(post, path = "/api/conversations/{id}/confirm", request_body = api::Confirm,
    responses((status = 202, body = api::Conversation), (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn confirm(
    State(state): State<Arc<AppState>>,
    path: Result<Path<String>, PathRejection>,
    caller: Option<axum::Extension<crate::tenancy::Caller>>,
    body: Result<Json<api::Confirm>, JsonRejection>,
) -> Result<(StatusCode, Json<api::Conversation>), ApiError> {
    let id = path_id(path)?;
    let Json(body) = body?;
    // Going on after the answer is a run: within a user's limit.
    crate::rights::may_run(&state, caller.as_deref(), &id).await?;
    state.runs.confirm(&id, body)?;
    let info = state
        .runs
        .info(&id)
        .ok_or_else(|| ApiError::not_found(&id))?;
    Ok((StatusCode::ACCEPTED, Json(info)))
}

impl Runs {
    /// Answers the action `id` waits for: given to its run when one waits, else the
    /// conversation goes on (queued, as a message) with the answer.
    pub fn confirm(self: &Arc<Self>, id: &str, body: api::Confirm) -> Result<(), ApiError> {
        let mut jobs = self.jobs();
        let pending = Self::pending_of(id);
        if let Some(pending) = &pending {
            answers_another(id, &body, pending)?;
        }
        if let Some(job) = jobs.get(id).filter(|job| job.active()) {
            return match (&pending, job.phase) {
                (Some(pending), Phase::Running) => {
                    job.confirmer.answer(&pending.call_id, (&body).into());
                    Ok(())
                }
                _ => Err(ApiError::conflict(format!(
                    "conversation {id} is running and waits for no confirmation"
                ))),
            };
        }
        if !log_path(id).is_file() {
            return Err(ApiError::not_found(id));
        }
        let Some(pending) = pending else {
            return Err(ApiError::conflict(format!(
                "conversation {id} waits for no confirmation"
            )));
        };
        let call_id = pending.call_id;
        crate::queue::put(
            id,
            &crate::queue::Waiting::Confirm {
                call_id: call_id.clone(),
                body: body.clone(),
            },
        )
        .map_err(|err| ApiError::internal(&err))?;
        let front = jobs
            .get(id)
            .map(|job| job.front.clone())
            .unwrap_or_default();
        let work = Work::Confirm { call_id, body };
        let cancel = Self::register(&mut jobs, id, &work, &front);
        drop(jobs);
        self.spawn(id, work, front, cancel);
        Ok(())
    }

    /// The action `id` waits for, as its log says.
    pub(crate) fn pending_of(id: &str) -> Option<Pending> {
        let log = log_path(id);
        let parsed = wright_protocol::read_log(&log).ok()?;
        wright_protocol::pending_in(&parsed.events)
    }
}

/// Refuses an answer that names another action than the one `id` waits for: an answer
/// to what a page showed a moment ago never approves the next one.
fn answers_another(id: &str, body: &api::Confirm, pending: &Pending) -> Result<(), ApiError> {
    let other_call = body
        .call_id
        .as_ref()
        .filter(|asked| **asked != pending.call_id);
    let other_event = body.action.filter(|asked| *asked != pending.action_event);
    let answered = match (other_event, other_call) {
        (Some(event), _) => format!("event #{event}"),
        (None, Some(call)) => call.clone(),
        (None, None) => return Ok(()),
    };
    Err(ApiError::conflict(format!(
        "conversation {id} waits for another action ({}, event #{}) than the one answered ({answered})",
        pending.call_id, pending.action_event
    )))
}
