//! `wright eval SUITE`: every task of a suite run by a real `wright run` in a fresh
//! repository, judged by its own check (not by the agent's word), under one setting or
//! several side by side (`--compare`), each attempt recorded as it ends so an interrupted
//! sweep resumes; the results as a table or JSON.

pub(crate) mod check;
mod report;
mod results;
pub(crate) mod runner;
mod shapes;
mod suite;

use anyhow::bail;
use anyhow::Context;
use anyhow::Result;
use clap::Args;
use results::Key;
use results::Record;
use results::ResultsFile;
use results::Verdict;
use runner::Ended;
use runner::Runner;
use runner::Setting;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use suite::Task;
use wright_config::assist::Piece;

/// The `wright run` flags `--compare` may vary (each takes a value); besides them, one
/// piece of the help, `assist:PIECE` (`--assist-piece PIECE=VALUE`), and, deprecated, a
/// piece by its old flag's name (`first-look`).
const COMPARABLE: &[&str] = &[
    "tool-calling",
    "constrain",
    "assist",
    "model",
    "profile",
    "base-url",
    "max-steps",
    "max-reply-tokens",
    "context-window",
    "temperature",
    "condense-at",
    "sandbox",
];

#[derive(Args)]
pub struct EvalArgs {
    /// The suite: a JSONL file of {"repo", "task", "check"} (or a directory holding
    /// suite.jsonl), or a directory of exercises in the Exercism / Aider-polyglot layout.
    suite: PathBuf,
    /// Use this profile of your configuration for every run.
    #[arg(long)]
    profile: Option<String>,
    /// Model server URL for every run.
    #[arg(long)]
    base_url: Option<String>,
    /// Model name for every run.
    #[arg(long)]
    model: Option<String>,
    /// API key, if the server wants one, as `wright run --api-key` (default:
    /// $OPENAI_API_KEY, or the variable the profile's api_key_env names). The runs get it
    /// in their environment, not on their command lines.
    #[arg(long)]
    api_key: Option<String>,
    /// Stop each run after this many model steps.
    #[arg(long)]
    max_steps: Option<u32>,
    /// Stop each run after this many seconds.
    #[arg(long)]
    max_time: Option<u64>,
    /// Confinement of the runs' commands and of the checks: auto, landlock, namespaces,
    /// docker or none.
    #[arg(long)]
    sandbox: Option<String>,
    /// How tool calls travel in every run: auto, native or text.
    #[arg(long)]
    tool_calling: Option<String>,
    /// Constrained replies in every run: auto or off.
    #[arg(long)]
    constrain: Option<String>,
    /// The help every run gives the model: auto, on or off (`wright run --assist`).
    #[arg(long, value_name = "auto|on|off")]
    assist: Option<String>,
    /// One piece of the help in every run, as `wright run --assist-piece`:
    /// PIECE=auto|on|off, repeatable.
    #[arg(
        long = "assist-piece",
        value_name = "PIECE=LEVEL",
        value_delimiter = ','
    )]
    assist_pieces: Vec<String>,
    /// Deprecated: `--assist-piece map=on|off`.
    #[arg(long, hide = true)]
    map: Option<String>,
    /// Deprecated: `--assist-piece first-look=auto|on|off`.
    #[arg(long, hide = true)]
    first_look: Option<String>,
    /// Deprecated: `--assist-piece reading=auto|on|off`.
    #[arg(long, hide = true)]
    reading: Option<String>,
    /// Let the runs send the tasks' code to a model server that is not on this machine.
    #[arg(long)]
    allow_remote: bool,
    /// Any other word for every `wright run`, one per --run-arg: --run-arg=--no-stream,
    /// or --run-arg=--temperature --run-arg=0.2.
    #[arg(long = "run-arg", allow_hyphen_values = true, value_name = "FLAG")]
    run_args: Vec<String>,
    /// Run every task under each value of a `wright run` flag, side by side:
    /// `--compare tool-calling=native,text`, `--compare constrain=auto,off`,
    /// `--compare assist=auto,off`, `--compare assist:first-look=on,off` (one piece of the
    /// help; see `wright run --assist-piece`) (several: every combination).
    #[arg(long, value_name = "KEY=A,B")]
    compare: Vec<String>,
    /// Attempts per task and setting.
    #[arg(short = 'n', long = "attempts", default_value_t = 1)]
    attempts: u32,
    /// Attempts run at once.
    #[arg(short = 'j', long = "parallel", default_value_t = 1)]
    parallel: usize,
    /// Only these tasks (by name; repeat it).
    #[arg(long = "only", value_name = "TASK")]
    only: Vec<String>,
    /// The results directory (results.jsonl, the runs' stderr); an existing one is
    /// resumed: attempts it records are not run again. Default: a new one under
    /// wright's data directory, eval/SUITE-TIME.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seconds a check may run before it counts as failed.
    #[arg(long, default_value_t = 600)]
    check_timeout: u64,
    /// Print the summary as JSON on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
}

