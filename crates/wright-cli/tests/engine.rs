//! `--model-file`: the agent loop end to end on wright's embedded engine, with a tiny GGUF
//! model of random weights written by the test (no server, no download). The grammar
//! holds every reply to a valid call of a declared tool, and each step reads only the
//! tokens added since the last one.

use crate::common::stderr;
use crate::common::Harness;
use wright_testkit::git;
use wright_testkit::tiny_gguf::write_tiny_gguf;
use wright_testkit::tiny_gguf::TinyModel;

fn repo(h: &Harness) {
    std::fs::write(h.repo().join("notes.txt"), "hello\n").unwrap();
    git(h.repo(), &["init", "-q"]);
    git(h.repo(), &["add", "-A"]);
    git(h.repo(), &["commit", "-qm", "start"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_on_the_embedded_engine_makes_only_valid_calls_and_reads_only_new_tokens() {
    let h = Harness::new();
    repo(&h);
    let models = tempfile::tempdir().unwrap();
    let file = models.path().join("wright-tiny.gguf");
    write_tiny_gguf(&file, &TinyModel::default()).unwrap();
    let output = h
        .wright(
            &[
                "run",
                "--model-file",
                file.to_str().unwrap(),
                "--context-window",
                "8192",
                "--max-steps",
                "8",
                "--max-reply-tokens",
                "300",
                "--temperature",
                "1.0",
                "look at notes.txt",
            ],
            &[],
        )
        .await;
    let said = stderr(&output);
    assert!(said.contains("wright's embedded engine"), "{said}");
    let events = h.events();
    let values: Vec<serde_json::Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    let actions: Vec<&serde_json::Value> =
        values.iter().filter(|v| v["kind"] == "action").collect();
    assert!(!actions.is_empty(), "{said}");
    for action in &actions {
        let tool = action["tool"].as_str().unwrap_or_default();
        assert!(
            [
                "terminal",
                "file_editor",
                "think",
                "finish",
                "grep",
                "glob",
                "task_tracker"
            ]
            .contains(&tool),
            "not a declared tool: {action}"
        );
    }
    assert!(
        !values.iter().any(|v| v.to_string().contains("malformed")),
        "a reply was not a valid call: {said}"
    );
    let usages: Vec<&serde_json::Value> = values.iter().filter(|v| v["kind"] == "usage").collect();
    assert!(usages.len() >= 2, "{said}");
    for pair in usages.windows(2) {
        let before = pair[0]["prompt_tokens"].as_u64().unwrap()
            + pair[0]["completion_tokens"].as_u64().unwrap();
        let cached = pair[1]["cached_tokens"].as_u64().unwrap();
        assert_eq!(
            cached, before,
            "a step read again what the last one had read: {pair:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_file_is_added_listed_run_by_name_and_removed() {
    let h = Harness::new();
    let models = tempfile::tempdir().unwrap();
    let store = models.path().join("store");
    let env = [("WRIGHT_MODELS_DIR", store.to_str().unwrap())];
    let file = models.path().join("wright-tiny.gguf");
    write_tiny_gguf(&file, &TinyModel::default()).unwrap();
    let added = h
        .wright(&["model", "add", file.to_str().unwrap()], &env)
        .await;
    assert_eq!(added.status.code(), Some(0), "{}", stderr(&added));
    assert!(store.join("wright-tiny.gguf").is_file());
    let listed = h.wright(&["model", "ls"], &env).await;
    assert!(
        crate::common::stdout(&listed).contains("wright-tiny"),
        "{}",
        stderr(&listed)
    );
    let not_gguf = models.path().join("page.gguf");
    std::fs::write(&not_gguf, "<html>not a model</html>").unwrap();
    let refused = h
        .wright(&["model", "add", not_gguf.to_str().unwrap()], &env)
        .await;
    assert_ne!(refused.status.code(), Some(0));
    assert!(!store.join("page.gguf").exists());
    let removed = h.wright(&["model", "rm", "wright-tiny"], &env).await;
    assert_eq!(removed.status.code(), Some(0), "{}", stderr(&removed));
    assert!(!store.join("wright-tiny.gguf").exists());
}
