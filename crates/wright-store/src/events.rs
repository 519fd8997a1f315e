//! Conversations and their events. An event is inserted only as the next of its
//! conversation (its id equal to the count held), and the primary key
//! `(conversation_id, id)` makes a second writer of the same id fail, so no id is ever
//! held twice and none is skipped; a trigger refuses every change and removal.

use crate::Store;
use crate::StoreError;
use wright_protocol::Event;

/// Who a conversation belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The admin's (the server key's), as every conversation is without users.
    Admin,
    /// The user's with this id.
    User(i64),
}

impl Owner {
    fn column(self) -> Option<i64> {
        match self {
            Owner::Admin => None,
            Owner::User(id) => Some(id),
        }
    }
}

impl Store {
    /// Records a conversation as `owner`'s; a conversation already there keeps its owner
    /// (it is returned), so a resumed one is never given to someone else.
    pub async fn add_conversation(&self, id: &str, owner: Owner) -> Result<Owner, StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO conversations (id, owner) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
                &[&id, &owner.column()],
            )
            .await?;
        self.owner(id)
            .await?
            .ok_or_else(|| StoreError::NoConversation(id.to_string()))
    }

    /// The owner of conversation `id`, or `None` when the database does not know it.
    pub async fn owner(&self, id: &str) -> Result<Option<Owner>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt("SELECT owner FROM conversations WHERE id = $1", &[&id])
            .await?;
        Ok(row.map(|row| match row.get::<_, Option<i64>>(0) {
            Some(user) => Owner::User(user),
            None => Owner::Admin,
        }))
    }

    /// The ids of the conversations `owner` sees, oldest first: a user's own, or all of
    /// them for the admin.
    pub async fn conversations(&self, owner: Owner) -> Result<Vec<String>, StoreError> {
        let client = self.client().await?;
        let rows = match owner {
            Owner::Admin => {
                client
                    .query("SELECT id FROM conversations ORDER BY created_at, id", &[])
                    .await?
            }
            Owner::User(user) => {
                client
                    .query(
                        "SELECT id FROM conversations WHERE owner = $1 ORDER BY created_at, id",
                        &[&user],
                    )
                    .await?
            }
        };
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    /// Appends `event` to conversation `id`, committed when this returns. Refused when
    /// its id is not the next one (`OutOfOrder`), whoever else wrote meanwhile.
    pub async fn append(&self, id: &str, event: &Event) -> Result<(), StoreError> {
        let client = self.client().await?;
        append_with(&client, id, event, None).await
    }

    /// Appends `event` for the run holding `lease`: refused (`LeaseLost`) unless that
    /// lease is still held, at its epoch, unexpired — checked in the same statement.
    pub async fn append_leased(
        &self,
        lease: &crate::Lease,
        event: &Event,
    ) -> Result<(), StoreError> {
        let client = self.client().await?;
        append_with(&client, &lease.conversation, event, Some(lease.epoch)).await
    }

    /// The events of conversation `id` after event `after` (all, for `None`), in order.
    pub async fn events_after(
        &self,
        id: &str,
        after: Option<u64>,
    ) -> Result<Vec<Event>, StoreError> {
        let client = self.client().await?;
        let after = after.map_or(-1, |after| i64::try_from(after).unwrap_or(i64::MAX));
        let rows = client
            .query(
                "SELECT event::text FROM events WHERE conversation_id = $1 AND id > $2 ORDER BY id",
                &[&id, &after],
            )
            .await?;
        let mut text = String::new();
        for row in rows {
            text.push_str(row.get::<_, &str>(0));
            text.push('\n');
        }
        Ok(wright_protocol::parse_log(&text)
            .map_err(|(line, message)| StoreError::Corrupt {
                conversation: id.to_string(),
                line,
                message,
            })?
            .events)
    }

    /// How many events conversation `id` holds.
    pub async fn count(&self, id: &str) -> Result<u64, StoreError> {
        let client = self.client().await?;
        count_with(&client, id).await
    }

    /// The events of conversation `id`, parsed as a log file's are (the same parser), or
    /// `NoConversation`.
    pub async fn events(&self, id: &str) -> Result<Vec<Event>, StoreError> {
        Ok(wright_protocol::parse_log(&self.log_text(id).await?)
            .map_err(|(line, message)| StoreError::Corrupt {
                conversation: id.to_string(),
                line,
                message,
            })?
            .events)
    }

    /// Conversation `id`'s events as its log file's text: one line per event, in order.
    pub async fn log_text(&self, id: &str) -> Result<String, StoreError> {
        if self.owner(id).await?.is_none() {
            return Err(StoreError::NoConversation(id.to_string()));
        }
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT event::text FROM events WHERE conversation_id = $1 ORDER BY id",
                &[&id],
            )
            .await?;
        let mut text = String::new();
        for row in rows {
            text.push_str(row.get::<_, &str>(0));
            text.push('\n');
        }
        Ok(text)
    }
}

