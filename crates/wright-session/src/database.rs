//! The database store (`wright_store`) as a session uses it: a running conversation's
//! events committed to the database before they take effect (each is committed there,
//! then written to the log file beside its other records, and only then acted on), and a
//! conversation moved between its log file and the database. The store's own types are
//! re-exported, so a front end names only the session's crate.

use crate::running::Running;
use anyhow::Context;
use anyhow::Result;
use std::path::Path;
pub use wright_store::Admission;
pub use wright_store::Database;
pub use wright_store::Lease;
pub use wright_store::Notice;
pub use wright_store::Owner;
pub use wright_store::Password;
pub use wright_store::Renewal;
pub use wright_store::Renewer;
pub use wright_store::Rights;
pub use wright_store::Store;
pub use wright_store::StoreError;
pub use wright_store::User;

/// The log's sink: the conversation's writer in the database.
struct Sink(wright_store::Appender);

impl wright_core::EventSink for Sink {
    fn catch_up(
        &mut self,
        events: &[wright_protocol::Event],
    ) -> Result<(), wright_core::SinkError> {
        Ok(self.0.catch_up(events)?)
    }

    fn append(&mut self, event: &wright_protocol::Event) -> Result<(), wright_core::SinkError> {
        Ok(self.0.append(event)?)
    }
}

impl Running {
    /// From now on, every event of this conversation (`id`, `owner`'s when new to the
    /// database) is committed to `store` before it is logged; what the log holds so far
    /// is copied first, and a database holding other events for it is an error. Under
    /// `lease`, each append is refused once that lease is lost (the run then fails).
    pub async fn store_events_in(
        &mut self,
        store: &Store,
        id: &str,
        owner: Owner,
        lease: Option<&Lease>,
    ) -> Result<()> {
        let (store, id_owned, lease) = (store.clone(), id.to_string(), lease.cloned());
        let appender = tokio::task::spawn_blocking(move || match &lease {
            Some(lease) => wright_store::Appender::open_leased(&store, lease, owner),
            None => wright_store::Appender::open(&store, &id_owned, owner),
        })
        .await
        .context("the database writer did not start")??;
        self.conversation
            .set_event_sink(Box::new(Sink(appender)))
            .with_context(|| format!("cannot bring conversation {id} up to date in the database"))
    }
}

/// Why an import was refused: the conversation is running somewhere.
#[derive(Debug, thiserror::Error)]
pub enum ImportRefused {
    #[error("conversation {0} is being run by a replica of the database, or was cut off and waits for one to take it over: import it once it has ended")]
    Leased(String),
    #[error("conversation {id} is running on this machine{}: import it once it has ended", match pid { Some(pid) => format!(" (process {pid})"), None => String::new() })]
    Locked { id: String, pid: Option<u32> },
}

/// How long an import's lease lasts unrenewed; it is renewed every third of it.
const IMPORT_LEASE: std::time::Duration = std::time::Duration::from_secs(30);

/// Copies the log file of conversation `id` (in `dir`) into the database, as `owner`'s:
/// what the database lacks is appended; a database holding other events is an error.
/// Refused while the conversation runs anywhere (`ImportRefused`); while it copies, it
/// holds the conversation's import lease (`Store::take_import_lease`), so no replica
/// starts or takes over the conversation mid-way, and each append checks that lease.
/// Returns how many events the conversation has.
pub async fn import(store: &Store, id: &str, dir: &Path, owner: Owner) -> Result<usize> {
    let path = dir.join("events.jsonl");
    if !path.is_file() {
        anyhow::bail!("conversation {id} has no log file at {}", path.display());
    }
    // New to the database: refused before the database records anything when it runs
    // here (looked at again under the lease).
    if store.owner(id).await?.is_none() {
        refuse_if_locked(id, dir)?;
        store.add_conversation(id, owner).await?;
    }
    let holder = format!("import-{}-{}", std::process::id(), crate::stored::new_id());
    let lease = store
        .take_import_lease(id, &holder, IMPORT_LEASE)
        .await?
        .ok_or_else(|| ImportRefused::Leased(id.to_string()))?;
    let imported = import_leased(store, &lease, dir, owner).await;
    let _ = store.release_lease(&lease).await;
    imported
}

