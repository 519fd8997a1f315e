//! `--sandbox docker` end to end, against a real Docker daemon: the model's commands run in
//! a container as the workspace's owner, with no network and nothing writable but the
//! workspace and a private /tmp; the terminal's timeout, cwd and input detection reach
//! the shell inside; the container is gone after the run. The image is built without any
//! registry by `.ci/docker-test-image.sh`. These tests skip, loudly, only when no Docker
//! daemon answers; `.ci/run` starts one.

use crate::common::observations;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

mod allow_list;

pub const IMAGE: &str = "wright-sandbox-test:latest";
const SECRET: &str = "sk-wright-docker-test-secret";

/// Whether a daemon answers; if not, says so loudly (the test then returns).
pub fn docker_or_skip(test: &str) -> bool {
    let answers = Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !answers {
        // Straight to stderr: the test harness captures eprintln! of passing tests.
        let _ = writeln!(
            std::io::stderr(),
            "\n!!! SKIPPED {test}: no Docker daemon answers (start dockerd; .ci/run does) !!!\n"
        );
        return false;
    }
    // Built once per test binary: the script is idempotent, but not atomic.
    static BUILT: Mutex<bool> = Mutex::new(false);
    let mut built = BUILT.lock().unwrap();
    if !*built {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/docker-test-image.sh");
        let out = Command::new("bash")
            .arg(&script)
            .arg(IMAGE)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{} failed: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        *built = true;
    }
    true
}

