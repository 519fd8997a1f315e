//! A server started again: what it had accepted and not started is queued again.

use super::Runs;
use super::Work;
use std::sync::Arc;
use wright_session::stored::conversations_root as conversations_dir;

impl Runs {
    /// Queues again what a server that stopped had accepted and not started.
    pub fn restore(self: &Arc<Self>) {
        for (id, waiting) in crate::queue::waiting() {
            match waiting {
                crate::queue::Waiting::New(request) => {
                    if conversations_dir().join(&id).symlink_metadata().is_ok() {
                        crate::queue::take(&id);
                        continue;
                    }
                    self.launch(&id, Work::New(Box::new(request)), Arc::default());
                }
                crate::queue::Waiting::Message(message) => {
                    self.launch(&id, Work::Message(Box::new(message)), Arc::default());
                }
                crate::queue::Waiting::Confirm { call_id, body } => {
                    self.launch(&id, Work::Confirm { call_id, body }, Arc::default());
                }
            }
        }
    }
}
