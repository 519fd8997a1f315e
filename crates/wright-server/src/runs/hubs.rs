//! The live events of the conversations the server's sockets watch (one hub each): fed
//! by this replica's own runs as they log, caught up from the log when a run ends, and
//! from the database for a conversation another replica runs.

use super::log_path;
use super::Runs;
use crate::hub::Hub;
use std::sync::Arc;

impl Runs {
    /// Gives `id`'s hub what its log holds beyond what the run showed (a run that ended
    /// in an error may have logged events no observer saw): the log is the truth.
    pub(super) fn catch_up(&self, id: &str) {
        let hub = self
            .hubs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned();
        let Some(hub) = hub else {
            return;
        };
        if let Ok(parsed) = wright_protocol::read_log(&log_path(id)) {
            for event in &parsed.events {
                hub.push(event);
            }
        }
    }

    /// Gives `id`'s hub, when it has one and another replica runs it, the events the
    /// database holds beyond it (this replica's own runs feed their hubs as they log).
    pub(crate) async fn refresh_hub(&self, id: &str) {
        let Some(store) = &self.store else {
            return;
        };
        let hub = self
            .hubs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned();
        let Some(hub) = hub else {
            return;
        };
        if self.is_active(id) {
            return;
        }
        if let Ok(events) = store.events_after(id, hub.last_id()).await {
            for event in &events {
                hub.push(event);
            }
        }
    }

    /// Refreshes every hub from the database (after missing notices).
    pub(crate) async fn refresh_hubs(&self) {
        let ids: Vec<String> = self
            .hubs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect();
        for id in ids {
            self.refresh_hub(&id).await;
        }
    }

    /// Lets go of `id`'s hub when nothing holds it (no socket, no run): a later reader
    /// makes it again from the log.
    pub fn release_hub(&self, id: &str) {
        let mut hubs = self.hubs.lock().unwrap_or_else(|e| e.into_inner());
        if hubs.get(id).is_some_and(|hub| Arc::strong_count(hub) == 1) {
            hubs.remove(id);
        }
    }

    /// The hub of `id`'s events, made from its log when it has none; `None` for a
    /// conversation nobody knows.
    pub fn hub(&self, id: &str) -> Option<Arc<Hub>> {
        let mut hubs = self.hubs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hub) = hubs.get(id) {
            return Some(hub.clone());
        }
        let logged = match wright_protocol::read_log(&log_path(id)) {
            Ok(parsed) => parsed.events,
            Err(_) if self.jobs().contains_key(id) => Vec::new(),
            Err(_) => return None,
        };
        let hub = Arc::new(Hub::new(logged));
        hubs.insert(id.to_string(), hub.clone());
        Some(hub)
    }
}