/// Refused while a process on this machine runs the conversation (it holds its lock).
fn refuse_if_locked(id: &str, dir: &Path) -> Result<(), ImportRefused> {
    match wright_core::lock_holder(dir) {
        Some(pid) => Err(ImportRefused::Locked {
            id: id.to_string(),
            pid,
        }),
        None => Ok(()),
    }
}

/// `import`'s copy, under its lease `lease` (renewed meanwhile).
async fn import_leased(store: &Store, lease: &Lease, dir: &Path, owner: Owner) -> Result<usize> {
    let id = &lease.conversation;
    // Looked at under the lease: a run that starts now on this machine with the
    // database waits for it; one without the database holds the file's lock.
    refuse_if_locked(id, dir)?;
    let path = dir.join("events.jsonl");
    let log = wright_protocol::read_log(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let events = log.events;
    let count = events.len();
    let renewing = tokio::spawn({
        let (store, lease) = (store.clone(), lease.clone());
        async move {
            loop {
                tokio::time::sleep(IMPORT_LEASE / 3).await;
                // A lease lost makes the next append fail (`LeaseLost`): said there.
                if !matches!(
                    store.renew_lease(&lease, IMPORT_LEASE).await,
                    Ok(Renewal::Renewed)
                ) {
                    return;
                }
            }
        }
    });
    let (store, lease) = (store.clone(), lease.clone());
    let copied = tokio::task::spawn_blocking(move || {
        wright_store::Appender::open_leased(&store, &lease, owner)?.catch_up(&events)
    })
    .await;
    renewing.abort();
    copied.context("the database writer stopped")??;
    Ok(count)
}

/// Writes conversation `id`'s events from the database into a new log file in `dir`
/// (refused when it has one: a log is never overwritten). Returns how many.
pub async fn export(store: &Store, id: &str, dir: &Path) -> Result<usize> {
    let text = store.log_text(id).await?;
    let path = dir.join("events.jsonl");
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .with_context(|| {
            format!(
                "cannot create {} (a conversation's log is never overwritten)",
                path.display()
            )
        })?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(text.lines().count())
}

/// Brings the log file of conversation `id` (in `dir`) up to the events the database
/// holds, before another replica goes on with it. The database is the truth: a replica
/// cut off between committing an event and writing it to its file left the file short of
/// it, or with a torn last line (the missing lines are appended); a takeover that lost its
/// lease before its first append left in the file the events its resume adds before they
/// are committed (they never took effect: cut off). Where both hold an event they must
/// agree (else `Diverged`); a missing file is written whole.
pub async fn sync_log(store: &Store, id: &str, dir: &Path) -> Result<()> {
    use std::io::Write;
    let held = store.events(id).await?;
    let text = store.log_text(id).await?;
    let path = dir.join("events.jsonl");
    let on_file = match std::fs::read_to_string(&path) {
        Ok(on_file) => on_file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    // Whole lines only: a torn last line is what the crash cut.
    let whole = &on_file[..on_file.rfind('\n').map_or(0, |at| at + 1)];
    let logged = wright_protocol::parse_log(whole)
        .map_err(|(line, message)| anyhow::anyhow!("{} line {line}: {message}", path.display()))?
        .events;
    let common = logged.len().min(held.len());
    if held[..common] != logged[..common] {
        return Err(StoreError::Diverged {
            conversation: id.to_string(),
            at: held
                .iter()
                .zip(&logged)
                .position(|(a, b)| a != b)
                .unwrap_or(common) as u64,
        }
        .into());
    }
    // The file's first `common` lines are kept, the rest is the database's.
    let kept: usize = whole.split_inclusive('\n').take(common).map(str::len).sum();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    file.set_len(kept as u64)
        .with_context(|| format!("cannot cut {} to the database's events", path.display()))?;
    let missing: String = text
        .lines()
        .skip(common)
        .map(|line| format!("{line}\n"))
        .collect();
    file.write_all(missing.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
