//! Opt-in: a real small model fixes the failing `unittest` repository.
//!
//! On a server: `WRIGHT_REAL_MODEL=1 OPENAI_BASE_URL=… OPENAI_MODEL=… cargo test -p
//! wright-cli real_model -- --nocapture` (start one with `../shared/tools/local-model.sh
//! 1.5b`). In the embedded engine: `WRIGHT_REAL_MODEL=1 WRIGHT_MODEL_FILE=FILE.gguf …`
//! (`../shared/tools/local-model.sh fetch 1.5b` prints the file's path). Not part of the
//! default run: without `WRIGHT_REAL_MODEL=1` it says so and returns.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use std::time::Duration;
use std::time::Instant;
use wright_testkit::failing_python_repo;
use wright_testkit::FIX;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_model_fixes_the_failing_test() {
    if std::env::var("WRIGHT_REAL_MODEL").as_deref() != Ok("1") {
        eprintln!("skipped: set WRIGHT_REAL_MODEL=1 (with OPENAI_BASE_URL and OPENAI_MODEL, or WRIGHT_MODEL_FILE) to run against a real model");
        return;
    }
    let (choice, label) = match (
        std::env::var("OPENAI_BASE_URL"),
        std::env::var("OPENAI_MODEL"),
    ) {
        (Ok(url), Ok(model)) => (
            vec![
                "--base-url".to_string(),
                url.clone(),
                "--model".into(),
                model.clone(),
            ],
            format!("{model} at {url}"),
        ),
        _ => {
            let file = std::env::var("WRIGHT_MODEL_FILE")
                .expect("OPENAI_BASE_URL and OPENAI_MODEL, or WRIGHT_MODEL_FILE");
            (
                vec!["--model-file".to_string(), file.clone()],
                format!("{file} in the embedded engine"),
            )
        }
    };
    let h = Harness::new();
    failing_python_repo(h.repo());
    let started = Instant::now();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    command
        .args(["run", "--in-place", "--max-steps", "25"])
        .args(&choice)
        .arg("The test test_export_csv in test_export.py fails. Find the bug in export.py and fix it, then run the tests with: python3 -m unittest")
        .current_dir(h.repo())
        .env("XDG_DATA_HOME", h.data.path())
        .env("XDG_CACHE_HOME", h.data.path().join("cache"))
        .env("XDG_CONFIG_HOME", h.data.path().join("config"))
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(3600), command.output())
        .await
        .expect("the real-model run took over an hour")
        .expect("cannot start wright");
    let elapsed = started.elapsed();
    let events = h.events();
    let usage: Vec<serde_json::Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|v| v["kind"] == "usage")
        .collect();
    eprintln!("{}\n{}", stderr(&output), stdout(&output));
    eprintln!("real model: {label}");
    eprintln!(
        "steps: {}, wall time: {:.0} s, exit: {:?}",
        usage.len(),
        elapsed.as_secs_f64(),
        output.status.code()
    );
    for u in &usage {
        let prefill_ms = u["prefill_ms"].as_f64().unwrap_or(0.0);
        let tokens = u["prompt_tokens"].as_u64().unwrap_or(0);
        let cached = u["cached_tokens"].as_u64().unwrap_or(0);
        eprintln!(
            "  step {:>2}: prompt {:>5} tokens ({:>5} cached), prefill {:>6.0} ms, generated {:>4} tokens in {:>6.0} ms",
            u["step"], tokens, cached, prefill_ms, u["completion_tokens"], u["generation_ms"].as_f64().unwrap_or(0.0)
        );
    }
    let source = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    let tests = std::process::Command::new("python3")
        .args(["-m", "unittest"])
        .current_dir(h.repo())
        .output()
        .unwrap();
    eprintln!(
        "fixed: {}, tests pass: {}",
        source.contains(FIX),
        tests.status.success()
    );
    assert!(
        tests.status.success(),
        "the model did not fix the test; export.py:\n{source}"
    );
}
