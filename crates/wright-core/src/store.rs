//! The append-only event log of one conversation.
//!
//! Each event is written with one `write` call of a whole line, so a crash leaves at most
//! one torn last line (which `wright_protocol::parse_log` reports). Data is synced to disk
//! at every step boundary; the sync runs on a blocking thread while the model thinks, and
//! the next boundary waits for it, so durability costs the loop almost nothing.
//!
//! A log may also have a sink (`EventSink`, a database): each event is committed there
//! before it is written to the file and before `append` returns, so before it takes
//! effect; an event the sink refuses is in neither, and the append fails.

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
    #[error("cannot store the event: {0}")]
    Sink(SinkError),
}

/// Why a sink refused (its own error, as it says it).
pub type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// A second home of a log's events, written first (a database shared by replicas).
pub trait EventSink: Send + Sync {
    /// Makes the sink hold exactly `events`, the log so far: it copies those it lacks,
    /// and refuses when it holds others.
    fn catch_up(&mut self, events: &[Event]) -> Result<(), SinkError>;
    /// Stores `event`, committed when this returns.
    fn append(&mut self, event: &Event) -> Result<(), SinkError>;
}

pub struct EventLog {
    path: PathBuf,
    file: File,
    events: Vec<Event>,
    pending_sync: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    /// The granted secrets: masked out of every event before it is written or kept.
    masker: Option<Arc<wright_tools::Masker>>,
    /// Where each event is committed before the file gets it.
    sink: Option<Box<dyn EventSink>>,
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
            sink: None,
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
                sink: None,
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

    /// Gives the log a sink, first brought up to the events logged so far.
    pub fn set_sink(&mut self, mut sink: Box<dyn EventSink>) -> Result<(), StoreError> {
        sink.catch_up(&self.events).map_err(StoreError::Sink)?;
        self.sink = Some(sink);
        Ok(())
    }

    /// Appends an event and returns it (with its id and time), its secrets masked.
    pub fn append(&mut self, source: Source, body: EventBody) -> Result<&Event, StoreError> {
        let body = match &self.masker {
            Some(masker) => mask_body(masker, body)?,
            None => body,
        };
        let event = Event::new(self.events.len() as u64, source, body);
        let line = event.to_line()?;
        // The shared store first: an event it refused must not be in the file either.
        if let Some(sink) = &mut self.sink {
            sink.append(&event).map_err(StoreError::Sink)?;
        }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::Mutex;

    /// A sink that keeps the ids it got, or refuses every append.
    struct Kept {
        ids: Arc<Mutex<Vec<u64>>>,
        refuse: bool,
    }

    impl EventSink for Kept {
        fn catch_up(&mut self, events: &[Event]) -> Result<(), SinkError> {
            let mut ids = self.ids.lock().unwrap();
            let held = ids.len();
            ids.extend(events.iter().map(|e| e.id).skip(held));
            Ok(())
        }
        fn append(&mut self, event: &Event) -> Result<(), SinkError> {
            if self.refuse {
                return Err("the database is gone".into());
            }
            self.ids.lock().unwrap().push(event.id);
            Ok(())
        }
    }

    fn text(words: &str) -> EventBody {
        EventBody::Message {
            text: words.into(),
            step: None,
            reasoning: None,
            raw: None,
        }
    }

    #[test]
    fn a_sink_gets_the_log_so_far_then_each_event_and_a_refusal_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut log = EventLog::create(&path).unwrap();
        log.append(Source::User, text("before the sink")).unwrap();
        drop(log);
        let (mut log, _) = EventLog::open(&path).unwrap();
        let ids = Arc::new(Mutex::new(Vec::new()));
        log.set_sink(Box::new(Kept {
            ids: ids.clone(),
            refuse: false,
        }))
        .unwrap();
        log.append(Source::User, text("after")).unwrap();
        assert_eq!(*ids.lock().unwrap(), vec![0, 1]);

        let written = std::fs::read_to_string(&path).unwrap();
        log.set_sink(Box::new(Kept {
            ids: Arc::new(Mutex::new(vec![0, 1])),
            refuse: true,
        }))
        .unwrap();
        let refused = log.append(Source::User, text("lost")).unwrap_err();
        assert!(
            refused.to_string().contains("the database is gone"),
            "{refused}"
        );
        // Neither the file nor the events in memory have it.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), written);
        assert_eq!(log.events().len(), 2);
    }
}
