//! `cargo bench -p wright-cli --bench loop`: the harness's own cost, measured against the
//! scripted model server (which answers at once), so every millisecond is wright's.
//!
//! Prints: per-step overhead over a 30-step run of `echo` commands (median, p90) in a
//! plain directory, and in a git repository (where each step's files are kept for
//! `fork --at`: with a model answering at once, and one taking 200 ms, which the
//! snapshot overlaps; and steps that each write a file), process start to first model request, peak RSS of the fix-a-test run, the size of the system
//! prompt plus tool schemas, the terminal tool's `echo` round trip, and a 100 MB output.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_macros)]

use serde_json::json;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;
use wright_testkit::failing_python_repo;
use wright_testkit::fix_a_test_script;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;
use wright_tools::TerminalTool;
use wright_tools::Tool;
use wright_tools::Workspace;

const BUILT: &str = env!("CARGO_BIN_EXE_wright");

/// The wright measured: the one built with the bench, or `WRIGHT_BENCH_BINARY` (another
/// build, to compare two side by side on the same machine).
fn wright() -> String {
    std::env::var("WRIGHT_BENCH_BINARY").unwrap_or_else(|_| BUILT.to_string())
}

struct RunStats {
    spawn_to_first_request: Duration,
    request_gaps: Vec<Duration>,
    peak_rss_kb: u64,
    /// At the largest resident set sampled: anonymous and file-backed kB.
    peak_split_kb: (u64, u64),
    wall: Duration,
}

