//! One attempt of one task: the task's files made a fresh git repository, a real
//! `wright run --json` of this same binary on it (in its own clone, as always), the run's
//! events read for steps, tokens, time and why it stopped; then the task's check judges
//! the commit the run handed over (its branch), checked out into a fresh directory and
//! run inside the sandbox, never on the host, since the agent wrote those files (see
//! `check.rs`: the tests the task protects are put back first, so editing them does not
//! pass).

use super::check::CheckOutcome;
use super::check::CheckSpec;
use super::results::Record;
use super::results::Verdict;
use super::suite::Task;
use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;
use wright_protocol::AgentState;
use wright_protocol::ChangesOutcome;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_sandbox::git::Oid;
use wright_sandbox::git::UserRepo;

/// A named set of `wright run` flags the tasks run under (`default`, `map=off` …).
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub label: String,
    pub args: Vec<String>,
}

/// What every attempt of a sweep shares.
pub struct Runner {
    /// This binary.
    pub exe: PathBuf,
    /// Flags given to every `wright run` (model, server, limits, sandbox).
    pub run_args: Vec<String>,
    /// `--api-key`: given to every run as `OPENAI_API_KEY` (the environment's rank,
    /// above any file's), so no other user sees it in the runs' arguments.
    pub api_key: Option<String>,
    /// `--sandbox` and `--profile`, for the checks' sandbox (the runs' own).
    pub sandbox: Option<String>,
    pub profile: Option<String>,
    /// The longest a check may run.
    pub check_timeout: Duration,
    /// Where each run's stderr is kept.
    pub logs: PathBuf,
}

/// How an attempt ended: a record, or an interruption (not recorded, so a resumed sweep
/// runs it again).
pub enum Ended {
    Recorded(Box<Record>),
    Interrupted,
}

/// What the run's events say (`wright run --parallel` reads its runs the same way).
#[derive(Default)]
pub struct RunFacts {
    pub conversation: Option<String>,
    pub steps: u32,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub completion_tokens: u64,
    pub state: Option<AgentState>,
    pub reason: Option<String>,
    pub tip: Option<Oid>,
    pub changes_failed: Option<String>,
}

pub fn facts(events: &[Event]) -> RunFacts {
    let mut facts = RunFacts::default();
    for event in events {
        match &event.body {
            EventBody::Start(start) => facts.conversation = Some(start.conversation.clone()),
            EventBody::Usage(usage) => {
                facts.steps = facts.steps.max(usage.step);
                facts.prompt_tokens += usage.prompt_tokens;
                facts.cached_tokens += usage.cached_tokens.unwrap_or(0);
                facts.completion_tokens += usage.completion_tokens;
            }
            EventBody::Action { step, .. } => facts.steps = facts.steps.max(*step),
            EventBody::State { state, reason, .. } if *state != AgentState::Running => {
                facts.state = Some(*state);
                facts.reason = reason.clone();
            }
            EventBody::Changes(changes) => match changes.outcome {
                ChangesOutcome::Branch | ChangesOutcome::Committed => {
                    facts.tip = changes.commit.as_deref().and_then(Oid::parse);
                }
                ChangesOutcome::Failed => facts.changes_failed = changes.reason.clone(),
                _ => {}
            },
            _ => {}
        }
    }
    facts
}

/// The programs of `needs` not found on PATH.
pub fn missing(needs: &[String]) -> Vec<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    needs
        .iter()
        .filter(|program| {
            !std::env::split_paths(&path).any(|dir| {
                let file = dir.join(program.as_str());
                file.metadata().is_ok_and(|m| {
                    m.is_file()
                        && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
                })
            })
        })
        .cloned()
        .collect()
}

