//! Several `wright serve` replicas on one database: each run holds its conversation's
//! lease (see `wright_store::Lease`) and renews it while it runs; a replica that cannot
//! renew stops the run — its tool call and sandbox included — a third of a lease length
//! before the lease would expire, and does not let go of it, so another replica takes
//! the run over once it expires. Each replica looks for runs cut off that way (a replica
//! killed, a power cut) and resumes them from their log as `wright resume` does: the
//! call that was cut off is reported to the model, never run again.
//!
//! What the replicas share besides the database is said in `docs/replicas.md`.

use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use wright_session::database::Lease;
use wright_session::database::Renewal;
use wright_session::database::Renewer;
use wright_session::database::Store;

/// The default lease length: a run cut off is taken over within about this long.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// This replica, as the leases name it.
#[derive(Debug, Clone)]
pub struct Replica {
    /// Unique among the replicas: a random id of this process.
    pub name: String,
    /// How long a lease lasts unrenewed.
    pub lease: Duration,
}

impl Replica {
    pub fn new(lease: Duration) -> Self {
        Self {
            name: format!(
                "{}-{}",
                std::process::id(),
                wright_session::stored::new_id()
            ),
            lease,
        }
    }

    /// How often a run's lease is renewed, and how often cut-off runs are looked for.
    pub fn beat(&self) -> Duration {
        (self.lease / 3).max(Duration::from_millis(50))
    }
}

/// Why a run's lease keeper stopped the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseEnd {
    /// Another replica holds it now, or it expired.
    Lost,
    /// The database did not answer in time to renew it before it expires.
    Unrenewable,
}

/// How a run that ended by itself lets its lease go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LetGo {
    /// The conversation is free: a message to any replica goes on with it.
    Release,
    /// This replica stops (SIGTERM) in the middle of the run: another replica is to
    /// take the run over at once and go on with it (see `Store::hand_over_lease`).
    HandOver,
}

/// A run's lease, renewed in the background until the run ends.
pub struct Keeper {
    lease: Lease,
    store: Store,
    /// Why the renewing thread stopped the run, once it ends.
    ended: tokio::sync::oneshot::Receiver<Option<LeaseEnd>>,
    done: CancellationToken,
}

impl Keeper {
    /// Renews `lease` every beat; when it is lost, or cannot be renewed before the last
    /// third of its length, calls `stop_run` once and stops renewing.
    ///
    /// On a thread of its own, with its own runtime and connection: the server's runtime
    /// can be kept busy by its runs (each event's commit is waited for in place), and a
    /// renewal waiting behind them would let the lease expire under a live run.
    pub fn start(
        store: &Store,
        lease: Lease,
        replica: &Replica,
        stop_run: Arc<dyn Fn(LeaseEnd) + Send + Sync>,
    ) -> Self {
        let done = CancellationToken::new();
        let (report, ended) = tokio::sync::oneshot::channel();
        let renewing = {
            let (store, lease, replica, done) =
                (store.clone(), lease.clone(), replica.clone(), done.clone());
            let stop_run = stop_run.clone();
            move || {
                let end = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime.block_on(renew(store, lease, replica, done, stop_run)),
                    Err(_) => {
                        stop_run(LeaseEnd::Unrenewable);
                        Some(LeaseEnd::Unrenewable)
                    }
                };
                let _ = report.send(end);
            }
        };
        let spawned = std::thread::Builder::new()
            .name(format!("wright-lease-{}", lease.conversation))
            .spawn(renewing);
        if spawned.is_err() {
            // Nothing renews it: the run stops before it expires.
            stop_run(LeaseEnd::Unrenewable);
        }
        Self {
            lease,
            store: store.clone(),
            ended,
            done,
        }
    }

    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    /// The run ended: renewing stops; the lease is let go as `how` says, unless the
    /// keeper stopped the run for its lease (then it stays a cut-off run, for another
    /// replica to take over).
    pub async fn finish(mut self, how: LetGo) -> Option<LeaseEnd> {
        self.done.cancel();
        // No answer: the renewing thread is gone, as if it had stopped the run.
        let ended = (&mut self.ended)
            .await
            .unwrap_or(Some(LeaseEnd::Unrenewable));
        if ended.is_none() {
            // When the database is away it is not let go: it expires, and the replica
            // that takes it over finds the run's end in the log and lets it go then.
            let _ = match how {
                LetGo::Release => self.store.release_lease(&self.lease).await,
                LetGo::HandOver => self.store.hand_over_lease(&self.lease).await,
            };
        }
        ended
    }
}

impl Drop for Keeper {
    /// Dropped unfinished (its run never started): no longer renewed, so it expires and
    /// the run is taken over again.
    fn drop(&mut self) {
        self.done.cancel();
    }
}

async fn renew(
    store: Store,
    lease: Lease,
    replica: Replica,
    done: CancellationToken,
    stop_run: Arc<dyn Fn(LeaseEnd) + Send + Sync>,
) -> Option<LeaseEnd> {
    let mut renewed = Instant::now();
    // Past this, the run stops: a third of the lease is left for it to stop in.
    let give_up = replica.lease.saturating_sub(replica.lease / 3);
    let mut renewer: Option<Renewer> = None;
    loop {
        tokio::select! {
            () = done.cancelled() => return None,
            () = tokio::time::sleep(replica.beat()) => {}
        }
        let attempt = tokio::time::timeout(give_up.saturating_sub(renewed.elapsed()), async {
            if renewer.is_none() {
                renewer = Some(store.renewer().await?);
            }
            match &renewer {
                Some(renewer) => renewer.renew(&lease, replica.lease).await,
                None => Ok(Renewal::Lost),
            }
        })
        .await;
        if !matches!(attempt, Ok(Ok(_))) {
            // Connected again at the next beat (the database may have restarted).
            renewer = None;
        }
        let end = match attempt {
            Ok(Ok(Renewal::Renewed)) => {
                renewed = Instant::now();
                continue;
            }
            Ok(Ok(Renewal::Lost)) => LeaseEnd::Lost,
            Ok(Err(_)) if renewed.elapsed() < give_up => continue,
            Ok(Err(_)) | Err(_) => LeaseEnd::Unrenewable,
        };
        if done.is_cancelled() {
            return None;
        }
        stop_run(end);
        return Some(end);
    }
}

/// Looks for cut-off runs every beat (and at once when `wake` is told: a replica handed
/// a run over), for as long as the server runs, and hands each
/// whose lease this replica took to `take_over`, while `has_room` says a run could start
/// at once (a lease taken and left waiting for a slot would only expire again).
pub async fn watch(
    store: Store,
    replica: Replica,
    wake: Arc<tokio::sync::Notify>,
    has_room: impl Fn() -> bool + Send,
    take_over: impl Fn(Lease) + Send,
) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(replica.beat()) => {}
            () = wake.notified() => {}
        }
        if !has_room() {
            continue;
        }
        let Ok(cut_off) = store.cut_off().await else {
            continue;
        };
        for id in cut_off {
            if !has_room() {
                break;
            }
            // Several replicas may see it: the database gives it to one.
            if let Ok(Some(lease)) = store.take_lease(&id, &replica.name, replica.lease).await {
                take_over(lease);
            }
        }
    }
}
