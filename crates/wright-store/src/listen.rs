//! Hearing of events other replicas append: each append notifies the channel
//! `wright_events` with `CONVERSATION ID` in the same statement, and PostgreSQL delivers a
//! notification only once its transaction commits, so what is heard is in the table. A
//! notification carries only ids — the events are read from their rows, so a payload's
//! 8000-byte limit never matters and what a listener shows is what the database holds.
//!
//! The channel `wright_leases` says a replica handed a run over as it stopped (see
//! `Store::hand_over_lease`): the listeners look for runs to take over at once.
//!
//! A listener has a connection of its own. When it drops (a restart of the database),
//! it connects again every second, and says `Resumed`: what was appended meanwhile was
//! not heard, and listeners read their conversations again.

use crate::Store;
use crate::StoreError;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;

/// What a listener hears.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Event `id` of `conversation` was committed.
    Appended { conversation: String, id: u64 },
    /// A replica handed the run of `conversation` over as it stopped: it is free to be
    /// taken over now.
    HandedOver { conversation: String },
    /// Listening again after the connection dropped: notices may have been missed.
    Resumed,
}

const CHANNEL: &str = "wright_events";
const LEASES: &str = "wright_leases";

impl Store {
    /// Listens for appended events, from now until the receiver is dropped.
    pub async fn listen(&self) -> Result<mpsc::UnboundedReceiver<Notice>, StoreError> {
        let (notices, heard) = mpsc::unbounded_channel();
        let config = self.database().config().clone();
        let first = subscribe(&config, notices.clone()).await?;
        tokio::spawn(async move {
            let (mut client, mut polling) = first;
            loop {
                let _ = polling.await;
                drop(client);
                loop {
                    if notices.is_closed() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    if let Ok(again) = subscribe(&config, notices.clone()).await {
                        (client, polling) = again;
                        let _ = notices.send(Notice::Resumed);
                        break;
                    }
                }
            }
        });
        Ok(heard)
    }
}

/// A connection listening on the channel, and the task reading its notifications (it
/// ends when the connection drops or nobody listens).
async fn subscribe(
    config: &tokio_postgres::Config,
    notices: mpsc::UnboundedSender<Notice>,
) -> Result<(tokio_postgres::Client, tokio::task::JoinHandle<()>), StoreError> {
    let (client, mut connection) = config.connect(tokio_postgres::NoTls).await?;
    let polling = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(heard))) => {
                    if let Some(notice) = parse(heard.channel(), heard.payload()) {
                        if notices.send(notice).is_err() {
                            return;
                        }
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return,
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN {CHANNEL}; LISTEN {LEASES}"))
        .await?;
    Ok((client, polling))
}

fn parse(channel: &str, payload: &str) -> Option<Notice> {
    if channel == LEASES {
        return Some(Notice::HandedOver {
            conversation: payload.to_string(),
        });
    }
    let (conversation, id) = payload.rsplit_once(' ')?;
    Some(Notice::Appended {
        conversation: conversation.to_string(),
        id: id.parse().ok()?,
    })
}
