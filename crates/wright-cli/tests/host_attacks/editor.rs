//! `file_editor` runs in wright's own process: a path it checked must be the path it
//! opens, even while the agent swaps directories and symlinks under it.

use super::Outside;
use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapping_a_directory_and_a_symlink_does_not_reach_outside() {
    let h = Harness::new();
    let outside = Outside::new();
    let o = outside.display();
    std::fs::write(outside.path().join("f"), "outside secret").unwrap();
    std::fs::write(outside.path().join("target.txt"), "original").unwrap();
    // A loop in the background exchanging `d` (a directory inside) and `dl` (a link to the
    // directory outside) as fast as it can, atomically (renameat2 RENAME_EXCHANGE).
    let swapper = format!(
        "mkdir -p d && echo inside > d/f && ln -sfn {o} dl && \
         (python3 -c 'import ctypes\nlibc = ctypes.CDLL(None)\nwhile True: libc.renameat2(-100, b\"d\", -100, b\"dl\", 2)' &) && echo swapping"
    );
    let mut script = vec![reply().call("terminal", json!({ "command": swapper }))];
    for n in 0..40 {
        script.push(reply().call("file_editor", json!({"command": "view", "path": "d/f"})));
        script.push(reply().call(
            "file_editor",
            json!({"command": "create", "path": format!("d/new-{n}.txt"), "file_text": "x"}),
        ));
        script.push(reply().call("file_editor", json!({"command": "view", "path": "d"})));
    }
    script.push(reply().call(
        "terminal",
        json!({"command": "pkill -f renameat2; echo stopped"}),
    ));
    script.push(reply().call("finish", json!({"message": "done"})));
    let server = ScriptedServer::start(script).await.unwrap();
    let output = h
        .run(&server.url(), "race the editor", &["--max-steps", "200"])
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let obs = observations(&h.events());
    assert_eq!(obs[0]["output"], "swapping");
    for observation in &obs {
        let text = observation["output"].as_str().unwrap();
        assert!(!text.contains("outside secret"), "read outside: {text}");
        assert!(!text.contains("target.txt"), "listed outside: {text}");
    }
    let mut names: Vec<String> = std::fs::read_dir(outside.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["f".to_string(), "target.txt".to_string()]);
}
