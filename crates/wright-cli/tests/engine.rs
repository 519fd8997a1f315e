//! `--model-file`: the agent loop end to end on wright's embedded engine, with a tiny GGUF
//! model of random weights written by the test (no server, no download). The grammar
//! holds every reply to a valid call of a declared tool, and each step reads only the
//! tokens added since the last one.

use crate::common::stderr;
use crate::common::Harness;
use wright_testkit::git;
use wright_testkit::tiny_gguf::write_tiny_gguf;
use wright_testkit::tiny_gguf::TinyModel;

/// The tests' tiny GGUF model in a directory of its own (kept while the directory is).
pub(crate) fn tiny_model() -> (tempfile::TempDir, std::path::PathBuf) {
    let models = tempfile::tempdir().unwrap();
    let file = models.path().join("wright-tiny.gguf");
    write_tiny_gguf(&file, &TinyModel::default()).unwrap();
    (models, file)
}

/// Each step of a conversation's log reads only the tokens added since the step before:
/// its cached tokens are the last step's prompt and reply. Allowed for: a condensation
/// between them (the condenser's own request went between: the conversation's cache was
/// parked, and its shared start comes back) and a reply cut at `cap` tokens (not in the
/// history as generated: all before it is reused).
pub(crate) fn assert_each_step_reads_only_new_tokens(
    values: &[serde_json::Value],
    cap: u64,
    said: &str,
) {
    let mut usages: Vec<(&serde_json::Value, bool)> = Vec::new();
    let mut condensed = false;
    for value in values {
        match value["kind"].as_str() {
            Some("condensation") => condensed = true,
            Some("usage") => {
                usages.push((value, condensed));
                condensed = false;
            }
            _ => {}
        }
    }
    assert!(usages.len() >= 2, "{said}");
    for pair in usages.windows(2) {
        let ((first, _), (second, condensed)) = (pair[0], pair[1]);
        let prompt = first["prompt_tokens"].as_u64().unwrap();
        let before = prompt + first["completion_tokens"].as_u64().unwrap();
        let cached = second["cached_tokens"].as_u64().unwrap();
        if condensed {
            assert!(cached >= 1000, "{pair:?}");
        } else if first["completion_tokens"].as_u64() == Some(cap) {
            assert!(cached >= prompt, "{pair:?}");
        } else {
            assert_eq!(
                cached, before,
                "a step read again what the last one had read: {pair:?}"
            );
        }
    }
}

