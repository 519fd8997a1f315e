//! The workspace map: a new conversation's first message starts with the repository's
//! files, languages, test command and recent commits, read from the start commit (not the
//! work tree); later requests repeat it byte for byte; `--map off` leaves it out.

use crate::common::first_user_message;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

fn python_repo(h: &Harness) {
    let repo = h.repo();
    std::fs::create_dir_all(repo.join("src/app")).unwrap();
    std::fs::create_dir_all(repo.join("tests")).unwrap();
    std::fs::write(repo.join("pyproject.toml"), "[tool.pytest.ini_options]\n").unwrap();
    std::fs::write(repo.join("src/app/export.py"), "def run():\n    pass\n").unwrap();
    std::fs::write(
        repo.join("tests/test_export.py"),
        "def test_run():\n    pass\n",
    )
    .unwrap();
    git(repo, &["init", "-q"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "Add the exporter"]);
    // Not tracked: the map lists the commit's files, not the work tree's.
    std::fs::write(repo.join("scratch-notes.txt"), "mine\n").unwrap();
}

fn script() -> Vec<wright_testkit::Reply> {
    vec![
        reply().call("terminal", json!({"command": "true"})),
        reply().call("finish", json!({"message": "looked"})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_request_carries_the_map_and_later_ones_repeat_it() {
    let h = Harness::new();
    python_repo(&h);
    let server = ScriptedServer::start(script()).await.unwrap();
    let output = h.run(&server.url(), "the export is wrong", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let requests = server.chat_requests();
    let first = first_user_message(&requests[0].json());
    for part in [
        "# Workspace map",
        "Languages: Python (2 files)",
        "Test: python3 -m pytest (from pyproject.toml)",
        "src/app/: export.py",
        "tests/: test_export.py",
        "Recent commits:",
        "Add the exporter",
    ] {
        assert!(first.contains(part), "{part} is not in:\n{first}");
    }
    assert!(!first.contains("scratch-notes.txt"), "{first}");
    assert!(
        first.ends_with("\n\n# Task\nthe export is wrong"),
        "{first}"
    );
    // The prefix stays: the second request's first message is the same bytes.
    assert_eq!(first_user_message(&requests[1].json()), first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn map_off_leaves_it_out() {
    let h = Harness::new();
    python_repo(&h);
    let server = ScriptedServer::start(script()).await.unwrap();
    let output = h
        .run(&server.url(), "the export is wrong", &["--map", "off"])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let first = first_user_message(&server.chat_requests()[0].json());
    assert_eq!(first, "the export is wrong");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_directory_is_mapped_without_following_links() {
    let h = Harness::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret-name.txt"), "s").unwrap();
    std::fs::write(h.repo().join("Makefile"), "test:\n\t./check.sh\n").unwrap();
    std::fs::write(h.repo().join("main.go"), "package main\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), h.repo().join("elsewhere")).unwrap();
    let server = ScriptedServer::start(script()).await.unwrap();
    let output = h.run(&server.url(), "look", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let first = first_user_message(&server.chat_requests()[0].json());
    assert!(
        first.contains("# Workspace map (the files at the start"),
        "{first}"
    );
    assert!(first.contains("Test: make test (from Makefile)"), "{first}");
    assert!(first.contains("./: Makefile main.go"), "{first}");
    assert!(!first.contains("secret-name"), "{first}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_map_value_is_refused_before_anything_runs() {
    let h = Harness::new();
    let output = h
        .run("http://127.0.0.1:9", "look", &["--map", "maybe"])
        .await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--map"), "{}", stderr(&output));
}
