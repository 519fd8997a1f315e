//! The database store (`wright_store`) as a session uses it: a running conversation's
//! events committed to the database before they take effect (each is committed there,
//! then written to the log file beside its other records, and only then acted on), and a
//! conversation moved between its log file and the database. The store's own types are
//! re-exported, so a front end names only the session's crate.

use crate::running::Running;
use anyhow::Context;
use anyhow::Result;
use std::path::Path;
pub use wright_store::Database;
pub use wright_store::Owner;
pub use wright_store::Password;
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
    /// is copied first, and a database holding other events for it is an error.
    pub async fn store_events_in(&mut self, store: &Store, id: &str, owner: Owner) -> Result<()> {
        let (store, id_owned) = (store.clone(), id.to_string());
        let appender = tokio::task::spawn_blocking(move || {
            wright_store::Appender::open(&store, &id_owned, owner)
        })
        .await
        .context("the database writer did not start")??;
        self.conversation
            .set_event_sink(Box::new(Sink(appender)))
            .with_context(|| format!("cannot bring conversation {id} up to date in the database"))
    }
}

/// Copies the log file of conversation `id` (in `dir`) into the database, as `owner`'s:
/// what the database lacks is appended; a database holding other events is an error.
/// Returns how many events the conversation has.
pub async fn import(store: &Store, id: &str, dir: &Path, owner: Owner) -> Result<usize> {
    let path = dir.join("events.jsonl");
    let log = wright_protocol::read_log(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let events = log.events;
    let (store, id) = (store.clone(), id.to_string());
    let count = events.len();
    tokio::task::spawn_blocking(move || {
        wright_store::Appender::open(&store, &id, owner)?.catch_up(&events)
    })
    .await
    .context("the database writer stopped")??;
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
