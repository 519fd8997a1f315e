//! `wright eval`: a tiny JSONL suite run against the scripted server: one task fixed, one
//! "fixed" by editing its protected test (the check puts the test back, so it fails), one
//! skipped for a missing program; then a resumed sweep runs only the attempts not yet
//! recorded, and `--compare` puts two settings side by side.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use pretty_assertions::assert_eq;
use serde_json::json;
use serde_json::Value;
use std::path::Path;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

mod shipped;

/// A suite in `dir`: `add` (a wrong sign) with its test, `sub` likewise, both of the shape
/// `cause-in-function`; `gone` needing a program that is not installed, with no shape (as
/// older suites have none).
fn make_suite(dir: &Path) -> std::path::PathBuf {
    for (name, op, wrong) in [("add", "+", "-"), ("sub", "-", "+")] {
        let task = dir.join("tasks").join(name);
        std::fs::create_dir_all(&task).unwrap();
        std::fs::write(
            task.join("calc.py"),
            format!("def {name}(a, b):\n    return a {wrong} b\n"),
        )
        .unwrap();
        std::fs::write(
            task.join(format!("test_{name}.py")),
            format!(
                "import unittest\nfrom calc import {name}\n\n\nclass T(unittest.TestCase):\n    def test_{name}(self):\n        self.assertEqual({name}(5, 3), 5 {op} 3)\n\n\nif __name__ == '__main__':\n    unittest.main()\n"
            ),
        )
        .unwrap();
    }
    std::fs::create_dir_all(dir.join("tasks/gone")).unwrap();
    let lines = [
        json!({"repo": "tasks/add", "shape": "cause-in-function", "task": "test_add fails: fix calc.py", "check": "python3 -m unittest -q", "protect": ["test_add.py"]}),
        json!({"repo": "tasks/sub", "shape": "cause-in-function", "task": "test_sub fails: fix calc.py", "check": "python3 -m unittest -q", "protect": ["test_sub.py"]}),
        json!({"repo": "tasks/gone", "task": "nothing", "check": "no-such-toolchain-here test"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path = dir.join("suite.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

/// The agent fixes `add`.
fn fix_add() -> Vec<Reply> {
    vec![
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "calc.py", "old_str": "a - b", "new_str": "a + b"}),
        ),
        reply().call("finish", json!({"message": "add subtracted; it adds now."})),
    ]
}

/// The agent makes `sub`'s test agree with the bug, and insists when asked about it.
fn cheat_sub() -> Vec<Reply> {
    vec![
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "test_sub.py", "old_str": "5 - 3", "new_str": "5 + 3"}),
        ),
        reply().call("finish", json!({"message": "the test was wrong."})),
        reply().call("finish", json!({"message": "the test was wrong, I am sure."})),
    ]
}

