//! `/sockets/events/{id}?after=ID`: a conversation's events as they are logged, each a
//! text frame holding the log's line, in order, each once; reconnecting with the last id
//! seen as `after` sends what was missed and nothing twice. Streamed pieces of the
//! model's replies come between them as `{"kind": "delta", ...}` frames (they are not in
//! the log: a slow client may miss some). The socket stays open for the conversation's
//! next run until the client closes it. With a database, a conversation another replica
//! runs streams too: its events come from the database as that replica commits them.

use crate::api::After;
use crate::error::ApiError;
use crate::hub::Hub;
use crate::routes::path_id;
use crate::routes::AppState;
use axum::extract::rejection::PathRejection;
use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::Message;
use axum::extract::ws::WebSocket;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::Path;
use axum::extract::Query;
use axum::extract::State;
use axum::response::Response;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

/// Opens the event stream of a conversation.
#[utoipa::path(get, path = "/sockets/events/{id}", params(After),
    responses((status = 101, description = "the event stream"), (status = 404, body = crate::error::ErrorBody)))]
pub async fn events(
    State(state): State<Arc<AppState>>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<After>, QueryRejection>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let id = path_id(path)?;
    let Query(After { after }) = query?;
    let hub = state
        .runs
        .hub(&id)
        .ok_or_else(|| ApiError::not_found(&id))?;
    // Run by another replica: what its database holds beyond the log file read so far.
    state.runs.refresh_hub(&id).await;
    // Clients send nothing but a close: what they send is bounded, and read only for it.
    let upgrade = upgrade
        .map_err(|r| ApiError::new(r.status(), "not_a_websocket", r.body_text()))?
        .max_message_size(crate::BODY_LIMIT);
    let runs = state.runs.clone();
    Ok(upgrade.on_upgrade(move |socket| async move {
        stream(socket, hub, after).await;
        // Its hub may go once no socket or run holds it.
        runs.release_hub(&id);
    }))
}

async fn stream(mut socket: WebSocket, hub: Arc<Hub>, mut after: Option<u64>) {
    let mut grown = hub.subscribe();
    let mut deltas = hub.deltas();
    loop {
        // Seen before reading: an event kept after the read wakes the wait below.
        grown.borrow_and_update();
        for event in hub.after(after) {
            let Ok(text) = serde_json::to_string(&event) else {
                return;
            };
            if socket.send(Message::Text(text.into())).await.is_err() {
                return;
            }
            after = Some(event.id);
        }
        tokio::select! {
            changed = grown.changed() => {
                if changed.is_err() {
                    let _ = socket.send(Message::Close(None)).await;
                    return;
                }
            }
            delta = deltas.recv() => match delta {
                Ok(value) => {
                    if socket.send(Message::Text(value.to_string().into())).await.is_err() {
                        return;
                    }
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
            received = socket.recv() => match received {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => {}
            },
        }
    }
}
