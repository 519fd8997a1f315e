//! The append-only event log of one conversation.
//!
//! Each event is written with one `write` call of a whole line, so a crash leaves at most
//! one torn last line (which `wright_protocol::parse_log` reports). Data is synced to disk
//! at every step boundary; the sync runs on a blocking thread while the model thinks, and
//! the next boundary waits for it, so durability costs the loop almost nothing.

use std::fs::File;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use wright_protocol::parse_log;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::TornLine;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot write the event log {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("the event log {path} is damaged at line {line}: {message}")]
    Corrupt {
        path: String,
        line: usize,
        message: String,
    },
    #[error("{0}")]
    NotResumable(String),
    #[error("cannot encode an event: {0}")]
    Encode(#[from] serde_json::Error),
}

pub struct EventLog {
    path: PathBuf,
    file: File,
    events: Vec<Event>,
    pending_sync: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    /// The granted secrets: masked out of every event before it is written or kept.
    masker: Option<Arc<wright_tools::Masker>>,
}

impl EventLog {
    /// Creates the log of a new conversation (its directory included).
    pub fn create(path: &Path) -> Result<Self, StoreError> {
        let io = |source| StoreError::Io {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            events: Vec::new(),
            pending_sync: None,
            masker: None,
        })
    }

    /// Opens an existing log to append to it. A torn last line (a write cut by a crash) is
    /// cut off the file and returned, so the log stays readable; corruption elsewhere is
    /// an error, never silently dropped.
    pub fn open(path: &Path) -> Result<(Self, Option<TornLine>), StoreError> {
        let io = |source| StoreError::Io {
            path: path.display().to_string(),
            source,
        };
        let text = std::fs::read_to_string(path).map_err(io)?;
        let parsed = parse_log(&text).map_err(|(line, message)| StoreError::Corrupt {
            path: path.display().to_string(),
            line,
            message,
        })?;
        let file = OpenOptions::new().append(true).open(path).map_err(io)?;
        if parsed.torn.is_some() {
            let good = text.rfind('\n').map_or(0, |at| at + 1);
            file.set_len(good as u64).map_err(io)?;
        }
        Ok((
            Self {
                path: path.to_path_buf(),
                file,
                events: parsed.events,
                pending_sync: None,
                masker: None,
            },
            parsed.torn,
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The secrets masked out of every event appended (see `set_masker`).
    pub(crate) fn masker(&self) -> Option<&Arc<wright_tools::Masker>> {
        self.masker.as_ref()
    }

    /// Masks the secrets of `masker` out of every event appended from now on.
    pub fn set_masker(&mut self, masker: Option<Arc<wright_tools::Masker>>) {
        self.masker = masker;
    }

    /// Appends an event and returns it (with its id and time), its secrets masked.
    pub fn append(&mut self, source: Source, body: EventBody) -> Result<&Event, StoreError> {
        let body = match &self.masker {
            Some(masker) => mask_body(masker, body)?,
            None => body,
        };
        let event = Event::new(self.events.len() as u64, source, body);
        let line = event.to_line()?;
        self.file
            .write_all(line.as_bytes())
            .map_err(|source| StoreError::Io {
                path: self.path.display().to_string(),
                source,
            })?;
        self.events.push(event);
        let last = self.events.len() - 1;
        Ok(&self.events[last])
    }

    /// Marks a step boundary: waits for the previous sync, starts a new one.
    pub async fn sync_step(&mut self) -> Result<(), StoreError> {
        self.wait_sync().await?;
        let file = self.file.try_clone().map_err(|source| StoreError::Io {
            path: self.path.display().to_string(),
            source,
        })?;
        self.pending_sync = Some(tokio::task::spawn_blocking(move || file.sync_data()));
        Ok(())
    }

    /// Waits until everything appended so far is on disk.
    pub async fn wait_sync(&mut self) -> Result<(), StoreError> {
        if let Some(handle) = self.pending_sync.take() {
            let result = handle
                .await
                .unwrap_or_else(|join| Err(std::io::Error::other(join.to_string())));
            result.map_err(|source| StoreError::Io {
                path: self.path.display().to_string(),
                source,
            })?;
        }
        Ok(())
    }
}

/// `body` with every string in it masked, whatever the kind of event: a message, a
/// call's arguments, an observation, an error, a summary.
fn mask_body(masker: &wright_tools::Masker, body: EventBody) -> Result<EventBody, StoreError> {
    masked(masker, &body)
}

/// `value` with every string in it masked.
pub(crate) fn masked<T>(masker: &wright_tools::Masker, value: &T) -> Result<T, StoreError>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let mut json = serde_json::to_value(value)?;
    mask_value(masker, &mut json);
    Ok(serde_json::from_value(json)?)
}

fn mask_value(masker: &wright_tools::Masker, value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) => *text = masker.mask(text),
        serde_json::Value::Array(items) => {
            for item in items {
                mask_value(masker, item);
            }
        }
        serde_json::Value::Object(map) => {
            for item in map.values_mut() {
                mask_value(masker, item);
            }
        }
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {}
    }
}
