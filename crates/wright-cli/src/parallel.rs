//! `wright run --parallel N TASK`: N conversations on the same task, each a `wright run
//! --json` of this binary in its own clone and branch (its own process, as `wright eval`'s
//! attempts: ending a sandbox ends every child of the process that made it), at most `-j`
//! at a time, all in one group. When each ends, `--check` judges its branch — checked out
//! fresh and run in the sandbox by `wright eval-check`, never on the host — or, without
//! one, the reviewer's last verdict (`--review`), else the agent's own word. A table then
//! compares them, the best is offered for `wright apply` and the others stay as branches.
//! Before the runs it says what the model server does with the prefix the runs share, and
//! after them how many prompt tokens its cache actually served.

use crate::drive::CommonArgs;
use crate::drive::WorkspaceArgs;
use crate::eval::check::CheckOutcome;
use crate::eval::check::CheckSpec;
use crate::eval::runner::check_commit;
use crate::eval::runner::facts;
use crate::eval::runner::RunFacts;
use anyhow::bail;
use anyhow::Context;
use anyhow::Result;
use clap::Args;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Instant;
use wright_protocol::AgentState;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Verdict;

/// `wright run`'s options for several agents at once.
#[derive(Args, Clone, Default)]
pub struct ParallelArgs {
    /// Run N conversations on the task at once, each in its own clone and branch, and
    /// compare them.
    #[arg(long, value_name = "N")]
    pub parallel: Option<u32>,
    /// With --parallel: the profiles the runs take in turn (a,b,…).
    #[arg(long, value_name = "A,B", value_delimiter = ',', requires = "parallel")]
    pub profiles: Vec<String>,
    /// With --parallel: the command that judges each run (exit 0: passed), run on its
    /// branch, checked out fresh, in the sandbox.
    #[arg(long, value_name = "CMD", requires = "parallel")]
    pub check: Option<String>,
    /// With --parallel: at most this many runs at once (default: all of them).
    #[arg(short = 'j', long = "jobs", value_name = "J", requires = "parallel")]
    pub jobs: Option<u32>,
    /// The group a run belongs to (given by --parallel to the runs it starts).
    #[arg(long, hide = true)]
    pub group: Option<String>,
}

/// What the user asked of the runs, besides the parallel options.
pub struct Asked<'a> {
    pub task: &'a str,
    pub place: &'a WorkspaceArgs,
    pub common: &'a CommonArgs,
    /// Flags of `wright run` itself given to every run (`--review P`, `--first-look X`).
    pub run_words: Vec<String>,
}

/// One run, as it ended.
struct Ran {
    n: usize,
    profile: Option<String>,
    facts: RunFacts,
    seconds: f64,
    /// Lines added and removed, and files, of the change it handed over.
    diff: (usize, usize, usize),
    verdict: Option<Verdict>,
    /// Whether a check was asked for (`--check`), and what it did.
    asked_check: bool,
    check: Option<CheckOutcome>,
    /// Why it has no result to judge, when it has none.
    trouble: Option<String>,
}

impl Ran {
    /// Passed: the check passed; without a check, the reviewer approved; without either,
    /// the agent finished (its own word).
    fn passed(&self) -> bool {
        match (&self.check, self.verdict) {
            (Some(check), _) => check.passed,
            (None, _) if self.asked_check => false,
            (None, Some(verdict)) => verdict == Verdict::Approve,
            (None, None) => self.facts.state == Some(AgentState::Finished),
        }
    }

    fn judged(&self) -> &'static str {
        match (&self.check, self.verdict, self.passed()) {
            (None, _, _) if self.asked_check => "unchecked",
            (Some(_), _, true) => "passed",
            (Some(_), _, false) => "failed",
            (None, Some(_), true) => "approved",
            (None, Some(_), false) => "rejected",
            (None, None, true) => "finished",
            (None, None, false) => "not done",
        }
    }
}