/// The settings `--compare` asks for: every combination of the values, in order.
pub fn settings(compare: &[String]) -> Result<Vec<Setting>> {
    let mut settings = vec![Setting {
        label: "default".into(),
        args: Vec::new(),
    }];
    for (index, spec) in compare.iter().enumerate() {
        let Some((key, values)) = spec.split_once('=') else {
            bail!(
                "--compare {spec}: write KEY=A,B, for example --compare tool-calling=native,text"
            );
        };
        let key = key.trim().trim_start_matches("--");
        let piece = compared_piece(key)?;
        if piece.is_none() && !COMPARABLE.contains(&key) {
            bail!(
                "--compare {key}: not a flag eval can vary; one of {}, assist:PIECE",
                COMPARABLE.join(", ")
            );
        }
        let values: Vec<&str> = values
            .split(',')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .collect();
        if values.is_empty() {
            bail!("--compare {spec}: no values after {key}=");
        }
        let mut next = Vec::new();
        for base in &settings {
            for value in &values {
                let label = format!("{key}={value}");
                let mut args = base.args.clone();
                match piece {
                    Some(piece) => args.extend([
                        "--assist-piece".to_string(),
                        format!("{}={value}", piece.word()),
                    ]),
                    None => args.extend([format!("--{key}"), value.to_string()]),
                }
                next.push(Setting {
                    label: if index == 0 {
                        label
                    } else {
                        format!("{} {label}", base.label)
                    },
                    args,
                });
            }
        }
        settings = next;
    }
    Ok(settings)
}

/// The piece of the help a `--compare` key varies, if it names one: `assist:PIECE`, or
/// (deprecated) the old flag of a piece, `first-look`.
fn compared_piece(key: &str) -> Result<Option<Piece>> {
    if let Some(word) = key.strip_prefix("assist:") {
        return match Piece::parse(word) {
            Some(piece) => Ok(Some(piece)),
            None => bail!(
                "--compare {key}: '{word}' is not a piece of the help; one of {}",
                Piece::ALL.map(Piece::word).join(", ")
            ),
        };
    }
    Ok(Piece::ALL.into_iter().find(|piece| {
        piece
            .old_key()
            .is_some_and(|(_, flag)| flag == format!("--{key}"))
    }))
}

/// The key a `--compare` key or a fixed flag stands for: a piece, however it was named,
/// as `assist:PIECE`.
fn canonical(key: &str) -> String {
    match compared_piece(key) {
        Ok(Some(piece)) => format!("assist:{}", piece.word()),
        _ => key.to_string(),
    }
}

/// One line of warning for each deprecated name among `--compare`'s keys, naming the
/// replacement.
fn deprecated_compares(compare: &[String]) -> Vec<String> {
    compare
        .iter()
        .filter_map(|spec| {
            let (key, values) = spec.split_once('=')?;
            let key = key.trim().trim_start_matches("--");
            if key.starts_with("assist:") {
                return None;
            }
            let piece = compared_piece(key).ok()??;
            Some(format!(
                "--compare {key} is deprecated: use --compare assist:{}={values}",
                piece.word()
            ))
        })
        .collect()
}

impl EvalArgs {
    /// The flags every run gets, as words; with the keys they set (so a compared key is
    /// not also fixed).
    fn run_flags(&self) -> (Vec<String>, Vec<String>) {
        let mut words = Vec::new();
        let mut keys = Vec::new();
        let mut put = |key: &'static str, value: Option<String>| {
            if let Some(value) = value {
                words.extend([format!("--{key}"), value]);
                keys.push(key.to_string());
            }
        };
        put("profile", self.profile.clone());
        put("base-url", self.base_url.clone());
        put("model", self.model.clone());
        put("max-steps", self.max_steps.map(|v| v.to_string()));
        put("max-time", self.max_time.map(|v| v.to_string()));
        put("sandbox", self.sandbox.clone());
        put("tool-calling", self.tool_calling.clone());
        put("constrain", self.constrain.clone());
        put("assist", self.assist.clone());
        let mut pieces: Vec<String> = self.assist_pieces.clone();
        for (old, value) in [
            ("map", &self.map),
            ("first-look", &self.first_look),
            ("reading", &self.reading),
        ] {
            if let Some(value) = value {
                tell!("warning: --{old} is deprecated: use --assist-piece {old}={value}");
                pieces.push(format!("{old}={value}"));
            }
        }
        for setting in pieces {
            let piece = setting.split('=').next().unwrap_or_default().trim();
            keys.push(canonical(piece));
            words.extend(["--assist-piece".to_string(), setting]);
        }
        if self.allow_remote {
            words.push("--allow-remote".into());
        }
        words.extend(self.run_args.iter().cloned());
        (words, keys)
    }
}