fn records(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// `wright eval SUITE --base-url URL --model test-model EXTRA...` in the harness.
async fn eval(h: &Harness, suite: &str, url: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["eval", suite, "--base-url", url, "--model", "test-model"];
    args.extend_from_slice(extra);
    h.wright(&args, &[]).await
}

#[tokio::test]
async fn a_suite_is_judged_by_its_checks_recorded_and_resumed() {
    let h = Harness::new();
    let suite = make_suite(h.repo());
    let out = h.data.path().join("sweep");
    let out_arg = out.display().to_string();
    // Relative to the directory wright runs in, as people type it: the check's sandbox
    // still finds the task's files.
    let suite_arg = suite.strip_prefix(h.repo()).unwrap().display().to_string();
    assert_eq!(suite_arg, "suite.jsonl");
    let server = ScriptedServer::start([fix_add(), cheat_sub()].concat())
        .await
        .unwrap();
    let url = server.url();
    let base = [
        "eval",
        suite_arg.as_str(),
        "--base-url",
        url.as_str(),
        "--model",
        "test-model",
        "--out",
        out_arg.as_str(),
    ];
    let output = h.wright(&base, &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(server.remaining(), 0, "{}", stderr(&output));
    let table = stdout(&output);
    let summary_row = table
        .lines()
        .find(|l| l.starts_with("default"))
        .unwrap_or_default();
    assert_eq!(
        summary_row.split_whitespace().take(3).collect::<Vec<_>>(),
        ["default", "1/2", "50%"],
        "{table}"
    );
    assert!(
        table.contains("sub #1: finished, but the check failed (exit 1)"),
        "{table}"
    );
    assert!(
        table.contains("skipped: gone (no no-such-toolchain-here)"),
        "{table}"
    );
    // Per shape: the two labelled tasks, the unlabelled one, and the total.
    let words = |first: &str| -> Vec<String> {
        table
            .lines()
            .find(|l| l.starts_with(first))
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    assert_eq!(words("shape"), ["shape", "tasks", "default"], "{table}");
    assert_eq!(
        words("cause-in-function"),
        ["cause-in-function", "2", "1/2", "(50%)"],
        "{table}"
    );
    assert_eq!(
        words("unlabelled"),
        ["unlabelled", "1", "skipped"],
        "{table}"
    );
    assert_eq!(
        words("total"),
        ["total", "3", "1/2", "(50%)", "+1", "skipped"],
        "{table}"
    );

    let recorded = records(&out);
    assert_eq!(recorded[0]["shape"], "cause-in-function");
    assert!(recorded[2].get("shape").is_none(), "{}", recorded[2]);
    let verdicts: Vec<(&str, &str)> = recorded
        .iter()
        .map(|r| (r["task"].as_str().unwrap(), r["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(
        verdicts,
        [("add", "passed"), ("sub", "failed"), ("gone", "skipped")]
    );
    assert_eq!(recorded[0]["state"], "finished");
    assert_eq!(recorded[0]["steps"], 2);
    assert_eq!(recorded[0]["check_exit"], 0);
    assert!(recorded[0]["prompt_tokens"].as_u64().unwrap() > 0);
    assert!(recorded[0]["conversation"].is_string());
    // The agent's edit of the protected test did not count.
    assert!(
        recorded[1]["check_output"]
            .as_str()
            .unwrap()
            .contains("FAILED"),
        "{}",
        recorded[1]
    );

    // A second attempt each: only the new attempts run (the first ones are recorded).
    let again = ScriptedServer::start([fix_add(), fix_add()].concat())
        .await
        .unwrap();
    let again_url = again.url();
    let mut args = base.to_vec();
    args[3] = again_url.as_str();
    args.extend(["-n", "2", "--json"]);
    let output = h.wright(&args, &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("3 already recorded, not run again"),
        "{}",
        stderr(&output)
    );
    assert_eq!(again.remaining(), 0, "{}", stderr(&output));
    assert_eq!(records(&out).len(), 6);
    let summary: Value = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&output), stderr(&output)));
    let setting = &summary["settings"][0];
    // add twice, sub once (its second attempt got add's fix, which misses sub's bug).
    assert_eq!(setting["attempts"], 4, "{summary}");
    assert_eq!(setting["passed"], 2, "{summary}");
    assert_eq!(setting["skipped"], 2, "{summary}");
    let shapes: Vec<(String, u64, u64, u64)> = summary["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let cell = &s["cells"][0];
            (
                s["shape"].as_str().unwrap().to_string(),
                s["tasks"].as_u64().unwrap(),
                cell["passed"].as_u64().unwrap(),
                cell["attempts"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shapes,
        [
            ("cause-in-function".to_string(), 2, 2, 4),
            ("unlabelled".to_string(), 1, 0, 0)
        ],
        "{summary}"
    );
    assert_eq!(summary["tasks"][0]["shape"], "cause-in-function");
}

#[tokio::test]
async fn compare_runs_each_task_under_each_value_side_by_side() {
    let h = Harness::new();
    let suite = make_suite(h.repo());
    let out = h.data.path().join("compare");
    let server = ScriptedServer::start([fix_add(), fix_add()].concat())
        .await
        .unwrap();
    let output = eval(
        &h,
        &suite.display().to_string(),
        &server.url(),
        &[
            "--only",
            "add",
            "--compare",
            "map=on,off",
            "--out",
            &out.display().to_string(),
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(server.remaining(), 0);
    let table = stdout(&output);
    let header = table
        .lines()
        .find(|l| l.starts_with("task"))
        .unwrap_or_default();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["task", "map=on", "map=off"],
        "{table}"
    );
    let row = table
        .lines()
        .find(|l| l.starts_with("add"))
        .unwrap_or_default();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["add", "1/1", "1/1"],
        "{table}"
    );
    // The second run had no map: its first request says so.
    let requests = server.chat_requests();
    let first_user = |i: usize| {
        requests[i].json()["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "user")
            .map(|m| m["content"].to_string())
            .unwrap_or_default()
    };
    let (with_map, without) = (first_user(0), first_user(2));
    assert!(with_map.len() > without.len(), "{with_map}\n---\n{without}");
    // `map` is the old name of the piece: it works, and says what to write instead.
    assert_eq!(
        stderr(&output)
            .matches("warning: --compare map is deprecated: use --compare assist:map=on,off")
            .count(),
        1,
        "{}",
        stderr(&output)
    );
}

#[tokio::test]
async fn compare_takes_a_piece_of_the_help_by_its_name() {
    let h = Harness::new();
    let suite = make_suite(h.repo());
    let out = h.data.path().join("compare");
    let server = ScriptedServer::start([fix_add(), fix_add()].concat())
        .await
        .unwrap();
    let output = eval(
        &h,
        &suite.display().to_string(),
        &server.url(),
        &[
            "--only",
            "add",
            "--compare",
            "assist:map=on,off",
            "--out",
            &out.display().to_string(),
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("deprecated"),
        "{}",
        stderr(&output)
    );
    let table = stdout(&output);
    let header = table
        .lines()
        .find(|l| l.starts_with("task"))
        .unwrap_or_default();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["task", "assist:map=on", "assist:map=off"],
        "{table}"
    );
    let requests = server.chat_requests();
    let first_user = |i: usize| {
        requests[i].json()["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "user")
            .map(|m| m["content"].to_string())
            .unwrap_or_default()
    };
    assert!(
        first_user(0).contains("# Workspace map"),
        "{}",
        first_user(0)
    );
    assert!(
        !first_user(2).contains("# Workspace map"),
        "{}",
        first_user(2)
    );
    // A piece given and compared is refused, whatever name each has.
    let output = eval(
        &h,
        &suite.display().to_string(),
        &server.url(),
        &["--compare", "assist:map=on,off", "--assist-piece", "map=on"],
    )
    .await;
    assert_ne!(output.status.code(), Some(0));
    assert!(
        stderr(&output).contains("is given and compared"),
        "{}",
        stderr(&output)
    );
}

/// Whether the conversations directory holds `n` conversations with a log.
fn conversations(h: &Harness) -> usize {
    std::fs::read_dir(h.data.path().join("wright/conversations"))
        .map(|dir| {
            dir.flatten()
                .filter(|e| e.path().join("events.jsonl").is_file())
                .count()
        })
        .unwrap_or(0)
}

#[tokio::test]
async fn ctrl_c_stops_the_sweep_unrecorded_and_the_next_one_goes_on() {
    let h = Harness::new();
    let suite = make_suite(h.repo());
    let out = h.data.path().join("stopped");
    // `sub`'s model takes its time: Ctrl-C comes while its run waits.
    let slow = Reply::Delayed(
        std::time::Duration::from_secs(60),
        Box::new(reply().call("finish", json!({"message": "never"}))),
    );
    let server = ScriptedServer::start([fix_add(), vec![slow]].concat())
        .await
        .unwrap();
    // A session of its own, so Ctrl-C reaches eval and its runs as a terminal's would.
    let mut child = tokio::process::Command::new("setsid")
        .arg(env!("CARGO_BIN_EXE_wright"))
        .args([
            "eval",
            &suite.display().to_string(),
            "--base-url",
            &server.url(),
            "--model",
            "test-model",
            "--out",
            &out.display().to_string(),
        ])
        .current_dir(h.repo())
        .env("XDG_DATA_HOME", h.data.path())
        .env("XDG_CACHE_HOME", h.data.path().join("cache"))
        .env("XDG_CONFIG_HOME", h.data.path().join("config"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while conversations(&h) < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "sub's run never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let group = nix::unistd::Pid::from_raw(-(child.id().unwrap() as i32));
    nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGINT).unwrap();
    let output = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        let status = child.wait().await.unwrap();
        let mut said = String::new();
        use tokio::io::AsyncReadExt;
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut said)
            .await
            .unwrap();
        (status, said)
    })
    .await
    .expect("eval did not stop after Ctrl-C");
    assert_eq!(output.0.code(), Some(130), "{}", output.1);
    assert!(output.1.contains("--out"), "{}", output.1);
    // Only the attempt that ended is recorded.
    let recorded = records(&out);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0]["task"], "add");

    // The same command goes on: add is not run again, sub and gone are.
    let fix_sub = vec![
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "calc.py", "old_str": "a + b", "new_str": "a - b"}),
        ),
        reply().call("finish", json!({"message": "sub added; it subtracts now."})),
    ];
    let again = ScriptedServer::start(fix_sub).await.unwrap();
    let output = eval(
        &h,
        &suite.display().to_string(),
        &again.url(),
        &["--out", &out.display().to_string()],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(again.remaining(), 0);
    let verdicts: Vec<(String, String)> = records(&out)
        .iter()
        .map(|r| (r["task"].to_string(), r["verdict"].to_string()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("\"add\"".into(), "\"passed\"".into()),
            ("\"sub\"".into(), "\"passed\"".into()),
            ("\"gone\"".into(), "\"skipped\"".into())
        ]
    );
}