/// Runs `wright run` on `repo` against a server playing `script`; samples the process's
/// high-water RSS (VmHWM never decreases, so the last sample is the peak).
async fn run_wright(
    repo: &Path,
    data: &Path,
    sandbox: &str,
    script: Vec<Reply>,
) -> (RunStats, ScriptedServer) {
    let server = ScriptedServer::start(script).await.unwrap();
    let started = Instant::now();
    let mut child = tokio::process::Command::new(wright())
        .args([
            "run",
            "--sandbox",
            sandbox,
            "--base-url",
            &server.url(),
            "--model",
            "test-model",
            "--max-steps",
            "100",
            "--json",
            "do the task",
        ])
        .current_dir(repo)
        .env("XDG_DATA_HOME", data)
        .env("XDG_CACHE_HOME", data.join("cache"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut peak_rss_kb = 0;
    let mut peak_split_kb = (0, 0);
    let mut largest_sample_kb = 0;
    loop {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let field = |name: &str| -> Option<u64> {
                status
                    .lines()
                    .find(|l| l.starts_with(name))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|v| v.parse().ok())
            };
            if let Some(kb) = field("VmHWM:") {
                peak_rss_kb = kb;
            }
            // What the largest resident set sampled was made of: the process's own
            // memory, and pages of files it maps (mostly the binary's, shared with the
            // page cache).
            if let (Some(rss), Some(anon), Some(file)) =
                (field("VmRSS:"), field("RssAnon:"), field("RssFile:"))
            {
                if rss > largest_sample_kb {
                    largest_sample_kb = rss;
                    peak_split_kb = (anon, file);
                }
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            assert!(status.success(), "wright failed: {status}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let wall = started.elapsed();
    let requests = server.chat_requests();
    let spawn_to_first_request = requests[0].at.duration_since(started);
    let request_gaps = requests
        .windows(2)
        .map(|w| w[1].at.duration_since(w[0].at))
        .collect();
    (
        RunStats {
            spawn_to_first_request,
            request_gaps,
            peak_rss_kb,
            peak_split_kb,
            wall,
        },
        server,
    )
}

fn percentile(values: &mut [Duration], p: f64) -> Duration {
    values.sort();
    values[((values.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // `cargo bench` passes --bench; `-- start` measures only the start (more rounds).
    let data = tempfile::tempdir().unwrap();
    if std::env::args().skip(1).any(|arg| arg == "start") {
        start_only(data.path()).await;
        return;
    }

    // 1. Thirty echo steps, answered at once: the gap between requests is wright's time.
    let mut loop_figures = Vec::new();
    for sandbox in ["none", "auto"] {
        let mut gaps = Vec::new();
        let mut starts = Vec::new();
        for round in 0..5 {
            let repo = tempfile::tempdir().unwrap();
            let mut script: Vec<Reply> = (0..30)
                .map(|i| reply().call("terminal", json!({"command": format!("echo step {i}")})))
                .collect();
            script.push(reply().call("finish", json!({"message": "done"})));
            let (stats, _) = run_wright(repo.path(), data.path(), sandbox, script).await;
            if round > 0 {
                gaps.extend(stats.request_gaps);
            }
            starts.push(stats.spawn_to_first_request);
        }
        loop_figures.push((
            sandbox,
            percentile(&mut gaps, 0.5),
            percentile(&mut gaps, 0.9),
            percentile(&mut starts, 0.5),
        ));
    }

    // 1b. The same in a git repository: each terminal step's files are kept for `fork
    //     --at`. A model answering at once shows the whole cost of keeping them; one
    //     taking 200 ms shows what is left once it overlaps; and steps that each write a
    //     file show the cost of a step that changed files (the echo steps change none).
    let mut git_figures = Vec::new();
    for (what, delay, writes) in [
        ("echo", Duration::ZERO, false),
        ("echo", Duration::from_millis(200), false),
        ("writing a file", Duration::ZERO, true),
    ] {
        let mut gaps = Vec::new();
        for round in 0..3 {
            let repo = tempfile::tempdir().unwrap();
            failing_python_repo(repo.path());
            let mut script: Vec<Reply> = (0..30)
                .map(|i| {
                    let command = if writes {
                        format!("echo step {i} > notes.txt")
                    } else {
                        format!("echo step {i}")
                    };
                    let step = reply().call("terminal", json!({ "command": command }));
                    if delay.is_zero() {
                        step
                    } else {
                        Reply::Delayed(delay, Box::new(step))
                    }
                })
                .collect();
            script.push(reply().call("finish", json!({"message": "done"})));
            let (stats, _) = run_wright(repo.path(), data.path(), "auto", script).await;
            if round > 0 {
                gaps.extend(
                    stats
                        .request_gaps
                        .iter()
                        .map(|gap| gap.saturating_sub(delay)),
                );
            }
        }
        git_figures.push((
            what,
            delay,
            percentile(&mut gaps, 0.5),
            percentile(&mut gaps, 0.9),
        ));
    }

    // 2. The fix-a-test run: peak RSS, and the prompt's fixed size.
    let repo = tempfile::tempdir().unwrap();
    failing_python_repo(repo.path());
    let script = fix_a_test_script();
    let (fix, server) = run_wright(repo.path(), data.path(), "auto", script).await;
    let first = server.chat_requests()[0].json();
    let system_chars = first["messages"][0]["content"]
        .as_str()
        .unwrap()
        .chars()
        .count();
    let tools_chars = serde_json::to_string(&first["tools"])
        .unwrap()
        .chars()
        .count();

    // 3. The terminal tool's round trip for `echo` in its persistent shell, unconfined
    //    and confined (Landlock, seccomp, namespaces).
    let median_echo = echo_round_trip(wright_sandbox::Sandbox::unconfined(), None).await;
    let private = wright_sandbox::PrivateDir::create(&std::env::temp_dir(), "bench-echo").unwrap();
    let ws = tempfile::tempdir().unwrap();
    let policy = wright_sandbox::confine::Policy::for_workspace(ws.path(), &private, None);
    let confined = wright_sandbox::Sandbox::confined(wright().into(), &policy).unwrap();
    let median_confined_echo = echo_round_trip(confined, Some((ws.path(), &private))).await;
    drop(private);

    // 4. A command printing 100 MB, through the whole binary.
    let repo = tempfile::tempdir().unwrap();
    let script = vec![
        reply().call(
            "terminal",
            json!({"command": "head -c 100000000 /dev/zero | tr '\\0' 'a'; echo"}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ];
    let (huge, _) = run_wright(repo.path(), data.path(), "auto", script).await;

    // 5. Spawn and wait for `true` under each level.
    let spawn = spawn_costs();

    println!("wright loop benchmark (scripted server answering at once)");
    for (sandbox, median, p90, start) in &loop_figures {
        println!(
            "  --sandbox {sandbox}: per-step overhead over 30 echo steps (4 runs): median {:.2} ms, p90 {:.2} ms; process start to first model request: median {:.1} ms",
            ms(*median),
            ms(*p90),
            ms(*start)
        );
    }
    for (what, delay, median, p90) in &git_figures {
        println!(
            "  --sandbox auto, git repository, model answering in {} ms: per-step overhead over 30 {what} steps (2 runs), the model's time taken off: median {:.2} ms, p90 {:.2} ms",
            delay.as_millis(),
            ms(*median),
            ms(*p90)
        );
    }
    println!(
        "  peak RSS, fix-a-test run: {:.1} MB (at the largest sample: {:.1} MB anonymous, {:.1} MB of mapped files, mostly wright's own binary)",
        fix.peak_rss_kb as f64 / 1024.0,
        fix.peak_split_kb.0 as f64 / 1024.0,
        fix.peak_split_kb.1 as f64 / 1024.0
    );
    println!(
        "  system prompt + tool schemas: {} + {} characters = {} tokens (chars/4)",
        system_chars,
        tools_chars,
        (system_chars + tools_chars) / 4
    );
    println!(
        "  terminal round trip for `echo` (200 runs): median {:.2} ms unconfined, {:.2} ms confined",
        ms(median_echo),
        ms(median_confined_echo)
    );
    println!(
        "  100 MB command output: {:.1} s for the run, peak RSS {:.1} MB",
        huge.wall.as_secs_f64(),
        huge.peak_rss_kb as f64 / 1024.0
    );
    for (level, median) in spawn {
        println!(
            "  spawn and wait for `true` ({level}): median {:.2} ms (50 runs)",
            ms(median)
        );
    }
}

/// `cargo bench --bench loop -- start`: process start to first model request and peak
/// RSS of a one-step run, 15 runs each (the first left out: cold caches), unconfined and
/// sandboxed in a plain directory, and sandboxed in a git repository.
async fn start_only(data: &Path) {
    println!("wright start benchmark (scripted server answering at once)");
    for (sandbox, git) in [("none", false), ("auto", false), ("auto", true)] {
        let mut starts = Vec::new();
        let mut rss = Vec::new();
        for round in 0..16 {
            let repo = tempfile::tempdir().unwrap();
            if git {
                // A git repository (no tests, so nothing of the first look runs before
                // the first request): the run works in a clone checked out in the sandbox.
                std::fs::write(repo.path().join("README.md"), "notes\n").unwrap();
                wright_testkit::git(repo.path(), &["init", "-q"]);
                wright_testkit::git(repo.path(), &["add", "."]);
                wright_testkit::git(repo.path(), &["commit", "-q", "-m", "notes"]);
            }
            let script = vec![
                reply().call("terminal", json!({"command": "echo hi"})),
                reply().call("finish", json!({"message": "done"})),
            ];
            let (stats, _) = run_wright(repo.path(), data, sandbox, script).await;
            if round > 0 {
                starts.push(stats.spawn_to_first_request);
                rss.push(stats.peak_rss_kb);
            }
        }
        let p10 = percentile(&mut starts, 0.1);
        let median = percentile(&mut starts, 0.5);
        rss.sort_unstable();
        let place = if git {
            "a git repository (a clone)"
        } else {
            "a plain directory"
        };
        println!(
            "  --sandbox {sandbox}, {place}: process start to first model request: median {:.1} ms (p10 {:.1} ms); peak RSS median {:.1} MB",
            ms(median),
            ms(p10),
            rss[rss.len() / 2] as f64 / 1024.0
        );
    }
}

async fn echo_round_trip(
    sandbox: wright_sandbox::Sandbox,
    confined: Option<(&Path, &wright_sandbox::PrivateDir)>,
) -> Duration {
    let ws = tempfile::tempdir().unwrap();
    let unconfined_scratch =
        wright_sandbox::PrivateDir::create(&std::env::temp_dir(), "bench-none").unwrap();
    let (root, env, scratch) = match confined {
        Some((root, private)) => (
            root.to_path_buf(),
            wright_sandbox::confined_environment(std::env::vars(), private.root(), None),
            private.out(),
        ),
        None => (
            ws.path().to_path_buf(),
            wright_sandbox::shell_environment(std::env::vars()),
            unconfined_scratch.out(),
        ),
    };
    let scratch = wright_tools::Scratch::open(&scratch, 1 << 30).unwrap();
    let terminal = TerminalTool::new(Workspace::new(&root).unwrap(), env, sandbox, scratch);
    terminal.warm_up().await.unwrap();
    let mut round_trips = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        terminal.run(&json!({"command": "echo hi"})).await.unwrap();
        round_trips.push(t.elapsed());
    }
    percentile(&mut round_trips, 0.5)
}

/// Spawn-and-wait of `true`: bare, under the launcher with Landlock + seccomp, and with
/// namespaces too.
fn spawn_costs() -> Vec<(&'static str, Duration)> {
    use wright_sandbox::confine::Namespaces;
    use wright_sandbox::confine::Policy;
    let ws = tempfile::tempdir().unwrap();
    let private = wright_sandbox::PrivateDir::create(&std::env::temp_dir(), "bench-spawn").unwrap();
    let mut figures = Vec::new();
    let mut time = |level: &'static str, command: &mut dyn FnMut() -> std::process::ExitStatus| {
        let mut runs = Vec::new();
        for _ in 0..50 {
            let t = Instant::now();
            assert!(command().success(), "{level}");
            runs.push(t.elapsed());
        }
        figures.push((level, percentile(&mut runs, 0.5)));
    };
    time("bare", &mut || {
        std::process::Command::new("true").status().unwrap()
    });
    for (level, namespaces) in [
        ("Landlock + seccomp", Namespaces::Off),
        ("Landlock + seccomp + namespaces", Namespaces::Required),
    ] {
        let mut policy = Policy::for_workspace(ws.path(), &private, None);
        policy.namespaces = namespaces;
        let json = serde_json::to_string(&policy).unwrap();
        time(level, &mut || {
            std::process::Command::new(wright())
                .args(["__sandbox-exec", &json, "--", "true"])
                .current_dir(ws.path())
                .status()
                .unwrap()
        });
    }
    drop(private);
    figures
}