pub use check::eval_check;
pub use check::EvalCheckArgs;

pub async fn eval(args: EvalArgs) -> Result<u8> {
    if args.attempts == 0 || args.parallel == 0 {
        bail!("-n and -j must be at least 1");
    }
    let suite = suite::read(&args.suite)?;
    let settings = settings(&args.compare)?;
    for line in deprecated_compares(&args.compare) {
        tell!("warning: {line}");
    }
    let (run_args, fixed) = args.run_flags();
    for spec in &args.compare {
        let key = spec
            .split('=')
            .next()
            .unwrap_or_default()
            .trim()
            .trim_start_matches("--");
        if fixed.contains(&canonical(key)) {
            bail!("--{key} is given and compared: drop one");
        }
    }
    let tasks: Vec<Task> = if args.only.is_empty() {
        suite.tasks.clone()
    } else {
        for name in &args.only {
            if !suite.tasks.iter().any(|t| &t.name == name) {
                bail!("--only {name}: the suite has no such task");
            }
        }
        suite
            .tasks
            .iter()
            .filter(|t| args.only.contains(&t.name))
            .cloned()
            .collect()
    };
    // The checks' sandbox is the one the runs get.
    let common = crate::settings::CommonArgs {
        profile: args.profile.clone(),
        sandbox: args.sandbox.clone(),
        ..Default::default()
    };
    common.check()?;
    // Checked before any attempt: a bad --sandbox or --profile stops here.
    crate::settings::SessionSettings::resolve(&common, None)?.sandbox_mode()?;
    let out = match &args.out {
        Some(out) => out.clone(),
        None => wright_core::conversations_dir()
            .parent()
            .map(|data| data.join("eval"))
            .unwrap_or_else(|| PathBuf::from("eval"))
            .join(format!(
                "{}-{}",
                suite.name,
                wright_core::new_conversation_id()
            )),
    };
    let (file, recorded) = ResultsFile::open(&out)?;
    let logs = out.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
    let runner = Runner {
        exe: std::env::current_exe().context("cannot find the wright binary")?,
        run_args,
        api_key: args.api_key.clone(),
        sandbox: args.sandbox.clone(),
        profile: args.profile.clone(),
        check_timeout: Duration::from_secs(args.check_timeout),
        logs,
    };

    let done = results::done(&recorded);
    let mut plan: Vec<Job> = Vec::new();
    for task in &tasks {
        for setting in &settings {
            for attempt in 1..=args.attempts {
                plan.push((
                    (task.name.clone(), setting.label.clone(), attempt),
                    Arc::new(task.clone()),
                    Arc::new(setting.clone()),
                ));
            }
        }
    }
    let planned: std::collections::BTreeSet<Key> = plan.iter().map(|(k, ..)| k.clone()).collect();
    let todo: VecDeque<Job> = plan
        .into_iter()
        .filter(|(key, ..)| !done.contains(key))
        .collect();
    let already = planned.len() - todo.len();
    tell!(
        "wright eval · {} · {} task{} × {} setting{} × {} attempt{} · results in {}{}",
        suite.name,
        tasks.len(),
        plural(tasks.len()),
        settings.len(),
        plural(settings.len()),
        args.attempts,
        plural(args.attempts as usize),
        out.display(),
        if already > 0 {
            format!(" ({already} already recorded, not run again)")
        } else {
            String::new()
        }
    );

    let sweep = Arc::new(Sweep {
        todo: Mutex::new(todo),
        file: Mutex::new(file),
        fresh: Mutex::new(Vec::new()),
        stop: AtomicBool::new(false),
        interrupted: AtomicBool::new(false),
        error: Mutex::new(None),
        total: planned.len(),
        finished: Mutex::new(already),
    });
    let runner = Arc::new(runner);
    let workers: Vec<_> = (0..args.parallel)
        .map(|_| {
            let (sweep, runner) = (sweep.clone(), runner.clone());
            tokio::task::spawn_blocking(move || sweep.work(&runner))
        })
        .collect();
    let all_done = futures_join(workers);
    tokio::pin!(all_done);
    tokio::select! {
        () = &mut all_done => {}
        _ = tokio::signal::ctrl_c() => {
            // The runs in flight got the terminal's Ctrl-C too and stop after logging
            // their step; no new one starts. Their attempts are not recorded.
            tell!("\nwright eval: stopping once the attempts in flight have stopped");
            sweep.interrupted.store(true, Ordering::SeqCst);
            sweep.stop.store(true, Ordering::SeqCst);
            all_done.await;
        }
    }
    if let Some(err) = sweep.error.lock().ok().and_then(|mut e| e.take()) {
        return Err(err);
    }
    let mut all: Vec<Record> = recorded;
    all.extend(
        sweep
            .fresh
            .lock()
            .map(|mut fresh| std::mem::take(&mut *fresh))
            .unwrap_or_default(),
    );
    all.retain(|r| planned.contains(&r.key()));
    let labels: Vec<String> = settings.iter().map(|s| s.label.clone()).collect();
    let task_shapes: Vec<shapes::Planned> = tasks
        .iter()
        .map(|t| shapes::Planned {
            name: t.name.clone(),
            shape: t.shape.clone(),
        })
        .collect();
    let summary = report::summarize(
        &suite.name,
        &out.display().to_string(),
        &labels,
        &task_shapes,
        &all,
    );
    if args.json {
        say!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        tell!();
        for line in report::table(&summary) {
            say!("{line}");
        }
    }
    if sweep.interrupted.load(Ordering::SeqCst) {
        tell!(
            "\ninterrupted: run the same command with --out {} to go on",
            out.display()
        );
        return Ok(130);
    }
    Ok(0)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The sweep's shared state: the attempts left, the results file, and why it stopped.
/// One attempt to run: its key, its task and its setting.
type Job = (Key, Arc<Task>, Arc<Setting>);

/// Waits for every worker (a panicked one included).
async fn futures_join(workers: Vec<tokio::task::JoinHandle<()>>) {
    for worker in workers {
        let _ = worker.await;
    }
}

struct Sweep {
    todo: Mutex<VecDeque<Job>>,
    file: Mutex<ResultsFile>,
    fresh: Mutex<Vec<Record>>,
    stop: AtomicBool,
    interrupted: AtomicBool,
    error: Mutex<Option<anyhow::Error>>,
    total: usize,
    finished: Mutex<usize>,
}

impl Sweep {
    fn work(&self, runner: &Runner) {
        while !self.stop.load(Ordering::SeqCst) {
            let Some(((_, _, attempt), task, setting)) =
                self.todo.lock().ok().and_then(|mut q| q.pop_front())
            else {
                return;
            };
            match runner.attempt(&task, &setting, attempt) {
                Ok(Ended::Recorded(record)) => {
                    if let Err(err) = self.record(*record) {
                        self.fail(err);
                    }
                }
                Ok(Ended::Interrupted) => {
                    self.interrupted.store(true, Ordering::SeqCst);
                    self.stop.store(true, Ordering::SeqCst);
                }
                Err(err) => self.fail(err.context(format!("{} ({})", task.name, setting.label))),
            }
        }
    }

    fn fail(&self, err: anyhow::Error) {
        self.stop.store(true, Ordering::SeqCst);
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(err);
        }
    }

    fn record(&self, record: Record) -> Result<()> {
        self.file
            .lock()
            .map_err(|_| anyhow::anyhow!("the results file's lock was poisoned"))?
            .append(&record)?;
        let count = self.finished.lock().map(|mut n| {
            *n += 1;
            *n
        });
        let what = match record.verdict {
            Verdict::Passed => "passed".to_string(),
            Verdict::Failed => format!("failed: {}", record.reason.as_deref().unwrap_or("failed")),
            Verdict::Skipped => {
                format!("skipped: {}", record.reason.as_deref().unwrap_or("skipped"))
            }
        };
        let cost = if record.verdict == Verdict::Skipped {
            String::new()
        } else {
            format!(" · {} steps · {:.1} s", record.steps, record.seconds)
        };
        tell!(
            "[{}/{}] {} · {} #{}: {what}{cost}",
            count.unwrap_or(0),
            self.total,
            record.task,
            record.setting,
            record.attempt,
        );
        if let Ok(mut fresh) = self.fresh.lock() {
            fresh.push(record);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