pub(crate) async fn count_with(
    client: &tokio_postgres::Client,
    id: &str,
) -> Result<u64, StoreError> {
    let row = client
        .query_one(
            // Ids are dense from 0: the last one plus one is the count, read off the index.
            "SELECT coalesce(max(id) + 1, 0) FROM events WHERE conversation_id = $1",
            &[&id],
        )
        .await?;
    Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
}

pub(crate) async fn append_with(
    client: &tokio_postgres::Client,
    id: &str,
    event: &Event,
    fence: Option<i64>,
) -> Result<(), StoreError> {
    let line = event.to_line()?;
    let number = i64::try_from(event.id).map_err(|_| StoreError::OutOfOrder {
        conversation: id.to_string(),
        got: event.id,
        held: 0,
    })?;
    let text = line.trim_end_matches('\n');
    // Every replica listening hears of it once it is committed (`crate::listen`).
    // Inserted only as the next event: a gap or a repeat inserts nothing (and two
    // writers racing for the same id meet the primary key). A leased run's append also
    // needs its lease row, at its epoch and unexpired, share-locked by this statement: a
    // takeover's epoch bump waits for it, or it sees the bump and inserts nothing.
    let inserted = match fence {
        None => {
            client
                .execute(
                    "INSERT INTO events (conversation_id, id, event)
                     SELECT $1, $2, $3::text::json
                     WHERE $2 = (SELECT coalesce(max(id) + 1, 0) FROM events WHERE conversation_id = $1)
                     RETURNING pg_notify('wright_events', conversation_id || ' ' || id)",
                    &[&id, &number, &text],
                )
                .await
        }
        Some(epoch) => {
            client
                .execute(
                    "WITH lease AS (
                        SELECT 1 FROM leases
                        WHERE conversation_id = $1 AND epoch = $4 AND (running OR importing)
                          AND expires_at > now()
                        FOR SHARE
                     )
                     INSERT INTO events (conversation_id, id, event)
                     SELECT $1, $2, $3::text::json FROM lease
                     WHERE $2 = (SELECT coalesce(max(id) + 1, 0) FROM events WHERE conversation_id = $1)
                     RETURNING pg_notify('wright_events', conversation_id || ' ' || id)",
                    &[&id, &number, &text, &epoch],
                )
                .await
        }
    };
    let out_of_order = |held| StoreError::OutOfOrder {
        conversation: id.to_string(),
        got: event.id,
        held,
    };
    match inserted {
        Ok(1) => Ok(()),
        Ok(_) => {
            if let Some(epoch) = fence {
                if let Some(lost) = lease_lost(client, id, epoch).await? {
                    return Err(lost);
                }
            }
            Err(out_of_order(count_with(client, id).await?))
        }
        Err(err) if err.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => {
            Err(out_of_order(count_with(client, id).await?))
        }
        Err(err) if err.code() == Some(&tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION) => {
            Err(StoreError::NoConversation(id.to_string()))
        }
        Err(err) => Err(err.into()),
    }
}

/// Why an append fenced at `epoch` inserted nothing, when the lease is the reason.
async fn lease_lost(
    client: &tokio_postgres::Client,
    id: &str,
    epoch: i64,
) -> Result<Option<StoreError>, StoreError> {
    let row = client
        .query_opt(
            "SELECT epoch, (running OR importing) AND expires_at > now() FROM leases
             WHERE conversation_id = $1",
            &[&id],
        )
        .await?;
    let (held, live) = match row {
        Some(row) => (Some(row.get::<_, i64>(0)), row.get::<_, bool>(1)),
        None => (None, false),
    };
    Ok(
        (held != Some(epoch) || !live).then(|| StoreError::LeaseLost {
            conversation: id.to_string(),
            epoch,
            held,
        }),
    )
}
