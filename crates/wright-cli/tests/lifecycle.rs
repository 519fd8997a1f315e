//! A run's life as other processes see it: one writer per conversation (and per checkout
//! worked in place), signals recorded as stops, a killed run shown as interrupted and the
//! leftovers of dead runs reaped by the next start.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use std::time::Duration;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

/// A script whose second reply takes `secs` seconds: time for a test to act on a live run.
fn slow(secs: u64) -> Vec<Reply> {
    vec![
        reply().call("terminal", json!({"command": "echo started"})),
        Reply::Delayed(
            Duration::from_secs(secs),
            Box::new(reply().call("finish", json!({"message": "done"}))),
        ),
        reply().call("finish", json!({"message": "done"})),
        reply().call("finish", json!({"message": "done"})),
    ]
}

/// Waits until the run's log shows its first observation (the run is live, mid-step).
async fn wait_until_live(h: &Harness) -> String {
    let dir = h.data.path().join("wright/conversations");
    for _ in 0..300 {
        if let Some(entry) = std::fs::read_dir(&dir).ok().and_then(|mut d| d.next()) {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(path.join("events.jsonl")).unwrap_or_default();
            if text.contains("\"kind\":\"observation\"") {
                return path.file_name().unwrap().to_string_lossy().into_owned();
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the run never got going");
}

fn signal(child: &tokio::process::Child, signal: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, signal).unwrap();
}

fn last_state(h: &Harness) -> (AgentState, String) {
    h.events()
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            EventBody::State { state, reason, .. } => {
                Some((*state, reason.clone().unwrap_or_default()))
            }
            _ => None,
        })
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_writer_per_conversation_and_sigterm_is_a_stop() {
    let h = Harness::new();
    wright_testkit::git(h.repo(), &["init", "-q"]);
    std::fs::write(h.repo().join("a"), "a\n").unwrap();
    wright_testkit::git(h.repo(), &["add", "-A"]);
    wright_testkit::git(
        h.repo(),
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@e",
            "commit",
            "-qm",
            "a",
        ],
    );
    let server = ScriptedServer::start(slow(20)).await.unwrap();
    let url = server.url();
    let child = h.spawn_wright(
        &["run", "--base-url", &url, "--model", "test-model", "go"],
        &[],
    );
    let id = wait_until_live(&h).await;

    let second = h.resume(&url, &id, "me too").await;
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    let pid = child.id().unwrap();
    assert!(
        stderr(&second).contains(&format!("conversation {id} is running (pid {pid})")),
        "{}",
        stderr(&second)
    );
    let applied = h.wright(&["apply", &id], &[]).await;
    assert!(
        stderr(&applied).contains("is running"),
        "{}",
        stderr(&applied)
    );
    assert!(stdout(&h.wright(&["ls"], &[]).await).contains(" running "));

    signal(&child, nix::sys::signal::Signal::SIGTERM);
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(output.status.code(), Some(143), "{}", stderr(&output));
    assert_eq!(
        last_state(&h),
        (AgentState::Stopped, "stopped by SIGTERM".to_string())
    );
    // One writer: the ids are dense and unique.
    let ids: Vec<u64> = h.events().iter().map(|e| e.id).collect();
    assert_eq!(ids, (0..ids.len() as u64).collect::<Vec<_>>());
    assert!(stdout(&h.wright(&["ls"], &[]).await).contains(" stopped "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_reads_interrupted_and_the_next_start_reaps_what_it_left() {
    let h = Harness::new();
    let server = ScriptedServer::start(slow(60)).await.unwrap();
    let url = server.url();
    let child = h.spawn_wright(
        &["run", "--base-url", &url, "--model", "test-model", "go"],
        &[],
    );
    let id = wait_until_live(&h).await;
    let private_dirs = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("wright-{id}-")))
            })
            .collect()
    };
    let left = private_dirs();
    assert_eq!(left.len(), 1, "{left:?}");
    signal(&child, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait_with_output().await;
    assert!(left[0].exists(), "nothing was left to reap");
    let listed = stdout(&h.wright(&["ls"], &[]).await);
    assert!(listed.contains(" interrupted "), "{listed}");

    let server = ScriptedServer::start(vec![reply().call("finish", json!({"message": "ok"}))])
        .await
        .unwrap();
    let resumed = h.resume(&server.url(), &id, "go on").await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert!(
        !left[0].exists(),
        "the dead run's private directory is still there"
    );
    assert!(private_dirs().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_is_recorded_as_a_stop() {
    let h = Harness::new();
    let server = ScriptedServer::start(slow(20)).await.unwrap();
    let url = server.url();
    let child = h.spawn_wright(
        &["run", "--base-url", &url, "--model", "test-model", "go"],
        &[],
    );
    wait_until_live(&h).await;
    signal(&child, nix::sys::signal::Signal::SIGHUP);
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(output.status.code(), Some(129), "{}", stderr(&output));
    assert_eq!(
        last_state(&h),
        (
            AgentState::Stopped,
            "stopped by SIGHUP (the terminal closed)".to_string()
        )
    );
}