impl Runner {
    pub fn attempt(&self, task: &Task, setting: &Setting, attempt: u32) -> Result<Ended> {
        let mut record = Record {
            task: task.name.clone(),
            shape: task.shape.clone(),
            setting: setting.label.clone(),
            attempt,
            verdict: Verdict::Failed,
            reason: None,
            state: None,
            conversation: None,
            steps: 0,
            prompt_tokens: 0,
            cached_tokens: 0,
            processed_tokens: 0,
            completion_tokens: 0,
            seconds: 0.0,
            check_exit: None,
            check_output: None,
        };
        let missing = missing(&task.needs);
        if !missing.is_empty() {
            record.verdict = Verdict::Skipped;
            record.reason = Some(format!("no {}", missing.join(", no ")));
            return Ok(Ended::Recorded(Box::new(record)));
        }
        let scratch = tempfile::Builder::new()
            .prefix("wright-eval-")
            .tempdir()
            .context("cannot make a temporary directory for the attempt")?;
        let repo_dir = scratch.path().join("repo");
        copy_tree(&task.files, &repo_dir, &task.exclude).with_context(|| {
            format!("cannot copy the task's files from {}", task.files.display())
        })?;
        let repo = UserRepo::init_committed(&repo_dir, &format!("{}: the task's files", task.name))
            .with_context(|| format!("cannot make a repository of {}", task.name))?;
        let base = repo.head()?;

        let started = Instant::now();
        let stderr_path = self.logs.join(format!(
            "{}.{}.{attempt}.stderr",
            file_safe(&task.name),
            file_safe(&setting.label)
        ));
        let stderr = std::fs::File::create(&stderr_path)
            .with_context(|| format!("cannot create {}", stderr_path.display()))?;
        let mut command = std::process::Command::new(&self.exe);
        if let Some(key) = &self.api_key {
            command.env("OPENAI_API_KEY", key);
        }
        let output = command
            .arg("run")
            .arg("--json")
            .arg("-C")
            .arg(&repo_dir)
            .args(&self.run_args)
            .args(&setting.args)
            .arg("--")
            .arg(&task.prompt)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .output()
            .context("cannot start `wright run`")?;
        record.seconds = started.elapsed().as_secs_f64();
        let interrupted = output.status.code().is_none_or(|code| code == 130);
        let events: Vec<Event> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        let facts = facts(&events);
        if let Some(id) = &facts.conversation {
            // The clone and the branch go; the log stays for `wright show`.
            let _ = wright_session::working_copy::drop_work(
                &wright_core::conversations_dir().join(id),
                &wright_session::Unattended,
            );
        }
        if interrupted {
            return Ok(Ended::Interrupted);
        }
        record.conversation = facts.conversation.clone();
        record.state = facts.state;
        record.steps = facts.steps;
        record.prompt_tokens = facts.prompt_tokens;
        record.cached_tokens = facts.cached_tokens;
        record.processed_tokens = facts.prompt_tokens.saturating_sub(facts.cached_tokens);
        record.completion_tokens = facts.completion_tokens;
        if facts.conversation.is_none() {
            // The setup's fault (no server, a bad flag), not the model's: not recorded,
            // so the sweep, run again once it is fixed, does this attempt.
            let said = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            anyhow::bail!(
                "`wright run` did not start: {}",
                said.lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("it said nothing")
                    .trim_start_matches("wright: ")
            );
        }
        if let Some(reason) = &facts.changes_failed {
            record.reason = Some(format!("the changes were not handed over: {reason}"));
            return Ok(Ended::Recorded(Box::new(record)));
        }
        let tip = facts.tip.clone().unwrap_or(base);
        let check = self.check(task, &repo_dir, &tip, scratch.path())?;
        record.check_exit = check.code;
        record.check_output = Some(check.output.clone());
        if check.passed {
            record.verdict = Verdict::Passed;
        } else {
            record.reason = Some(failure_reason(&facts, &check));
        }
        Ok(Ended::Recorded(Box::new(record)))
    }

    /// The task's check on commit `tip` of the repository at `repo`, by `wright
    /// eval-check` in a process of its own (see `check.rs` for why).
    fn check(&self, task: &Task, repo: &Path, tip: &Oid, scratch: &Path) -> Result<CheckOutcome> {
        let spec = CheckSpec {
            repo: repo.to_path_buf(),
            tip: tip.as_str().to_string(),
            dir: scratch.join("check"),
            files: task.files.clone(),
            protect: task.protect.clone(),
            check: task.check.clone(),
            timeout_secs: self.check_timeout.as_secs(),
            sandbox: self.sandbox.clone(),
            profile: self.profile.clone(),
        };
        check_commit(&self.exe, &spec)
            .map_err(|err| anyhow::anyhow!("the check of {} could not run: {err}", task.name))
    }
}

/// Checks out a commit into a fresh directory and runs a check on it in the sandbox, by
/// `wright eval-check` in a process of its own (see `check.rs` for why).
pub fn check_commit(exe: &Path, spec: &CheckSpec) -> Result<CheckOutcome> {
    let mut child = std::process::Command::new(exe)
        .arg("eval-check")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start `wright eval-check`")?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        stdin
            .write_all(serde_json::to_string(spec)?.as_bytes())
            .context("cannot give the check its spec")?;
    }
    let output = child.wait_with_output().context("the check did not end")?;
    let printed = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(printed.trim())
        .with_context(|| String::from_utf8_lossy(&output.stderr).trim().to_string())
}

