//! Leases: a conversation is run by one replica at a time. Taking a lease is one
//! statement (free, released or expired, else refused) and bumps its epoch; renewing
//! succeeds only for the epoch held and before expiry; every append of a leased run names
//! its epoch and is checked against the lease row in the same statement, under a share
//! lock on that row, so an append either commits before a takeover's epoch bump or is
//! refused after it (`LeaseLost`) — a replica that lost its lease cannot write.
//!
//! An import (`wright database import`) holds a lease of its own kind while it copies a
//! log file in: no run takes the conversation meanwhile, and it is refused while a run
//! holds the conversation or was cut off from it (a replica is to take that over).
//!
//! Time is the database's (`now()`), never a replica's clock: replicas whose clocks
//! disagree still agree on who holds a lease.

use crate::Store;
use crate::StoreError;
use std::time::Duration;

/// A lease held on a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub conversation: String,
    /// Bumped by each taking: the fence every append of this run names.
    pub epoch: i64,
}

/// What renewing found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renewal {
    /// Held for another lease length from now.
    Renewed,
    /// Expired or taken by another replica: the run must stop writing.
    Lost,
}

/// Takes a run's lease (`$1` the conversation, `$2` the holder, `$3` the length in
/// milliseconds): free, released or expired, else no row.
pub(crate) const TAKE_LEASE: &str =
    "INSERT INTO leases AS l (conversation_id, holder, epoch, expires_at, running)
         VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond', true)
         ON CONFLICT (conversation_id) DO UPDATE
           SET holder = EXCLUDED.holder, epoch = l.epoch + 1,
               expires_at = EXCLUDED.expires_at, running = true, importing = false
           WHERE (NOT l.running AND NOT l.importing) OR l.expires_at <= now()
         RETURNING epoch";

pub(crate) fn millis(length: Duration) -> f64 {
    length.as_secs_f64() * 1000.0
}

impl Store {
    /// Takes the lease of conversation `id` (which the database must know) for `holder`
    /// and `length`, with a new epoch; `None` while another run or an import holds it
    /// unexpired.
    pub async fn take_lease(
        &self,
        id: &str,
        holder: &str,
        length: Duration,
    ) -> Result<Option<Lease>, StoreError> {
        self.claim(TAKE_LEASE, id, holder, length).await
    }

    /// Runs one of the lease-taking statements (`$1` the conversation, `$2` the holder,
    /// `$3` the length in milliseconds, `RETURNING epoch`): the lease when taken, `None`
    /// when someone else holds it.
    async fn claim(
        &self,
        statement: &str,
        id: &str,
        holder: &str,
        length: Duration,
    ) -> Result<Option<Lease>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(statement, &[&id, &holder, &millis(length)])
            .await
            .map_err(|err| match err.code() {
                Some(&tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION) => {
                    StoreError::NoConversation(id.to_string())
                }
                _ => err.into(),
            })?;
        Ok(row.map(|row| Lease {
            conversation: id.to_string(),
            epoch: row.get(0),
        }))
    }

    /// Takes the lease of conversation `id` (which the database must know) for an import
    /// by `holder`, for `length`, with a new epoch: only while no run holds it nor was cut
    /// off from it (expired or not) and no other import holds it unexpired; `None` else.
    /// Appends fenced by it (`append_leased`) are accepted while it is held.
    pub async fn take_import_lease(
        &self,
        id: &str,
        holder: &str,
        length: Duration,
    ) -> Result<Option<Lease>, StoreError> {
        self.claim(
            "INSERT INTO leases AS l (conversation_id, holder, epoch, expires_at, running, importing)
                 VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond', false, true)
                 ON CONFLICT (conversation_id) DO UPDATE
                   SET holder = EXCLUDED.holder, epoch = l.epoch + 1,
                       expires_at = EXCLUDED.expires_at, running = false, importing = true
                   WHERE NOT l.running AND (NOT l.importing OR l.expires_at <= now())
                 RETURNING epoch",
            id,
            holder,
            length,
        )
        .await
    }

    /// Extends `lease` by `length` from now, if it is still held and unexpired.
    pub async fn renew_lease(
        &self,
        lease: &Lease,
        length: Duration,
    ) -> Result<Renewal, StoreError> {
        let client = self.client().await?;
        renew_with(&client, lease, length).await
    }

    /// A connection of its own for renewing leases, driven by the runtime that opens it:
    /// a renewal must not wait for a pool, or a runtime, that the runs keep busy (a
    /// lease not renewed in time is lost though its replica is alive).
    pub async fn renewer(&self) -> Result<Renewer, StoreError> {
        let (client, connection) = self
            .database()
            .config()
            .connect(tokio_postgres::NoTls)
            .await?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(Renewer { client })
    }

    /// Lets go of `lease` (the run ended): the conversation is free, and not cut off.
    /// Nothing happens when it was lost or expired meanwhile: an expired run's lease is a
    /// cut-off run, whoever holds it, and stays one for a replica to take over — its
    /// holder may have stopped because it expired (an append refused), and letting it go
    /// then would leave the conversation stopped with nobody to go on with it.
    pub async fn release_lease(&self, lease: &Lease) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE leases SET running = false, importing = false, expires_at = now()
                 WHERE conversation_id = $1 AND epoch = $2 AND expires_at > now()",
                &[&lease.conversation, &lease.epoch],
            )
            .await?;
        Ok(())
    }

    /// Hands `lease` over (its replica stops, the run is to go on elsewhere): left
    /// marked running but expired now, so the next replica to look takes the run over at
    /// once rather than after the lease's length; the channel `wright_leases` is told, in
    /// the same statement (so only once it is committed), so the replicas look at once.
    /// Nothing happens when it was lost meanwhile.
    pub async fn hand_over_lease(&self, lease: &Lease) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "WITH handed AS (
                   UPDATE leases SET expires_at = now()
                   WHERE conversation_id = $1 AND epoch = $2 AND running
                   RETURNING conversation_id)
                 SELECT pg_notify('wright_leases', conversation_id) FROM handed",
                &[&lease.conversation, &lease.epoch],
            )
            .await?;
        Ok(())
    }

    /// The conversations whose run was cut off: leased, not let go, expired — oldest
    /// expiry first.
    pub async fn cut_off(&self) -> Result<Vec<String>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT conversation_id FROM leases
                 WHERE running AND expires_at <= now() ORDER BY expires_at, conversation_id",
                &[],
            )
            .await?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }
}

/// A connection renewing leases (see `Store::renewer`).
pub struct Renewer {
    client: tokio_postgres::Client,
}

impl Renewer {
    /// Extends `lease` by `length` from now, if it is still held and unexpired.
    pub async fn renew(&self, lease: &Lease, length: Duration) -> Result<Renewal, StoreError> {
        renew_with(&self.client, lease, length).await
    }
}

async fn renew_with(
    client: &tokio_postgres::Client,
    lease: &Lease,
    length: Duration,
) -> Result<Renewal, StoreError> {
    let renewed = client
        .execute(
            "UPDATE leases SET expires_at = now() + $3 * interval '1 millisecond'
             WHERE conversation_id = $1 AND epoch = $2 AND (running OR importing)
               AND expires_at > now()",
            &[&lease.conversation, &lease.epoch, &millis(length)],
        )
        .await?;
    Ok(match renewed {
        1 => Renewal::Renewed,
        _ => Renewal::Lost,
    })
}