pub async fn run(n: u32, options: &ParallelArgs, asked: Asked<'_>) -> Result<u8> {
    if n < 2 {
        bail!("--parallel needs at least 2 runs");
    }
    if asked.common.json {
        bail!("--parallel prints a table, not an event log: drop --json (each run's log is shown by `wright show ID`)");
    }
    if asked.place.in_place {
        bail!("--parallel runs each agent in a clone of its own: drop --in-place");
    }
    let jobs = options.jobs.unwrap_or(n).max(1) as usize;
    let workspace = asked
        .place
        .workspace
        .canonicalize()
        .with_context(|| format!("{} is not a directory", asked.place.workspace.display()))?;
    let Some(repo) = wright_sandbox::git::UserRepo::discover(&workspace) else {
        bail!("--parallel needs a git repository: each run works on a branch of its own");
    };
    let profiles: Vec<Option<String>> = (0..n as usize)
        .map(|i| match options.profiles.is_empty() {
            true => asked.common.profile.clone(),
            false => Some(options.profiles[i % options.profiles.len()].clone()),
        })
        .collect();
    tell_servers(&asked, &profiles, &workspace, n).await?;
    let group = format!("g-{}", wright_core::new_conversation_id());
    let exe = std::env::current_exe().context("cannot find the wright binary")?;
    let scratch = tempfile::Builder::new()
        .prefix("wright-parallel-")
        .tempdir()
        .context("cannot make a temporary directory for the checks")?;
    let nothing = scratch.path().join("no-files");
    std::fs::create_dir_all(&nothing)?;
    tell!(
        "wright · {n} runs of one task · group {group} · at most {jobs} at once{}",
        match &options.check {
            Some(check) => format!(" · check: {check}"),
            None => String::new(),
        }
    );
    let gate = Arc::new(tokio::sync::Semaphore::new(jobs));
    let mut running = tokio::task::JoinSet::new();
    for (i, profile) in profiles.into_iter().enumerate() {
        let mut words = vec![
            "run".to_string(),
            "--json".into(),
            "-C".into(),
            workspace.display().to_string(),
            "--group".into(),
            group.clone(),
        ];
        if let Some(profile) = &profile {
            words.extend(["--profile".into(), profile.clone()]);
        }
        words.extend(asked.common.words());
        words.extend(asked.run_words.iter().cloned());
        if asked.place.include_uncommitted {
            words.push("--include-uncommitted".into());
        }
        words.extend(["--".into(), asked.task.to_string()]);
        let job = Job {
            n: i + 1,
            profile,
            exe: exe.clone(),
            words,
            check: options.check.clone().map(|check| CheckSpec {
                repo: repo.top().to_path_buf(),
                tip: String::new(),
                dir: scratch.path().join(format!("check-{}", i + 1)),
                files: nothing.clone(),
                protect: Vec::new(),
                check,
                timeout_secs: 600,
                sandbox: asked.common.sandbox.clone(),
                profile: None,
            }),
        };
        let gate = gate.clone();
        running.spawn(async move {
            let _turn = gate.acquire_owned().await;
            job.run().await
        });
    }
    let mut ran = Vec::new();
    while let Some(done) = running.join_next().await {
        let done = done.context("a run's task failed")?;
        tell!("  [#{} {}: {}]", done.n, done.judged(), done.summary());
        ran.push(done);
    }
    ran.sort_by_key(|r| r.n);
    Ok(crate::parallel_table::report(&ran_rows(&ran), &group))
}

/// Says, for each server the runs use, what it does with their shared prefix; connects
/// first (the egress policy is checked, and asked where it asks, before any run starts).
async fn tell_servers(
    asked: &Asked<'_>,
    profiles: &[Option<String>],
    workspace: &Path,
    n: u32,
) -> Result<()> {
    let front = crate::drive::Terminal {
        json: asked.common.json,
    };
    let start = wright_session::Session::locate(workspace, &front)?;
    let source = start.config_source();
    let mut seen = std::collections::BTreeSet::new();
    for profile in profiles {
        if !seen.insert(profile.clone()) {
            continue;
        }
        let common = CommonArgs {
            profile: profile.clone(),
            ..asked.common.clone()
        };
        let settings = crate::settings::SessionSettings::resolve(&common, Some(&source))?;
        let client = settings.client(None).await?;
        let on_it = profiles.iter().filter(|p| *p == profile).count() as u64;
        let sharing = client.prefix_sharing().await;
        tell!(
            "  {} on {}: {}",
            client.config().model,
            client.config().base_url,
            sharing.describe(on_it.min(u64::from(n)))
        );
    }
    Ok(())
}

