//! Versions in place, not yet settled by the log: while wright tries versions of the
//! failing code (see `candidates`), each file they change is recorded as it was before,
//! beside the log (`versions_in_place.json`), until the versions are kept (a `passed`
//! candidate logged) or taken out. A wright killed meanwhile left them in the workspace
//! with nothing in the log saying so; the next resume puts each such file back as it was,
//! through the `file_editor`, and logs a `not_tried` candidate saying why. The record is
//! wright's own, in the conversation's directory, out of the sandbox's reach; the texts in
//! it are only ever written back into the workspace, never run or read as settings.

use super::*;
use serde::Deserialize;
use serde::Serialize;
use wright_protocol::Candidate;
use wright_protocol::CandidateOutcome;

/// The record's file name, beside `events.jsonl`.
const RECORD: &str = "versions_in_place.json";

/// A file a version changed, as it was before: with the event of the try that changed it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Before {
    pub event: Candidate,
    pub text: String,
}

impl Conversation {
    fn record_path(&self) -> std::path::PathBuf {
        self.log.path().with_file_name(RECORD)
    }

    /// Records `event.path` as it is now, before a version changes it, unless `before`
    /// holds it already; the record is on disk before this returns. `false` when the file
    /// cannot be read or the record cannot be written: then no version may go in.
    pub(super) fn record_before(&self, before: &mut Vec<Before>, event: &Candidate) -> bool {
        if before.iter().any(|known| known.event.path == event.path) {
            return true;
        }
        let Some(text) = self
            .workspace
            .as_ref()
            .and_then(|workspace| wright_tools::editable_text(workspace, &event.path))
        else {
            return false;
        };
        before.push(Before {
            event: event.clone(),
            text,
        });
        let written = serde_json::to_vec(before)
            .ok()
            .is_some_and(|json| write_synced(&self.record_path(), &json).is_ok());
        if !written {
            before.pop();
        }
        written
    }

    /// The versions are settled by the log (kept, or taken out): the record goes.
    pub(super) fn settled(&self) {
        let _ = std::fs::remove_file(self.record_path());
    }

    /// On resume: puts back the files a killed wright left versions in, unless the log
    /// says they were kept, and logs each as a `not_tried` candidate.
    pub(super) async fn put_back_unsettled(
        &mut self,
        observer: &mut dyn Observer,
    ) -> Result<(), StoreError> {
        let Ok(json) = std::fs::read(self.record_path()) else {
            return Ok(());
        };
        let kept = self.log.events().iter().any(|event| {
            matches!(&event.body, EventBody::Candidate(candidate)
                if candidate.outcome == CandidateOutcome::Passed)
        });
        let records: Vec<Before> = serde_json::from_slice(&json).unwrap_or_default();
        if !kept {
            for record in records {
                let why = match self.write_back(&record).await {
                    Ok(false) => continue,
                    Ok(true) => format!(
                        "wright stopped while versions were in place; {} was put back as it was when this run resumed",
                        record.event.path
                    ),
                    Err(err) => format!(
                        "wright stopped while versions were in place, and {} could not be put back when this run resumed: {err}",
                        record.event.path
                    ),
                };
                let candidate = Candidate {
                    outcome: CandidateOutcome::NotTried { why },
                    ..record.event
                };
                self.append(
                    observer,
                    Source::Environment,
                    EventBody::Candidate(candidate),
                )?;
            }
        }
        self.settled();
        Ok(())
    }

    /// Writes `record.text` back over its file (a whole-file `str_replace`, so the
    /// `file_editor` writes it, beneath the workspace); false when it reads so already.
    async fn write_back(&self, record: &Before) -> Result<bool, String> {
        let editor = self
            .tools
            .get("file_editor")
            .cloned()
            .ok_or("there is no file_editor")?;
        let workspace = self.workspace.as_ref().ok_or("there is no workspace")?;
        let path = &record.event.path;
        let now = wright_tools::editable_text(workspace, path)
            .ok_or_else(|| format!("{path} cannot be read"))?;
        if now == record.text {
            return Ok(false);
        }
        let put_back = if now.is_empty() {
            serde_json::json!({"command": "create", "path": path, "file_text": record.text})
        } else {
            serde_json::json!({
                "command": "str_replace",
                "path": path,
                "old_str": now,
                "new_str": record.text,
            })
        };
        editor
            .run(&put_back)
            .await
            .map(|_| true)
            .map_err(|err| err.to_string())
    }
}

/// Writes `bytes` to `path` through a temporary file renamed over it, synced first.
fn write_synced(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let partial = path.with_extension("json.partial");
    let mut file = std::fs::File::create(&partial)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&partial, path)
}