/// Containers (running or not) carrying `label`.
fn containers_labelled(label: &str) -> String {
    let out = Command::new("docker")
        .args(["ps", "-aq", "--filter", &format!("label={label}")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

async fn run_in_docker(h: &Harness, url: &str, task: &str) -> std::process::Output {
    let args = [
        "run",
        "--base-url",
        url,
        "--model",
        "test-model",
        "--sandbox",
        "docker",
        "--docker-image",
        IMAGE,
        "--verbose",
        task,
    ];
    h.wright(&args, &[("OPENAI_API_KEY", SECRET)]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_run_confined_in_a_container_that_is_removed_after() {
    if !docker_or_skip("commands_run_confined_in_a_container_that_is_removed_after") {
        return;
    }
    let h = Harness::new();
    // As root, hand the workspace to an ordinary uid: the container must take it on.
    if nix::unistd::geteuid().is_root() {
        std::os::unix::fs::chown(h.repo(), Some(4242), Some(4242)).unwrap();
    }
    let owner = std::fs::metadata(h.repo()).unwrap().uid();
    let term = |command: &str| reply().call("terminal", json!({ "command": command }));
    let server = ScriptedServer::start(vec![
        term("mkdir sub && echo made > made.txt && id -u && pwd"),
        term("ls /sys/class/net; echo hi > /dev/tcp/1.1.1.1/80"),
        term("echo x > /etc/escape; touch /escape; echo t > /tmp/t && cat /tmp/t"),
        term("env"),
        reply().call(
            "terminal",
            json!({"command": "cd sub; sleep 30", "timeout": 1}),
        ),
        term("pwd; echo alive"),
        term("read -p 'name? ' name; echo \"hello $name\""),
        reply().call("terminal", json!({"command": "wright", "is_input": true})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = run_in_docker(&h, &server.url(), "probe the sandbox").await;
    let err = stderr(&output);
    assert!(output.status.success(), "{err}\n{}", stdout(&output));
    assert!(
        err.contains("docker: container wright-") && err.contains("network: none"),
        "{err}"
    );
    assert!(err.contains("no-new-privileges"), "{err}");

    let obs = observations(&h.events());
    let text = |i: usize| obs[i]["output"].as_str().unwrap().to_string();
    let root = h.repo().canonicalize().unwrap();
    assert_eq!(text(0), format!("{owner}\n{}", root.display()));
    assert!(text(1).starts_with("lo\n"), "{}", text(1));
    assert!(text(1).contains("Network is unreachable"), "{}", text(1));
    assert!(text(2).contains("Read-only file system"), "{}", text(2));
    assert!(text(2).contains("\nt"), "{}", text(2));
    assert!(
        !text(3).contains(SECRET) && !text(3).contains("OPENAI"),
        "{}",
        text(3)
    );
    assert!(text(3).contains("HOME=/tmp"), "{}", text(3));
    assert!(text(4).contains("did not finish within 1 s"), "{}", text(4));
    // The timeout stopped the command, not the shell: its cwd is still there.
    assert_eq!(text(5), format!("{}/sub\nalive", root.display()));
    assert!(text(6).contains("waiting for input"), "{}", text(6));
    assert!(text(7).contains("hello wright"), "{}", text(7));

    let made = h.repo().join("made.txt");
    assert_eq!(std::fs::read_to_string(&made).unwrap(), "made\n");
    assert_eq!(std::fs::metadata(&made).unwrap().uid(), owner);
    assert!(!Path::new("/etc/escape").exists() && !Path::new("/escape").exists());
    let id = h.conversation_id();
    assert_eq!(
        containers_labelled(&format!("wright.conversation={id}")),
        "",
        "the container outlived the run"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_clone_is_committed_from_inside_the_container() {
    if !docker_or_skip("a_repository_clone_is_committed_from_inside_the_container") {
        return;
    }
    let h = Harness::new();
    committed_notes(&h);
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo new > notes.txt"})),
        reply().call("finish", json!({"message": "updated"})),
    ])
    .await
    .unwrap();
    let output = run_in_docker(&h, &server.url(), "update the notes").await;
    assert!(output.status.success(), "{}", stderr(&output));
    let id = h.conversation_id();
    assert_eq!(
        std::fs::read_to_string(h.repo().join("notes.txt")).unwrap(),
        "old\n"
    );
    assert_eq!(
        git(h.repo(), &["show", &format!("wright/{id}:notes.txt")]),
        "new\n"
    );
    assert_eq!(
        containers_labelled(&format!("wright.conversation={id}")),
        ""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_without_git_is_refused_for_a_repository() {
    if !docker_or_skip("an_image_without_git_is_refused_for_a_repository") {
        return;
    }
    let no_git = "wright-sandbox-test-nogit:latest";
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/docker-test-image.sh");
    let built = Command::new("bash")
        .arg(&script)
        .arg(no_git)
        .env("WRIGHT_DOCKER_TEST_NO_GIT", "1")
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let h = Harness::new();
    wright_testkit::failing_python_repo(h.repo());
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let url = server.url();
    let args = [
        "run",
        "--base-url",
        &url,
        "--model",
        "test-model",
        "--sandbox",
        "docker",
        "--docker-image",
        no_git,
        "x",
    ];
    let output = h.wright(&args, &[]).await;
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("has no git") && err.contains("--docker-image"),
        "{err}"
    );
    assert!(server.chat_requests().is_empty()); // Nothing half-made is left: no conversation, no clone, no branch.
    let conversations = h.data.path().join("wright/conversations");
    assert_eq!(
        std::fs::read_dir(&conversations)
            .map(|d| d.count())
            .unwrap_or(0),
        0
    );
    assert!(!wright_testkit::git(h.repo(), &["branch", "--list"]).contains("wright/"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_image_fails_closed_and_says_how_to_fix_it() {
    if !docker_or_skip("a_missing_image_fails_closed_and_says_how_to_fix_it") {
        return;
    }
    let h = Harness::new();
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let args = [
        "run",
        "--base-url",
        &server.url(),
        "--model",
        "test-model",
        "--sandbox",
        "docker",
        "--docker-image",
        "wright-no-such-image:none",
        "x",
    ];
    let output = h.wright(&args, &[]).await;
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the image wright-no-such-image:none is not on this machine")
            && err.contains("docker pull")
            && err.contains("docker build"),
        "{err}"
    );
    let workspace = h.repo().canonicalize().unwrap();
    assert_eq!(
        containers_labelled(&format!("wright.workspace={}", workspace.display())),
        ""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_reports_what_the_container_enforces() {
    if !docker_or_skip("doctor_reports_what_the_container_enforces") {
        return;
    }
    let h = Harness::new();
    let server = ScriptedServer::start(vec![reply().text("1 2 3 4 5")])
        .await
        .unwrap();
    let url = server.url();
    let args = [
        "doctor",
        "--base-url",
        &url,
        "--sandbox",
        "docker",
        "--json",
    ];
    let output = h.wright(&args, &[("WRIGHT_DOCKER_IMAGE", IMAGE)]).await;
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let sandbox = &report["sandbox"];
    assert_eq!(sandbox["network"], "none (only loopback)", "{report:#}");
    let caps = sandbox["capabilities"].as_str().unwrap();
    assert!(
        caps.contains("cap_drop ALL") && caps.contains("no-new-privileges"),
        "{caps}"
    );
    assert!(
        sandbox["limits"]
            .as_str()
            .unwrap()
            .contains("512 processes"),
        "{report:#}"
    );
    let workspace = h.repo().canonicalize().unwrap();
    assert_eq!(
        containers_labelled(&format!("wright.workspace={}", workspace.display())),
        ""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn containers_of_dead_runs_are_reaped() {
    if !docker_or_skip("containers_of_dead_runs_are_reaped") {
        return;
    }
    let read = |path: &str| std::fs::read_to_string(path).unwrap().trim().to_string();
    let boot = read("/proc/sys/kernel/random/boot_id");
    let namespace = std::fs::read_link("/proc/self/ns/pid")
        .unwrap()
        .display()
        .to_string();
    let dead_owner = format!("{boot}/{namespace}/999999999");
    let live_owner = format!("{boot}/{namespace}/{}", std::process::id());
    let start = |name: &str, owner: &str| {
        let out = Command::new("docker")
            .args([
                "run",
                "-d",
                "--name",
                name,
                "--label",
                "wright.conversation=test-orphan",
            ])
            .args([
                "--label",
                &format!("wright.owner={owner}"),
                IMAGE,
                "sleep",
                "600",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let _ = Command::new("docker")
        .args(["rm", "-f", "wright-test-orphan", "wright-test-alive"])
        .output();
    start("wright-test-orphan", &dead_owner);
    start("wright-test-alive", &live_owner);

    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "true"})),
        reply().call("finish", json!({"message": "nothing to do"})),
    ])
    .await
    .unwrap();
    let url = server.url();
    let args = [
        "run",
        "--base-url",
        &url,
        "--model",
        "test-model",
        "--sandbox",
        "docker",
        "--docker-image",
        IMAGE,
        "x",
    ];
    let output = h.wright(&args, &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let names = String::from_utf8_lossy(
        &Command::new("docker")
            .args(["ps", "-a", "--format", "{{.Names}}"])
            .output()
            .unwrap()
            .stdout,
    )
    .into_owned();
    let _ = Command::new("docker")
        .args(["rm", "-f", "wright-test-alive"])
        .output();
    assert!(
        !names.contains("wright-test-orphan"),
        "the orphan is still there: {names}"
    );
    assert!(
        names.contains("wright-test-alive"),
        "a live run's container was removed"
    );
}

/// A parent directory of a protected `.git` swapped for a link to another repository:
/// the next container never gets that repository's `.git` (see `host_attacks::bind_links`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_swapped_for_a_link_never_binds_another_repository() {
    if !docker_or_skip("a_parent_swapped_for_a_link_never_binds_another_repository") {
        return;
    }
    crate::host_attacks::bind_links::a_parent_swapped_for_a_link(
        "a_parent_swapped_for_a_link (docker)",
        &["--sandbox", "docker", "--docker-image", IMAGE],
    )
    .await;
}

/// In the user's own tree (`--in-place`), a Unix socket a program of theirs makes in `.git`
/// once the run is under way (git's fsmonitor daemon does) cannot be reached from the
/// container: `socket(AF_UNIX)` is refused there, as in the native sandbox. The probe is
/// git's own `credential-cache`, which connects to the socket it is given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_made_mid_run_in_the_users_tree_is_unreachable() {
    if !docker_or_skip("a_socket_made_mid_run_in_the_users_tree_is_unreachable") {
        return;
    }
    let h = Harness::new();
    committed_notes(&h);
    let socket = h.repo().join(".git").join("fsmonitor--daemon.ipc");
    let marker = h.repo().join("started");
    // The user's program: it makes its socket once the agent's command runs.
    let (made_tx, made_rx) = std::sync::mpsc::channel();
    let maker = {
        let (socket, marker) = (socket.clone(), marker.clone());
        std::thread::spawn(move || {
            for _ in 0..600 {
                if marker.exists() {
                    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
                    listener.set_nonblocking(true).unwrap();
                    let _ = made_tx.send(listener);
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        })
    };
    let command = "touch started; for i in $(seq 300); do [ -S .git/fsmonitor--daemon.ipc ] && break; sleep 0.1; done; \
        ls -l .git/fsmonitor--daemon.ipc | cut -c1; git credential-cache --socket .git/fsmonitor--daemon.ipc exit; echo \"git: $?\"";
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({ "command": command })),
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
        "reach the fsmonitor socket",
    ];
    let output = h.wright(&args, &[]).await;
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(err.contains("Unix sockets refused"), "{err}");
    maker.join().unwrap();
    let listener = made_rx.recv().expect("the agent's command never ran");
    let obs = observations(&h.events());
    let seen = obs[0]["output"].as_str().unwrap();
    // The socket was there to see, and connecting to it was refused.
    assert!(seen.starts_with("s\n"), "{seen}");
    assert!(seen.contains("Operation not permitted"), "{seen}");
    assert!(!seen.contains("git: 0"), "{seen}");
    assert!(
        listener.accept().is_err(),
        "the user's socket was reached from the container"
    );
}

/// The user's repository: one commit of `notes.txt` ("old").
pub fn committed_notes(h: &Harness) {
    std::fs::write(h.repo().join("notes.txt"), "old\n").unwrap();
    git(h.repo(), &["init", "--quiet"]);
    git(h.repo(), &["add", "notes.txt"]);
    git(h.repo(), &["commit", "--quiet", "-m", "notes"]);
}