/// One run to start.
struct Job {
    n: usize,
    profile: Option<String>,
    exe: PathBuf,
    words: Vec<String>,
    check: Option<CheckSpec>,
}

impl Job {
    async fn run(self) -> Ran {
        let started = Instant::now();
        let output = tokio::process::Command::new(&self.exe)
            .args(&self.words)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .output()
            .await;
        let seconds = started.elapsed().as_secs_f64();
        let mut ran = Ran {
            n: self.n,
            profile: self.profile.clone(),
            facts: RunFacts::default(),
            seconds,
            diff: (0, 0, 0),
            verdict: None,
            asked_check: self.check.is_some(),
            check: None,
            trouble: None,
        };
        let output = match output {
            Ok(output) => output,
            Err(err) => {
                ran.trouble = Some(format!("cannot start `wright run`: {err}"));
                return ran;
            }
        };
        let events: Vec<Event> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        ran.facts = facts(&events);
        for event in &events {
            match &event.body {
                EventBody::SecondLook(look) => ran.verdict = look.verdict,
                EventBody::Changes(changes) => {
                    ran.diff = diff_size(changes.diff.as_deref().unwrap_or(""));
                }
                _ => {}
            }
        }
        if ran.facts.conversation.is_none() {
            let said = String::from_utf8_lossy(&output.stderr);
            ran.trouble = Some(
                said.lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("it said nothing")
                    .trim_start_matches("wright: ")
                    .to_string(),
            );
            return ran;
        }
        if let Some(reason) = &ran.facts.changes_failed {
            ran.trouble = Some(format!("its changes were not handed over: {reason}"));
            return ran;
        }
        let Some(mut spec) = self.check else {
            return ran;
        };
        if let Some(tip) = ran.facts.tip.clone() {
            spec.tip = tip.as_str().to_string();
            spec.profile = self.profile;
            let exe = self.exe;
            ran.check = match tokio::task::spawn_blocking(move || check_commit(&exe, &spec)).await {
                Ok(Ok(check)) => Some(check),
                Ok(Err(err)) => {
                    ran.trouble = Some(format!("the check could not run: {err}"));
                    None
                }
                Err(err) => {
                    ran.trouble = Some(format!("the check could not run: {err}"));
                    None
                }
            };
        } else {
            ran.trouble = Some("it handed over no change to check".into());
        }
        ran
    }
}

impl Ran {
    /// How it ended, in a few words, for the line shown as it ends.
    fn summary(&self) -> String {
        if let Some(trouble) = &self.trouble {
            return trouble.clone();
        }
        let state = self.facts.state.map_or("no state", AgentState::as_str);
        match &self.facts.conversation {
            Some(id) => format!("{state}, {id}"),
            None => state.to_string(),
        }
    }
}

/// Lines added, removed, and files of a unified diff.
fn diff_size(diff: &str) -> (usize, usize, usize) {
    let mut size = (0, 0, 0);
    for line in diff.lines() {
        if line.starts_with("diff --git ") {
            size.2 += 1;
        } else if line.starts_with("+++ ") || line.starts_with("--- ") {
        } else if line.starts_with('+') {
            size.0 += 1;
        } else if line.starts_with('-') {
            size.1 += 1;
        }
    }
    size
}

/// The table's rows.
fn ran_rows(ran: &[Ran]) -> Vec<crate::parallel_table::Row> {
    ran.iter()
        .map(|r| crate::parallel_table::Row {
            n: r.n,
            conversation: r.facts.conversation.clone(),
            profile: r.profile.clone(),
            judged: r.judged(),
            passed: r.passed() && r.trouble.is_none(),
            steps: r.facts.steps,
            prompt_tokens: r.facts.prompt_tokens,
            cached_tokens: r.facts.cached_tokens,
            completion_tokens: r.facts.completion_tokens,
            seconds: r.seconds,
            diff: r.diff,
            trouble: r.trouble.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_is_measured_in_lines_and_files() {
        let diff = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1,2 @@\n-old\n+new\n+more\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(diff_size(diff), (3, 2, 2));
        assert_eq!(diff_size(""), (0, 0, 0));
    }
}
