//! Nothing of the agent's outlives its run: a process started in a session of its own must
//! not go on writing the workspace (or filling the disk past `--max-disk`) after wright
//! has reported and exited, whatever the level (from a review: without a PID namespace or
//! a cgroup, it did).

use crate::common::sandbox_header;
use crate::common::stderr;
use crate::common::Harness;

async fn nothing_outlives_the_run(sandbox: &str) {
    let h = Harness::new();
    let plant = "setsid sh -c 'sleep 3; echo late > late.txt' >/dev/null 2>&1 </dev/null & \
                 (sh -c 'sleep 3; echo later > later.txt' &) ; echo started";
    let output = super::plant_then_finish(&h, plant, "outlive", &["--sandbox", sandbox]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    std::thread::sleep(std::time::Duration::from_secs(5));
    for file in ["late.txt", "later.txt"] {
        assert!(
            !h.repo().join(file).exists(),
            "a process of the agent's wrote {file} after the run ({sandbox}): {}",
            sandbox_header(&output)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_outlives_the_run_with_landlock_only() {
    nothing_outlives_the_run("landlock").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_outlives_the_run_by_default() {
    nothing_outlives_the_run("auto").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_outlives_the_run_unconfined() {
    nothing_outlives_the_run("none").await;
}
