//! In the user's own tree the container's seccomp profile is an allow-list: the ordinary
//! work of a build and a test run (a shell and its pipes, git, archives, a compiled
//! program) goes on, while a call outside the list is refused, and a socket's family is
//! read as the kernel reads it (upper bits set do not pass `AF_UNIX`). The probe is a
//! static C program compiled here and run in the container.

use super::committed_notes;
use super::docker_or_skip;
use super::IMAGE;
use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

const PROBE: &str = r#"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static void say(const char *what, long result) {
    printf("%s: %s\n", what, result < 0 ? strerror(errno) : "allowed");
}

int main(void) {
    /* sysfs(3): how many filesystem types; in no list of a container's needs. */
    say("sysfs", syscall(SYS_sysfs, 3));
    /* AF_UNIX with bits the kernel does not read above it. */
    say("unix socket, upper bits set", syscall(SYS_socket, (long)((1UL << 32) | AF_UNIX), SOCK_STREAM, 0));
    say("unix socket", socket(AF_UNIX, SOCK_STREAM, 0));
    say("inet socket", socket(AF_INET, SOCK_STREAM, 0));
    int pair[2];
    say("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, pair));
    return 0;
}
"#;

/// A static build of `PROBE` at `dir/probe`; `false` (said loudly, a failure under CI)
/// where this machine cannot compile it.
fn compiled_probe(dir: &std::path::Path) -> bool {
    std::fs::write(dir.join("probe.c"), PROBE).unwrap();
    let built = std::process::Command::new("cc")
        .args(["-static", "-O1", "-o", "probe", "probe.c"])
        .current_dir(dir)
        .output();
    match built {
        Ok(out) if out.status.success() => true,
        failed => {
            let why = format!("cannot compile a static C probe here: {failed:?}");
            if std::env::var("CI").is_ok_and(|ci| ci == "true") {
                panic!("{why}");
            }
            eprintln!("\n!!! SKIPPED the allow-list test: {why} !!!\n");
            false
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_tree_runs_ordinary_work_and_refuses_calls_outside_the_list() {
    if !docker_or_skip("the_users_tree_runs_ordinary_work_and_refuses_calls_outside_the_list") {
        return;
    }
    let h = Harness::new();
    committed_notes(&h);
    if !compiled_probe(h.repo()) {
        return;
    }
    // Committed: `--in-place` takes a clean tree.
    git(h.repo(), &["add", "probe", "probe.c"]);
    git(h.repo(), &["commit", "--quiet", "-m", "the probe"]);
    let work = "set -e; git status --short; git log --oneline | wc -l; git diff --stat; \
        printf 'b\\na\\n' | sort | tr a-z A-Z; echo x | sed s/x/y/ | awk '{print $1 \"!\"}'; \
        tar czf /tmp/notes.tgz notes.txt && tar tzf /tmp/notes.tgz; \
        bash -c 'declare -A seen; seen[k]=v; echo \"${seen[k]}\"; (sleep 0.1 & wait); cat <(echo substituted)'; \
        sh -c 'exit 3' || echo \"exit $?\"; echo work-done";
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({ "command": work })),
        reply().call("terminal", json!({ "command": "./probe" })),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let args = [
        "run",
        "--base-url",
        &server.url(),
        "--model",
        "test-model",
        "--sandbox",
        "docker",
        "--docker-image",
        IMAGE,
        "--in-place",
        "--verbose",
        "work, then probe",
    ];
    let output = h.wright(&args, &[]).await;
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(err.contains("an allow-list"), "{err}");
    let obs = observations(&h.events());
    let work = obs[0]["output"].as_str().unwrap();
    for line in [
        "2\n",
        "A\nB\n",
        "y!\n",
        "notes.txt\n",
        "v\n",
        "substituted\n",
        "exit 3\n",
        "work-done",
    ] {
        assert!(work.contains(line), "{line:?} missing from: {work}");
    }
    let probed = obs[1]["output"].as_str().unwrap();
    for line in [
        "sysfs: Operation not permitted",
        "unix socket, upper bits set: Operation not permitted",
        "unix socket: Operation not permitted",
        "inet socket: allowed",
        "socketpair: allowed",
    ] {
        assert!(probed.contains(line), "{line:?} missing from: {probed}");
    }
}