#[tokio::test]
async fn parallel_attempts_each_get_their_own_repository() {
    let h = Harness::new();
    let suite = make_suite(h.repo());
    let out = h.data.path().join("parallel");
    // Whichever run asks first, each reply fits the run that asks.
    let fitting = || {
        wright_testkit::reacting(|last| {
            let fix = |old: &str, new: &str| {
                reply().call(
                    "file_editor",
                    json!({"command": "str_replace", "path": "calc.py", "old_str": old, "new_str": new}),
                )
            };
            if last.contains("test_add fails") {
                fix("a - b", "a + b")
            } else if last.contains("test_sub fails") {
                fix("a + b", "a - b")
            } else {
                reply().call("finish", json!({"message": "fixed"}))
            }
        })
    };
    let server = ScriptedServer::start((0..4).map(|_| fitting()).collect())
        .await
        .unwrap();
    let output = eval(
        &h,
        &suite.display().to_string(),
        &server.url(),
        &["-j", "2", "--out", &out.display().to_string(), "--json"],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(server.remaining(), 0);
    let summary: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(summary["settings"][0]["passed"], 2, "{summary}");
    assert_eq!(records(&out).len(), 3);
}

#[tokio::test]
async fn an_exercism_exercise_is_asked_from_its_docs_without_its_example_solution() {
    let h = Harness::new();
    let ex = h.repo().join("python/exercises/practice/two-fer");
    std::fs::create_dir_all(ex.join(".docs")).unwrap();
    std::fs::create_dir_all(ex.join(".meta")).unwrap();
    std::fs::write(
        ex.join(".docs/instructions.md"),
        "Two-fer: `two_fer(name)` returns \"One for NAME, one for me.\"",
    )
    .unwrap();
    std::fs::write(
        ex.join(".meta/config.json"),
        r#"{"files": {"solution": ["two_fer.py"], "test": ["two_fer_test.py"], "example": [".meta/example.py"]}}"#,
    )
    .unwrap();
    std::fs::write(
        ex.join(".meta/example.py"),
        "def two_fer(name='you'):\n    return f'One for {name}, one for me.'\n",
    )
    .unwrap();
    std::fs::write(
        ex.join("two_fer.py"),
        "def two_fer(name='you'):\n    pass\n",
    )
    .unwrap();
    std::fs::write(
        ex.join("two_fer_test.py"),
        "import unittest\nfrom two_fer import two_fer\n\n\nclass T(unittest.TestCase):\n    def test_name(self):\n        self.assertEqual(two_fer('Bob'), 'One for Bob, one for me.')\n",
    )
    .unwrap();
    let script = vec![
        reply().call(
            "terminal",
            json!({"command": "test -e .meta && echo HAS-META || echo NO-META"}),
        ),
        wright_testkit::reacting(|last| {
            // Only a run without the example solution gets the fix.
            let body = if last.contains("NO-META") {
                "    return f'One for {name}, one for me.'"
            } else {
                "    pass"
            };
            reply().call(
                "file_editor",
                json!({"command": "str_replace", "path": "two_fer.py", "old_str": "    pass", "new_str": body}),
            )
        }),
        reply().call(
            "finish",
            json!({"message": "two_fer returns the sentence."}),
        ),
    ];
    let server = ScriptedServer::start(script).await.unwrap();
    let out = h.data.path().join("exercism");
    let output = eval(
        &h,
        &h.repo().display().to_string(),
        &server.url(),
        &["--out", &out.display().to_string()],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(server.remaining(), 0);
    let recorded = records(&out);
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0]["task"], "python/two-fer");
    assert_eq!(recorded[0]["verdict"], "passed", "{}", recorded[0]);
    let first = server.chat_requests()[0].json().to_string();
    assert!(first.contains("Two-fer: `two_fer(name)`"), "{first}");
    assert!(
        first.contains("Solve this exercise by editing two_fer.py"),
        "{first}"
    );
}

#[tokio::test]
async fn a_run_that_cannot_start_stops_the_sweep_and_records_nothing() {
    let h = Harness::new();
    let suite = make_suite(h.repo());
    let out = h.data.path().join("nothing");
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let output = eval(
        &h,
        &suite.display().to_string(),
        &url,
        &["--out", &out.display().to_string()],
    )
    .await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("`wright run` did not start"),
        "{}",
        stderr(&output)
    );
    assert_eq!(records(&out).len(), 0);
}

/// `--api-key` as `run` takes it: every run sends it to the server.
#[tokio::test]
async fn the_api_key_reaches_every_run() {
    let h = Harness::new();
    let suite = make_suite(h.repo());
    let out = h.data.path().join("keyed");
    let server = ScriptedServer::start(fix_add()).await.unwrap();
    let output = eval(
        &h,
        &suite.display().to_string(),
        &server.url(),
        &[
            "--api-key",
            "s3cret",
            "--only",
            "add",
            "--out",
            &out.display().to_string(),
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let requests = server.requests();
    assert!(!requests.is_empty());
    for request in &requests {
        assert_eq!(
            request.authorization.as_deref(),
            Some("Bearer s3cret"),
            "{}",
            request.path
        );
    }
}