/// Why a failed attempt failed, in words: how the run stopped, and what the check said.
fn failure_reason(facts: &RunFacts, check: &CheckOutcome) -> String {
    let check_said = match (check.timed_out, check.code) {
        (true, _) => "the check ran past its deadline".to_string(),
        (_, Some(code)) => format!("the check failed (exit {code})"),
        (_, None) => "the check was killed".to_string(),
    };
    match (facts.state, &facts.reason) {
        (Some(AgentState::Finished), _) => format!("finished, but {check_said}"),
        (Some(state), Some(reason)) => format!("{}: {reason}; {check_said}", state.as_str()),
        (Some(state), None) => format!("{}; {check_said}", state.as_str()),
        (None, _) => format!("the run ended without a state; {check_said}"),
    }
}

/// The check's last lines, stdout then stderr, for the record.
pub fn tail(check: &wright_sandbox::Captured) -> String {
    let mut text = String::from_utf8_lossy(&check.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&check.stderr));
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(20);
    let mut kept = lines[start..].join("\n");
    if kept.len() > 4000 {
        let cut = kept.len() - 4000;
        let cut = (cut..kept.len())
            .find(|i| kept.is_char_boundary(*i))
            .unwrap_or(0);
        kept = kept[cut..].to_string();
    }
    kept
}

/// A name as one file name's part.
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_=".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Copies the suite's files (the user's, trusted) from `from` to `to`: directories,
/// regular files and links as links; `.git` and the `exclude`d top-level names left out.
fn copy_tree(from: &Path, to: &Path, exclude: &[String]) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if text == ".git" || exclude.iter().any(|e| *e == text) {
            continue;
        }
        let kind = entry.file_type()?;
        let target = to.join(&name);
        if kind.is_dir() {
            copy_tree(&entry.path(), &target, &[])?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn a_missing_program_is_named() {
        assert_eq!(missing(&["sh".into()]), Vec::<String>::new());
        assert_eq!(
            missing(&["no-such-program-here".into()]),
            vec!["no-such-program-here".to_string()]
        );
    }

    #[test]
    fn the_copy_leaves_git_and_excluded_names_out() {
        let from = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(from.path().join(".git")).unwrap();
        std::fs::create_dir_all(from.path().join(".meta")).unwrap();
        std::fs::create_dir_all(from.path().join("src/deep")).unwrap();
        std::fs::write(from.path().join("src/deep/a.rs"), "a").unwrap();
        std::fs::write(from.path().join(".meta/example.rs"), "answer").unwrap();
        let to = tempfile::tempdir().unwrap();
        copy_tree(from.path(), &to.path().join("x"), &[".meta".into()]).unwrap();
        assert_eq!(
            std::fs::read_to_string(to.path().join("x/src/deep/a.rs")).unwrap(),
            "a"
        );
        assert!(!to.path().join("x/.git").exists());
        assert!(!to.path().join("x/.meta").exists());
    }

    #[test]
    fn the_run_is_read_from_its_events() {
        let tip = "0123456789abcdef0123456789abcdef01234567";
        let lines = [
            json!({"id": 0, "ts": "t", "source": "user", "kind": "start", "version": 3,
                "conversation": "c-1", "workspace": "/w", "model": "m", "base_url": "u",
                "system_prompt": "", "tools": []}),
            json!({"id": 1, "ts": "t", "source": "agent", "kind": "usage", "step": 1,
                "prompt_tokens": 100, "completion_tokens": 5, "cached_tokens": 40}),
            json!({"id": 2, "ts": "t", "source": "agent", "kind": "usage", "step": 2,
                "prompt_tokens": 150, "completion_tokens": 7}),
            json!({"id": 3, "ts": "t", "source": "environment", "kind": "state",
                "state": "stopped", "reason": "the step limit (2) was reached"}),
            json!({"id": 4, "ts": "t", "source": "environment", "kind": "changes",
                "outcome": "branch", "branch": "wright/c-1", "commit": tip}),
        ];
        let events: Vec<Event> = lines
            .iter()
            .map(|line| serde_json::from_value(line.clone()).unwrap())
            .collect();
        let facts = facts(&events);
        assert_eq!(facts.conversation.as_deref(), Some("c-1"));
        assert_eq!(facts.steps, 2);
        assert_eq!(
            (
                facts.prompt_tokens,
                facts.cached_tokens,
                facts.completion_tokens
            ),
            (250, 40, 12)
        );
        assert_eq!(facts.state, Some(AgentState::Stopped));
        assert_eq!(facts.tip.as_ref().map(Oid::as_str), Some(tip));
        let check = CheckOutcome {
            code: Some(1),
            timed_out: false,
            passed: false,
            output: String::new(),
        };
        assert_eq!(
            failure_reason(&facts, &check),
            "stopped: the step limit (2) was reached; the check failed (exit 1)"
        );
    }

    #[test]
    fn names_become_file_names() {
        assert_eq!(file_safe("rust/leap"), "rust_leap");
        assert_eq!(file_safe("tool-calling=text"), "tool-calling=text");
    }
}
