//! The requests a server accepted and has not started yet, on disk: a server killed with
//! SIGKILL starts them when it starts again, so a 202 is never lost. One file per
//! conversation in wright's data directory (never where an agent writes), written whole
//! (a temporary file renamed), removed once its run has a log of its own or ended.

use crate::api;
use serde::Deserialize;
use serde::Serialize;
use std::path::PathBuf;

/// What waits: a new conversation, or a message to one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Waiting {
    New(api::NewConversation),
    Message(api::Message),
    /// The answer about the action `call_id` a conversation left waiting.
    Confirm {
        call_id: String,
        body: api::Confirm,
    },
}

fn dir() -> PathBuf {
    wright_session::stored::conversations_root().with_file_name("server-queue")
}

fn path(id: &str) -> PathBuf {
    dir().join(format!("{id}.json"))
}

/// Records that `id` waits for `waiting`.
pub fn put(id: &str, waiting: &Waiting) -> anyhow::Result<()> {
    use anyhow::Context;
    let dir = dir();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let temporary = dir.join(format!(".{id}.json.new"));
    std::fs::write(&temporary, serde_json::to_vec(waiting)?)
        .with_context(|| format!("cannot write {}", temporary.display()))?;
    std::fs::rename(&temporary, path(id))
        .with_context(|| format!("cannot write {}", path(id).display()))?;
    Ok(())
}

/// `id` waits no more.
pub fn take(id: &str) {
    let _ = std::fs::remove_file(path(id));
}

/// What waited when the server stopped, oldest first; unreadable entries are dropped.
pub fn waiting() -> Vec<(String, Waiting)> {
    let Ok(entries) = std::fs::read_dir(dir()) else {
        return Vec::new();
    };
    let mut found: Vec<(String, Waiting)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_string();
            let id = name.strip_suffix(".json")?.to_string();
            if !wright_session::stored::is_plain_id(&id) {
                return None;
            }
            let text = std::fs::read(entry.path()).ok()?;
            match serde_json::from_slice(&text) {
                Ok(waiting) => Some((id, waiting)),
                Err(_) => {
                    take(&id);
                    None
                }
            }
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn what_waits_reads_back() {
        let waiting = Waiting::New(api::NewConversation {
            workspace: Some("/w".into()),
            repository_url: None,
            repository_branch: None,
            task: "t".into(),
            settings: api::Settings {
                model: Some("m".into()),
                ..Default::default()
            },
        });
        let text = serde_json::to_string(&waiting).unwrap();
        let back: Waiting = serde_json::from_str(&text).unwrap();
        assert!(
            matches!(back, Waiting::New(request) if request.settings.model.as_deref() == Some("m"))
        );
    }
}
