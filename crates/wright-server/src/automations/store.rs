//! What the server remembers of each automation, on disk beside the conversations
//! (`automations/NAME/`, never where an agent writes): the deliveries it took (so a
//! redelivery starts nothing) and the steps of its firings (what the API lists).
//!
//! What it guarantees: a delivery is remembered — its id and its body's SHA-256, each
//! enough to be a duplicate — durably (appended and synced) before the server answers
//! 2xx or starts anything, under one lock, so two copies arriving at once start one
//! firing. (With several replicas, this check is where a shared database's unique
//! insert goes.)

use serde::Deserialize;
use serde::Serialize;
use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// Whether a delivery is new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    Fresh,
    Duplicate,
}

/// One step of a firing, as logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// A delivery or a schedule's time started it.
    Fired,
    /// The event was not one it fires for.
    Ignored,
    /// Busy (`when_busy = "skip"`): dropped.
    Skipped,
    /// The failing job's log could not be fetched (`detail`: why): the run starts
    /// without it, its task saying so.
    LogMissing,
    /// Its conversation was created.
    Started,
    /// Its conversation ended (`detail`: how).
    Ended,
    /// Its unattended run refused actions (`detail`: which, and why they were asked about).
    Refused,
    Pushed,
    PullRequestOpened,
    PullRequestUpdated,
    /// A comment was left on the issue (`url`: its address).
    Commented,
    /// An issue was opened saying the tests fail (`url`: its address).
    IssueOpened,
    /// The conversation's last run of `tests` passed: no issue.
    TestsPassed,
    /// Something it had to do failed (`detail`: what and why).
    Failed,
}

/// A line of `steps.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Step {
    /// Seconds since 1970.
    pub at: u64,
    pub firing: String,
    pub kind: StepKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<u64>,
    /// A branch, a pull request's address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Step {
    pub fn new(firing: &str, kind: StepKind) -> Self {
        Self {
            at: now(),
            firing: firing.to_string(),
            kind,
            conversation: None,
            issue: None,
            url: None,
            detail: None,
        }
    }
}

pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// One automation's records.
pub struct Store {
    dir: PathBuf,
    /// Delivery ids and body digests seen, loaded at the first delivery.
    seen: Mutex<Option<HashSet<String>>>,
    steps: Mutex<()>,
}

fn append(path: &PathBuf, line: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(line.as_bytes())?;
    file.sync_data()
}

impl Store {
    pub fn new(name: &str) -> Self {
        Self {
            dir: wright_session::stored::conversations_root()
                .with_file_name("automations")
                .join(name),
            seen: Mutex::default(),
            steps: Mutex::default(),
        }
    }

    /// Remembers a delivery (its id, if the forge sent one, and its body's digest);
    /// `Duplicate` when either was seen before.
    pub fn remember(&self, id: Option<&str>, digest: &str) -> std::io::Result<Delivery> {
        let path = self.dir.join("deliveries.txt");
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let set = match seen.as_mut() {
            Some(set) => set,
            None => {
                let text = match std::fs::read_to_string(&path) {
                    Ok(text) => text,
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
                    Err(err) => return Err(err),
                };
                seen.insert(text.lines().map(str::to_string).collect())
            }
        };
        let keys: Vec<String> = id
            .map(|id| format!("id {id}"))
            .into_iter()
            .chain([format!("sha256 {digest}")])
            .collect();
        if keys.iter().any(|key| set.contains(key)) {
            return Ok(Delivery::Duplicate);
        }
        // Ids are one printable line (the forge's); anything else is not written.
        let lines: String = keys
            .iter()
            .filter(|k| !k.chars().any(char::is_control))
            .map(|k| format!("{k}\n"))
            .collect();
        append(&path, &lines)?;
        set.extend(keys);
        Ok(Delivery::Fresh)
    }

    /// Logs a step. A failure to write is not fatal to the firing (its conversation's
    /// own log still says what it did); it is returned for the caller that can say it.
    pub fn log(&self, step: &Step) -> std::io::Result<()> {
        let _guard = self.steps.lock().unwrap_or_else(|e| e.into_inner());
        serde_json::to_string(step)
            .map_err(std::io::Error::other)
            .and_then(|line| append(&self.dir.join("steps.jsonl"), &format!("{line}\n")))
    }

    /// Every step logged, oldest first (a torn last line is skipped).
    pub fn steps(&self) -> Vec<Step> {
        let _guard = self.steps.lock().unwrap_or_else(|e| e.into_inner());
        std::fs::read_to_string(self.dir.join("steps.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }
}
