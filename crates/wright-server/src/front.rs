//! The server's front for sessions: nobody to ask (every question is answered no), and
//! what a session says is kept for its conversation's page (`notices`). It never prints.

use crate::api;
use std::sync::Mutex;
use wright_session::Front;

/// The server's front for sessions: nobody to ask (every question is answered no), and
/// what it is told is kept for the conversation's page.
#[derive(Default)]
pub struct Recorder(Mutex<Vec<api::Notice>>);

impl Recorder {
    pub fn note(&self, warning: bool, text: String) {
        if let Ok(mut notices) = self.0.lock() {
            notices.push(api::Notice { warning, text });
        }
    }
    pub fn all(&self) -> Vec<api::Notice> {
        self.0.lock().map(|n| n.clone()).unwrap_or_default()
    }
}

impl Front for Recorder {
    fn notice(&self, notice: wright_protocol::Notice) {
        self.note(notice.is_warning(), notice.to_string());
    }
    fn confirm(&self, question: &wright_protocol::Question) -> bool {
        self.note(
            true,
            format!("{question} — answered no: nobody can answer on a server"),
        );
        false
    }
}