pub(crate) fn repo(h: &Harness) {
    std::fs::write(h.repo().join("notes.txt"), "hello\n").unwrap();
    git(h.repo(), &["init", "-q"]);
    git(h.repo(), &["add", "-A"]);
    git(h.repo(), &["commit", "-qm", "start"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_on_the_embedded_engine_makes_only_valid_calls_and_reads_only_new_tokens() {
    let h = Harness::new();
    repo(&h);
    let (_models, file) = tiny_model();
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
    assert_each_step_reads_only_new_tokens(&values, 300, &said);
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

/// Whether something already listens on one of the ports discovery tries (a developer's
/// own Ollama): then discovery finds it first, as it should, and these tests cannot see
/// the fallback.
pub(crate) fn a_local_server_runs() -> bool {
    wright_llm::LOCAL_SERVERS.iter().any(|(_, port)| {
        std::net::TcpStream::connect_timeout(
            &std::net::SocketAddr::from(([127, 0, 0, 1], *port)),
            std::time::Duration::from_millis(200),
        )
        .is_ok()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_server_and_nothing_named_the_stored_model_runs_in_the_engine() {
    if a_local_server_runs() {
        eprintln!("!!!!!!!! SKIPPED: a model server listens on a usual local port !!!!!!!!");
        return;
    }
    let h = Harness::new();
    repo(&h);
    let models = tempfile::tempdir().unwrap();
    let store = models.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    write_tiny_gguf(&store.join("wright-tiny.gguf"), &TinyModel::default()).unwrap();
    let env = [("WRIGHT_MODELS_DIR", store.to_str().unwrap())];
    let output = h
        .wright(
            &[
                "run",
                "--context-window",
                "4096",
                "--max-steps",
                "2",
                "--max-reply-tokens",
                "100",
                "look at notes.txt",
            ],
            &env,
        )
        .await;
    let said = stderr(&output);
    assert!(said.contains("wright's embedded engine"), "{said}");
    assert!(said.contains("wright-tiny"), "{said}");
    // A step ran on the engine (what the random model then wrote is not the point here).
    assert!(
        h.events()
            .iter()
            .any(|e| { serde_json::to_value(e).unwrap()["kind"] == "usage" }),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_server_and_no_model_the_user_is_told_how_to_get_one_and_pull_tries() {
    if a_local_server_runs() {
        eprintln!("!!!!!!!! SKIPPED: a model server listens on a usual local port !!!!!!!!");
        return;
    }
    let h = Harness::new();
    repo(&h);
    let models = tempfile::tempdir().unwrap();
    let store = models.path().join("store");
    let env = [
        ("WRIGHT_MODELS_DIR", store.to_str().unwrap()),
        // Nothing listens there: the download fails at once, and the test never goes
        // to the network.
        ("WRIGHT_MODELS_BASE_URL", "http://127.0.0.1:9"),
    ];
    let refused = h.wright(&["run", "fix the tests"], &env).await;
    let said = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    for part in [
        "nothing answered",
        "--pull",
        "wright model add",
        "--base-url",
    ] {
        assert!(said.contains(part), "{part}: {said}");
    }
    assert!(!store.exists(), "looking made an empty store: {said}");

    let pulled = h.wright(&["run", "--pull", "fix the tests"], &env).await;
    let said = stderr(&pulled);
    assert_ne!(pulled.status.code(), Some(0), "{said}");
    assert!(said.contains("downloading qwen2.5-coder-1.5b"), "{said}");
    assert!(said.contains("127.0.0.1:9"), "{said}");
    let conversations = h.data.path().join("wright/conversations");
    let started = std::fs::read_dir(&conversations).map_or(0, |dir| dir.count());
    assert_eq!(started, 0, "a run started without a model: {said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_reports_the_engine_its_model_file_and_the_memory_it_needs() {
    let h = Harness::new();
    repo(&h);
    let (_models, file) = tiny_model();
    let output = h
        .wright(
            &[
                "doctor",
                "--model-file",
                file.to_str().unwrap(),
                "--context-window",
                "2048",
                "--json",
            ],
            &[],
        )
        .await;
    let said = stderr(&output);
    let report: serde_json::Value = serde_json::from_str(&crate::common::stdout(&output))
        .unwrap_or_else(|err| panic!("{err}: {}\n{said}", crate::common::stdout(&output)));
    assert_eq!(
        report["server"]["kind"], "wright's embedded engine",
        "{report}"
    );
    assert_eq!(report["engine"]["window"], 2048, "{report}");
    assert!(
        report["engine"]["threads"].as_u64().unwrap() >= 1,
        "{report}"
    );
    assert_eq!(
        report["model_file"]["path"].as_str(),
        file.to_str(),
        "{report}"
    );
    let memory = &report["engine_memory"];
    assert_eq!(
        memory["model"].as_u64(),
        Some(std::fs::metadata(&file).unwrap().len()),
        "{report}"
    );
    assert!(memory["cache"].as_u64().unwrap() > 0, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_run_reads_the_cache_it_saved_instead_of_its_whole_history() {
    let h = Harness::new();
    repo(&h);
    let (_models, file) = tiny_model();
    let file = file.to_str().unwrap();
    let common = [
        "--model-file",
        file,
        "--context-window",
        "8192",
        "--max-reply-tokens",
        "120",
        "--max-steps",
        "2",
    ];
    let mut first = vec!["run"];
    first.extend(common);
    first.push("look at notes.txt");
    let output = h.wright(&first, &[]).await;
    let said = stderr(&output);
    let id = h.conversation_id();
    let dir = h.data.path().join("wright/conversations").join(&id);
    let saved = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("engine-cache-"));
    assert!(saved, "no cache saved in {}: {said}", dir.display());
    let usage = |events: &[serde_json::Value]| -> Vec<(u64, u64, u64)> {
        events
            .iter()
            .filter(|v| v["kind"] == "usage")
            .map(|v| {
                (
                    v["prompt_tokens"].as_u64().unwrap(),
                    v["completion_tokens"].as_u64().unwrap(),
                    v["cached_tokens"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let values = |h: &Harness| -> Vec<serde_json::Value> {
        h.events()
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect()
    };
    let before = usage(&values(&h));
    // A message, whether the tiny model called finish (which needs one) or was stopped.
    let mut again = vec!["resume", id.as_str()];
    again.extend(common);
    again.push("go on");
    let resumed = h.wright(&again, &[]).await;
    let said = stderr(&resumed);
    let after = usage(&values(&h));
    assert!(after.len() > before.len(), "{said}");
    let (prompt, completion, _) = *before.last().unwrap();
    let (new_prompt, _, cached) = after[before.len()];
    // A last reply cut at the cap is not in the history as generated: then all before it.
    let held = if completion >= 120 {
        prompt
    } else {
        prompt + completion
    };
    assert!(
        cached + 2 >= held,
        "resumed, the first step read {} of its {new_prompt} prompt tokens again (the cache held {}): {said}",
        new_prompt - cached,
        held
    );
}
