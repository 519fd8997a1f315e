//! wright's own scratch files (each command's script, saved long outputs): the agent must
//! not be able to turn them into a way of writing where it cannot, and their size obeys
//! the same limit as the agent's own files.

use super::Outside;
use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reacting;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

async fn run_script(h: &Harness, script: Vec<wright_testkit::Reply>, extra: &[&str]) {
    let server = ScriptedServer::start(script).await.unwrap();
    let output = h.run(&server.url(), "scratch attacks", extra).await;
    assert!(output.status.success(), "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_file_cannot_be_swapped_for_a_symlink() {
    let h = Harness::new();
    let outside = Outside::new();
    let target = outside.target().display().to_string();
    // The running command's own file is $BASH_SOURCE: swap it for a link to a file outside,
    // so that the next command's text would be written there.
    let swap = format!(
        r#"f=$BASH_SOURCE; rm -f "$f" 2>/dev/null && ln -s {target} "$f" 2>/dev/null && echo swapped || echo refused"#
    );
    run_script(
        &h,
        vec![
            reply().call("terminal", json!({ "command": swap })),
            reply().call("terminal", json!({"command": "echo second command"})),
            reply().call("finish", json!({"message": "done"})),
        ],
        &[],
    )
    .await;
    let obs = observations(&h.events());
    assert_eq!(obs[0]["output"], "refused");
    assert_eq!(obs[1]["output"], "second command");
    outside.assert_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_outputs_cannot_be_redirected_by_symlinks() {
    let h = Harness::new();
    let outside = Outside::new();
    let target = outside.target().display().to_string();
    // Plant links at every name a saved output could take next to the command file, then
    // print enough to be saved.
    let plant = format!(
        r#"d=$(dirname "$BASH_SOURCE"); n=0; for i in $(seq 1 50); do ln -sf {target} "$d/output-$i.txt" 2>/dev/null && n=$((n+1)); done; echo "planted $n"; seq 1 200000"#
    );
    run_script(
        &h,
        vec![
            reply().call("terminal", json!({ "command": plant })),
            reply().call("finish", json!({"message": "done"})),
        ],
        &[],
    )
    .await;
    let obs = observations(&h.events());
    let text = obs[0]["output"].as_str().unwrap();
    assert!(text.starts_with("planted 0\n"), "{}", &text[..80]);
    assert!(text.contains("saved to"), "{}", &text[text.len() - 300..]);
    outside.assert_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dot_wright_symlink_leads_nowhere() {
    let h = Harness::new();
    let outside = Outside::new();
    let o = outside.display();
    let plant = format!("rm -rf .wright; ln -s {o} .wright && seq 1 200000");
    run_script(
        &h,
        vec![
            reply().call("terminal", json!({ "command": plant })),
            reply().call("terminal", json!({"command": "echo next"})),
            reply().call("finish", json!({"message": "done"})),
        ],
        &[],
    )
    .await;
    outside.assert_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_output_is_bounded_by_the_file_size_limit() {
    let h = Harness::new();
    // 30 MB of output with --max-file-size 5: the saved copy stops at 5 MiB.
    let script = vec![
        reply().call(
            "terminal",
            json!({"command": "head -c 30000000 /dev/zero | tr '\\0' a; echo"}),
        ),
        reacting(|output| {
            let path = output
                .split("saved to ")
                .nth(1)
                .and_then(|rest| rest.split([';', ']', ' ', '\n']).next())
                .unwrap_or("NOT-SAVED")
                .to_string();
            reply().call("terminal", json!({"command": format!("stat -c %s {path}")}))
        }),
        reply().call("finish", json!({"message": "done"})),
    ];
    run_script(&h, script, &["--max-file-size", "5"]).await;
    let obs = observations(&h.events());
    let first = obs[0]["output"].as_str().unwrap();
    assert!(
        first.contains("30000001 bytes"),
        "{}",
        &first[first.len() - 300..]
    );
    let size: u64 = obs[1]["output"]
        .as_str()
        .unwrap()
        .trim()
        .parse()
        .unwrap_or(u64::MAX);
    assert!(size <= 5 << 20, "the saved output is {size} bytes");
}
