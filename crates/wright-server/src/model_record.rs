//! The server's own record of the model a conversation was asked to run with: the model,
//! server and profile its creating request named (and those a later request named),
//! written by the server beside the conversation's log, in wright's data directory where
//! no agent writes. Unlike the log — hostile input, whose server is never connected to
//! on its word — this record is the server's, so a conversation goes on with the model
//! and server it was created with after a restart, a confirmation or a message that
//! names none, instead of the server's default.
//!
//! What it guarantees: written whole (a temporary file renamed); a record that cannot be
//! read is no record (the run then goes on with what the request names, and is refused
//! if that is not the model the conversation is on).

use crate::api;
use serde::Deserialize;
use serde::Serialize;
use std::path::PathBuf;

const FILE: &str = "server-model.json";

/// What a request named of the model, its server and its profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelRecord {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub profile: Option<String>,
}

impl ModelRecord {
    /// What `settings` name of the model.
    pub fn of(settings: &api::Settings) -> Self {
        Self {
            model: settings.model.clone(),
            base_url: settings.base_url.clone(),
            profile: settings.profile.clone(),
        }
    }

    /// This record with what `later` names instead: a request that names a profile or a
    /// server chooses anew (the recorded model is not carried to another server).
    pub fn then(&self, later: &ModelRecord) -> ModelRecord {
        if later.profile.is_some() || later.base_url.is_some() {
            return later.clone();
        }
        ModelRecord {
            model: later.model.clone().or_else(|| self.model.clone()),
            ..self.clone()
        }
    }

    /// `settings` with the model, server and profile of this record.
    pub fn apply(&self, settings: &api::Settings) -> api::Settings {
        api::Settings {
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            profile: self.profile.clone(),
            ..settings.clone()
        }
    }

    /// The record of conversation `id`, if the server wrote one.
    pub fn read(id: &str) -> Option<Self> {
        let text = std::fs::read(path(id)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Writes it as conversation `id`'s (whose directory exists).
    pub fn write(&self, id: &str) -> anyhow::Result<()> {
        use anyhow::Context;
        let path = path(id);
        let temporary = path.with_extension("json.new");
        std::fs::write(&temporary, serde_json::to_vec(self)?)
            .with_context(|| format!("cannot write {}", temporary.display()))?;
        std::fs::rename(&temporary, &path)
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

fn path(id: &str) -> PathBuf {
    wright_session::stored::conversation_dir(id).join(FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(model: Option<&str>, base_url: Option<&str>) -> ModelRecord {
        ModelRecord {
            model: model.map(str::to_string),
            base_url: base_url.map(str::to_string),
            profile: None,
        }
    }

    #[test]
    fn a_later_request_keeps_the_server_unless_it_names_one() {
        let created = record(Some("m"), Some("http://a/v1"));
        assert_eq!(created.then(&ModelRecord::default()), created);
        assert_eq!(
            created.then(&record(Some("n"), None)),
            record(Some("n"), Some("http://a/v1"))
        );
        assert_eq!(
            created.then(&record(None, Some("http://b/v1"))),
            record(None, Some("http://b/v1"))
        );
    }
}
