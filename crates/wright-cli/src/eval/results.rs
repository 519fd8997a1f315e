//! The results of a sweep: one JSON line per attempt in `results.jsonl`, appended (and
//! flushed) as each attempt ends, so an interrupted sweep resumes by skipping the attempts
//! already recorded. A torn last line (the sweep killed mid-write) is ignored.

use anyhow::Context;
use anyhow::Result;
use serde::Deserialize;
use serde::Serialize;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use wright_protocol::AgentState;

pub const RESULTS_FILE: &str = "results.jsonl";

/// How an attempt ended, as the check (not the agent) judged it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The check passed on the agent's result.
    Passed,
    /// The check failed, or there was no result to check.
    Failed,
    /// Not run: a program the check needs is missing here.
    Skipped,
}

/// One attempt of one task under one setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub task: String,
    /// The task's shape as the suite labelled it, so the file reads alone (the report
    /// takes the shapes from the suite, which older records lack).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// The setting's label (`default`, or `tool-calling=text` …).
    pub setting: String,
    /// From 1.
    pub attempt: u32,
    pub verdict: Verdict,
    /// Why it was skipped, or why the run or the check failed, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The run's last state (absent when skipped or when the run never started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<AgentState>,
    /// The conversation (`wright show ID` reads it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
    #[serde(default)]
    pub steps: u32,
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub cached_tokens: u64,
    /// Prompt tokens the server had to process: prompt − cached.
    #[serde(default)]
    pub processed_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    /// Wall time of the run (the check excluded).
    #[serde(default)]
    pub seconds: f64,
    /// The check's exit code (absent when it did not run or was killed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_exit: Option<i32>,
    /// The check's last lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_output: Option<String>,
}

impl Record {
    pub fn key(&self) -> Key {
        (self.task.clone(), self.setting.clone(), self.attempt)
    }
}

/// An attempt's identity in a sweep: task, setting, attempt number.
pub type Key = (String, String, u32);

/// The results file of a sweep, appended to as attempts end.
pub struct ResultsFile {
    path: PathBuf,
    file: std::fs::File,
}

impl ResultsFile {
    /// Opens (creating) `dir/results.jsonl` and reads what it already holds.
    pub fn open(dir: &Path) -> Result<(Self, Vec<Record>)> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the results directory {}", dir.display()))?;
        let path = dir.join(RESULTS_FILE);
        let recorded = match std::fs::read_to_string(&path) {
            Ok(text) => parse(&text),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let mut opened = Self { path, file };
        opened.end_torn_line()?;
        Ok((opened, recorded))
    }

    /// A line cut by a killed sweep gets its newline, so the next record starts clean.
    fn end_torn_line(&mut self) -> Result<()> {
        let text = std::fs::read(&self.path).unwrap_or_default();
        if text.last().is_some_and(|&b| b != b'\n') {
            self.file.write_all(b"\n")?;
        }
        Ok(())
    }

    pub fn append(&mut self, record: &Record) -> Result<()> {
        let mut line = serde_json::to_string(record)?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}

/// The records of a results file's text; lines that do not parse (a torn one) are left.
pub fn parse(text: &str) -> Vec<Record> {
    text.lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// The attempts already recorded.
pub fn done(records: &[Record]) -> BTreeSet<Key> {
    records.iter().map(Record::key).collect()
}

#[cfg(test)]
pub fn sample(task: &str, setting: &str, attempt: u32, verdict: Verdict) -> Record {
    Record {
        task: task.into(),
        shape: None,
        setting: setting.into(),
        attempt,
        verdict,
        reason: None,
        state: Some(AgentState::Finished),
        conversation: None,
        steps: 3,
        prompt_tokens: 1000,
        cached_tokens: 600,
        processed_tokens: 400,
        completion_tokens: 50,
        seconds: 2.0,
        check_exit: Some(0),
        check_output: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn records_survive_a_torn_line_and_resume_skips_them() {
        let dir = tempfile::tempdir().unwrap();
        let (mut file, recorded) = ResultsFile::open(dir.path()).unwrap();
        assert!(recorded.is_empty());
        file.append(&sample("a", "default", 1, Verdict::Passed))
            .unwrap();
        drop(file);
        // A sweep killed mid-write.
        let path = dir.path().join(RESULTS_FILE);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"task\": \"b\", \"sett");
        std::fs::write(&path, text).unwrap();
        let (mut file, recorded) = ResultsFile::open(dir.path()).unwrap();
        assert_eq!(recorded, vec![sample("a", "default", 1, Verdict::Passed)]);
        file.append(&sample("b", "default", 1, Verdict::Failed))
            .unwrap();
        let (_, recorded) = ResultsFile::open(dir.path()).unwrap();
        let keys: Vec<Key> = done(&recorded).into_iter().collect();
        assert_eq!(
            keys,
            vec![
                ("a".into(), "default".into(), 1),
                ("b".into(), "default".into(), 1)
            ]
        );
    }
}
