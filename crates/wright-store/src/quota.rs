//! A user's run quota: at most `max_running` of their conversations hold a run's lease at
//! once, across every replica on the database. A run is admitted by taking its lease in
//! a transaction that first locks the user's row (`FOR UPDATE`) and counts their leases
//! still running: two replicas admitting runs of one user at the same time take that
//! lock in turn, and the second counts the first's lease, so never both get the last
//! place. A run cut off from a dead replica still counts (it is to go on elsewhere), and
//! taking it over is not an admission (`take_lease` alone): the quota limits new runs,
//! it never strands one.

use crate::leases::millis;
use crate::leases::TAKE_LEASE;
use crate::Lease;
use crate::Store;
use crate::StoreError;
use std::time::Duration;

/// What asking to run a user's conversation found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Admitted: the run's lease, held.
    Taken(Lease),
    /// Another run or an import holds the conversation.
    Held,
    /// The user runs as many as their limit allows.
    Full { limit: i32, running: i64 },
}

impl Store {
    /// Takes the lease of conversation `id` (known to the database) for `holder` and
    /// `length`, within the quota of `user` (its owner).
    pub async fn admit(
        &self,
        id: &str,
        user: i64,
        holder: &str,
        length: Duration,
    ) -> Result<Admission, StoreError> {
        let mut client = self.client().await?;
        let transaction = client.transaction().await?;
        let limit: Option<i32> = transaction
            .query_opt(
                "SELECT max_running FROM users WHERE id = $1 FOR UPDATE",
                &[&user],
            )
            .await?
            .and_then(|row| row.get(0));
        if let Some(limit) = limit {
            let running = running_of(&transaction, user, id).await?;
            if running >= i64::from(limit) {
                return Ok(Admission::Full { limit, running });
            }
        }
        let row = transaction
            .query_opt(TAKE_LEASE, &[&id, &holder, &millis(length)])
            .await
            .map_err(|err| match err.code() {
                Some(&tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION) => {
                    StoreError::NoConversation(id.to_string())
                }
                _ => err.into(),
            })?;
        transaction.commit().await?;
        Ok(match row {
            Some(row) => Admission::Taken(Lease {
                conversation: id.to_string(),
                epoch: row.get(0),
            }),
            None => Admission::Held,
        })
    }

    /// Whether user `user` may start one more run now (besides `id`'s, when it runs):
    /// their limit and how many run when not, `None` when they may. A check for a clear answer at request time; the admission
    /// itself (`admit`) is what holds across replicas.
    pub async fn has_room(&self, user: i64, id: &str) -> Result<Option<(i32, i64)>, StoreError> {
        let mut client = self.client().await?;
        let transaction = client.transaction().await?;
        let limit: Option<i32> = transaction
            .query_opt("SELECT max_running FROM users WHERE id = $1", &[&user])
            .await?
            .and_then(|row| row.get(0));
        let Some(limit) = limit else {
            return Ok(None);
        };
        let running = running_of(&transaction, user, id).await?;
        Ok((running >= i64::from(limit)).then_some((limit, running)))
    }
}

/// How many conversations of `user` other than `id` hold a running lease (or were cut
/// off from one).
async fn running_of(
    client: &tokio_postgres::Transaction<'_>,
    user: i64,
    id: &str,
) -> Result<i64, StoreError> {
    let row = client
        .query_one(
            "SELECT count(*) FROM leases JOIN conversations ON conversations.id = leases.conversation_id
             WHERE conversations.owner = $1 AND leases.running AND leases.conversation_id <> $2",
            &[&user, &id],
        )
        .await?;
    Ok(row.get(0))
}
