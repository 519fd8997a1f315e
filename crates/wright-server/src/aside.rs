//! `POST /api/conversations/{id}/ask {question}`: a side question about a conversation,
//! answered from its current context in a request of its own and logged as a
//! `side_question` event, never entering its history. A
//! running conversation answers it between two steps (the route waits for that); one
//! that is not running is opened, asked and closed again, without a run.

use crate::error::ApiError;
use crate::hub::HubObserver;
use crate::routes::path_id;
use crate::routes::AppState;
use crate::runs::Runs;
use axum::extract::rejection::JsonRejection;
use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde::Serialize;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use utoipa::ToSchema;
use wright_session::AsideReply;

/// A side question.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Ask {
    pub question: String,
}

/// The model's answer to a side question.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
pub struct Answer {
    pub answer: String,
}

/// Answers a side question from the conversation's current context, apart from its
/// history: 200 with the answer; 409 while the conversation is queued or starting; 502
/// when the model could not answer.
#[utoipa::path(post, path = "/api/conversations/{id}/ask", request_body = Ask,
    responses((status = 200, body = Answer), (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody), (status = 502, body = crate::error::ErrorBody)))]
pub async fn ask(
    State(state): State<Arc<AppState>>,
    path: Result<Path<String>, PathRejection>,
    body: Result<Json<Ask>, JsonRejection>,
) -> Result<Json<Answer>, ApiError> {
    let id = path_id(path)?;
    let Json(body) = body?;
    if body.question.trim().is_empty() {
        return Err(ApiError::bad_request("the question is empty"));
    }
    let answer = state.runs.ask(&id, body.question.trim()).await?;
    Ok(Json(Answer { answer }))
}

fn unanswered(why: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::BAD_GATEWAY,
        "unanswered",
        format!("the model could not answer: {why}"),
    )
}

impl Runs {
    /// The answer to `question` about conversation `id`.
    pub(crate) async fn ask(&self, id: &str, question: &str) -> Result<String, ApiError> {
        let running = self.jobs().get(id).and_then(|job| match job.active() {
            true => Some(job.asides.clone()),
            false => None,
        });
        match running {
            Some(Some(inbox)) => {
                let answer = inbox
                    .ask(question)
                    .ok_or_else(|| ApiError::conflict("the run ended; ask again"))?;
                match answer.await {
                    Ok(Ok(answer)) => Ok(answer),
                    Ok(Err(why)) => Err(unanswered(why)),
                    Err(_) => Err(ApiError::conflict(
                        "the run ended before it took the question; ask again",
                    )),
                }
            }
            Some(None) => Err(ApiError::conflict(format!(
                "conversation {id} is starting; ask once it runs"
            ))),
            None => self.ask_idle(id, question).await,
        }
    }

    /// Opens a conversation that is not running, asks, and closes it again.
    async fn ask_idle(&self, id: &str, question: &str) -> Result<String, ApiError> {
        if !crate::runs::log_path(id).is_file() {
            return Err(ApiError::not_found(id));
        }
        let dir = wright_session::stored::conversation_dir(id);
        let front = crate::front::Recorder::default();
        let mut reopened = self
            .starter
            .reopen(
                &dir,
                &crate::api::Settings::default(),
                wright_session::Takes::OwnOnly,
                self.secrets_of(id)
                    .await
                    .map_err(|err| ApiError::internal(&err))?,
                &front,
            )
            .await
            .map_err(|err| match err {
                // Its settings or model server: the client's to fix, as the code says.
                wright_session::SessionError::Other(err) => ApiError::conflict(format!("{err:#}")),
                typed => ApiError::from(&typed),
            })?;
        let hub = self.hub(id).ok_or_else(|| ApiError::not_found(id))?;
        let mut observer = HubObserver(hub);
        let asked = reopened
            .conversation
            .ask_aside(question, &CancellationToken::new(), &mut observer)
            .await
            .map_err(|err| ApiError::internal(&err))?;
        match asked {
            AsideReply::Answered(answer) => Ok(answer),
            AsideReply::Unanswered(why) => Err(unanswered(why)),
            AsideReply::Stopped => Err(unanswered("interrupted")),
        }
    }
}
