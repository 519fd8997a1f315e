//! Exhaustion through wright's own process: what the agent leaves for wright to read
//! (a link to /dev/zero, a 200 MB line) must not swell it, and the disk the agent fills
//! is bounded by `--max-disk`.

use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// wright's address space in these tests: a backstop, far below what reading the traps
/// would take.
const ADDRESS_SPACE: u64 = 2 << 30;
/// The most resident memory wright may reach in them (it needs about 20 MB).
const PEAK_KIB: u64 = 200 << 10;

/// Runs the script with wright's memory bounded and measured; it must succeed and stay
/// under `PEAK_KIB`.
async fn run_bounded(h: &Harness, script: Vec<wright_testkit::Reply>, task: &str) {
    let server = ScriptedServer::start(script).await.unwrap();
    let url = server.url();
    let args = ["run", "--base-url", &url, "--model", "test-model", task];
    let (output, peak) = h.wright_measured(ADDRESS_SPACE, &args, &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(peak < PEAK_KIB, "wright grew to {peak} KiB");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_does_not_read_through_a_link_to_an_endless_file() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let script = vec![
        reply().call(
            "terminal",
            json!({"command": "ln -s /dev/zero notes.txt && mkfifo waiting && echo fixed >> export.py && echo ok"}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ];
    run_bounded(&h, script, "leave traps").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn viewing_a_huge_one_line_file_is_bounded() {
    let h = Harness::new();
    let script = vec![
        reply().call(
            "terminal",
            json!({"command": "head -c 200000000 /dev/zero | tr '\\0' a > big.txt && echo made"}),
        ),
        reply().call("file_editor", json!({"command": "view", "path": "big.txt"})),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "big.txt", "old_str": "aaa", "new_str": "b"}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ];
    run_bounded(&h, script, "view it").await;
    let obs = observations(&h.events());
    let viewed = obs[1]["output"].as_str().unwrap();
    assert!(viewed.len() < 20_000, "{} bytes shown", viewed.len());
    assert!(viewed.contains("cut"), "{}", &viewed[viewed.len() - 200..]);
    assert_eq!(obs[2]["is_error"], true);
    assert!(
        obs[2]["output"].as_str().unwrap().contains("too large"),
        "{}",
        obs[2]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filling_the_disk_stops_the_run() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "fallocate -l 30M a.bin && fallocate -l 30M b.bin && echo filled"}),
        ),
        reply().call("terminal", json!({"command": "echo never runs"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h
        .run(&server.url(), "fill the disk", &["--max-disk", "50"])
        .await;
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let said = format!("{}{}", crate::common::stdout(&output), stderr(&output));
    assert!(
        said.contains("stopped: the agent's files grew by"),
        "{said}"
    );
    assert!(said.contains("--max-disk"), "{said}");
    assert_eq!(
        server.remaining(),
        2,
        "the run went on after filling the disk"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_command_outputs_count_against_the_disk_limit() {
    let h = Harness::new();
    // 8 MB of output, with a 1 MiB disk limit: wright saves no more than its share of
    // that limit (one of the 16 outputs it keeps at once), and says so.
    let server = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "head -c 8000000 /dev/zero | tr '\\0' x"}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h
        .run(&server.url(), "print a lot", &["--max-disk", "1"])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let shown = observations(&h.events())[0]["output"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        shown.contains("8000000 bytes (1 line) in all, its first 65536 bytes saved to"),
        "{shown}"
    );
}
