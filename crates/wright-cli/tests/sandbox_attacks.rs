//! The attack suite: escapes tried through the real tool path (the `terminal` tool of a
//! `wright run` under the default sandbox). Each attack prints BLOCKED when it fails and
//! ESCAPED when it succeeds; every one must be blocked, reported to the model as a normal
//! command result, and leave the host untouched.

use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use std::io::Write as _;
use std::path::Path;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `CMD && echo ESCAPED || echo BLOCKED`
fn attempt(command: &str) -> String {
    format!("{{ {command} ; }} >/dev/null 2>&1 && echo ESCAPED || echo BLOCKED")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_are_blocked_and_reported_as_errors() {
    let _turn = crate::ui::browser::HEAVY_TURN.lock().await;
    let h = Harness::new();
    let outside = tempfile::tempdir().unwrap();
    let other_repo = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let o = outside.path().display().to_string();
    let hm = home.path().display().to_string();
    write(&outside.path().join("secret.txt"), "outside secret");
    write(&other_repo.path().join("secret.txt"), "other repo secret");
    for secret in [
        ".ssh/id_rsa",
        ".aws/credentials",
        ".netrc",
        ".git-credentials",
        ".config/wright/config.toml",
    ] {
        write(&home.path().join(secret), "home secret");
    }
    write(&home.path().join(".cargo/bin/tool"), "a toolchain file");
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let data = h.data.path().display().to_string();
    // A process of the same user holding a secret in its environment, as a shell with an
    // exported key would.
    let mut decoy = std::process::Command::new("sleep")
        .arg("120")
        .env("DECOY", "decoy-secret-value")
        .spawn()
        .unwrap();
    let decoy_pid = decoy.id();

    let attacks: Vec<(&str, String)> = vec![
        ("write outside, absolute path", attempt(&format!("echo x > {o}/new.txt"))),
        ("write outside through ..", attempt("echo x > ../wright-escape.txt")),
        ("write through a symlink", attempt(&format!("ln -s {o} link && echo x > link/via-link.txt"))),
        ("hard link a file from outside", attempt(&format!("ln {o}/secret.txt hard.txt"))),
        ("move a file from outside in", attempt(&format!("mv {o}/secret.txt moved.txt"))),
        ("read ~/.ssh", attempt(&format!("cat {hm}/.ssh/id_rsa"))),
        ("read ~/.aws", attempt(&format!("cat {hm}/.aws/credentials"))),
        ("read ~/.netrc", attempt(&format!("cat {hm}/.netrc"))),
        ("read ~/.git-credentials", attempt(&format!("cat {hm}/.git-credentials"))),
        ("read the agent's config", attempt(&format!("cat {hm}/.config/wright/config.toml"))),
        ("list the home directory", attempt(&format!("ls {hm}"))),
        ("read another repository", attempt(&format!("cat {}/secret.txt", other_repo.path().display()))),
        ("read the conversation logs", attempt(&format!("cat {data}/wright/conversations/*/events.jsonl"))),
        ("API key in the environment", attempt("env | grep -q sk-attack-key")),
        ("API key in the parent's /proc environ", attempt("tr '\\0' '\\n' < /proc/$PPID/environ | grep -q sk-attack-key")),
        ("API key in any /proc environ", attempt("grep -l sk-attack-key /proc/[0-9]*/environ")),
        ("another process's secret in /proc", attempt("grep -l decoy-secret-value /proc/[0-9]*/environ")),
        ("see the user's other processes", attempt(&format!("test -e /proc/{decoy_pid}"))),
        ("parent's memory", attempt("head -c 1 /proc/$PPID/mem")),
        ("TCP to the agent's model server", attempt("exec 3<>/dev/tcp/127.0.0.1/MODEL_PORT")),
        ("HTTP to the agent's model server", attempt("curl -sf http://127.0.0.1:MODEL_PORT/v1/models")),
        ("UDP egress", attempt(&format!("echo leak > /dev/udp/127.0.0.1/{udp_port}"))),
        ("DNS lookup", attempt("getent ahosts wright-attack.example.com")),
        ("ptrace the parent", "gdb -p $PPID -batch -ex detach 2>&1 | grep -q 'ptrace: Operation not permitted' && echo BLOCKED || echo ESCAPED".to_string()),
        // The agent's parent is outside its PID namespace (PPID is 0 there): kill a
        // process of the user's instead, by its real pid.
        ("kill another process of the user", attempt(&format!("kill -9 {decoy_pid}"))),
        ("TIOCSTI into the terminal", "perl -e 'my $c = \"x\"; ioctl(STDIN, 0x5412, $c) ? print \"ESCAPED\\n\" : print \"BLOCKED\\n\"'".to_string()),
        ("write /etc", attempt("echo x >> /etc/hosts")),
        ("chmod a system file", attempt("chmod 777 /etc/passwd")),
        ("mount a file system", attempt("mount -t tmpfs none /mnt")),
        ("a user namespace to regain rights", attempt(&format!("unshare -r sh -c 'echo x > {o}/userns.txt'"))),
        ("raw disk", attempt("d=$(ls /dev/[svx]da /dev/nvme0n1 2>/dev/null | head -n 1); test -n \"$d\" && head -c 1 \"$d\" < /dev/null")),
        ("git config into the real home", format!("git config --global user.name evil; test -e {hm}/.gitconfig && echo ESCAPED || echo BLOCKED")),
        // The sleepers are killed once the limit is found: where the limit is the user's
        // (no user namespace), they would otherwise starve the next commands' forks.
        ("fork bomb (200 sleepers, limit 64)", "python3 -c \"import os,signal,time\nkids=[]\ntry:\n    for i in range(200):\n        pid=os.fork()\n        if pid==0:\n            time.sleep(2); os._exit(0)\n        kids.append(pid)\n    print('ESCAPED')\nexcept OSError:\n    print('BLOCKED')\nfor pid in kids:\n    os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0)\"".to_string()),
        ("memory bomb (512 MiB, limit 256)", attempt("python3 -c \"x = b'x' * (512 << 20)\"")),
        ("a file over the size limit", attempt("head -c 64M /dev/zero > big.bin")),
    ];
    let controls: Vec<(&str, &str, String)> = vec![
        (
            "write in the workspace",
            "ok",
            "echo ok > inside.txt && cat inside.txt".to_string(),
        ),
        (
            "read a toolchain in the home",
            "a toolchain file",
            format!("cat {hm}/.cargo/bin/tool"),
        ),
        ("run python", "Python 3", "python3 --version".to_string()),
    ];
    assert!(attacks.len() >= 25);

    // The attacks name the model server's own port, so it is chosen first.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut script = Vec::new();
    for (_, command) in &attacks {
        let command = command.replace("MODEL_PORT", &port.to_string());
        script.push(reply().call("terminal", json!({"command": command, "timeout": 30})));
    }
    for (_, _, command) in &controls {
        script.push(reply().call("terminal", json!({"command": command})));
    }
    script.push(reply().call("finish", json!({"message": "done"})));
    let server = ScriptedServer::start_on_port(script, port).await.unwrap();

    let url = server.url();
    let output = h
        .wright(
            &[
                "run",
                "--base-url",
                &url,
                "--model",
                "test-model",
                "--max-steps",
                "60",
                "--max-processes",
                "64",
                "--max-memory",
                "256",
                "--max-file-size",
                "16",
                "--verbose",
                "try to escape",
            ],
            &[
                ("HOME", hm.as_str()),
                ("OPENAI_API_KEY", "sk-attack-key"),
                (
                    "PYENV_ROOT",
                    &std::env::var("PYENV_ROOT").unwrap_or_default(),
                ),
            ],
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("Landlock, fully enforced"),
        "{}",
        stderr(&output)
    );
    // Some guarantees need what only some machines give (a cgroup for memory, a PID
    // namespace): the header must say whether they hold, and those it claims are held.
    let header = crate::common::sandbox_header(&output);
    let claims_memory = header.contains("MiB memory");
    let claims_own_pids = header.contains("own PID namespace");
    assert!(claims_memory || header.contains("no cgroup"), "{header}");
    assert!(
        claims_own_pids || header.contains("no PID namespace") || header.contains("no namespaces"),
        "{header}"
    );
    // Without a user namespace the process limit counts every thread of the user, so it
    // is set above what the user already runs, and the header says so.
    if !nix::unistd::geteuid().is_root() {
        let shared = header.contains("threads the user runs now");
        assert_eq!(shared, header.contains("no namespaces"), "{header}");
        assert!(shared || header.contains("64 processes"), "{header}");
    }
    let needs = |name: &str| match name {
        "memory bomb (512 MiB, limit 256)" => claims_memory,
        "see the user's other processes" | "another process's secret in /proc" => claims_own_pids,
        _ => true,
    };
    let obs = observations(&h.events());
    let mut escaped = Vec::new();
    for ((name, _), observation) in attacks.iter().zip(&obs) {
        let text = observation["output"].as_str().unwrap();
        if !needs(name) {
            let _ = writeln!(
                std::io::stderr(),
                "!!! NOT CHECKED here, as the sandbox says it does not hold: {name} ({text}) !!!"
            );
            continue;
        }
        if !text.contains("BLOCKED") || text.contains("ESCAPED") {
            escaped.push(format!("{name}: {text}"));
        }
    }
    assert!(escaped.is_empty(), "escapes:\n{}", escaped.join("\n"));
    for ((name, expected, _), observation) in controls.iter().zip(&obs[attacks.len()..]) {
        let text = observation["output"].as_str().unwrap();
        assert!(
            text.contains(expected),
            "control '{name}' failed: {text}\n{}",
            stderr(&output)
        );
    }
    // Nothing reached the host.
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "outside secret"
    );
    assert!(!h
        .repo()
        .parent()
        .unwrap()
        .join("wright-escape.txt")
        .exists());
    assert!(!home.path().join(".gitconfig").exists());
    let mut buffer = [0u8; 16];
    assert!(udp.recv(&mut buffer).is_err(), "a UDP datagram got out");
    assert!(
        decoy.try_wait().unwrap().is_none(),
        "the decoy was killed from inside"
    );
    let _ = decoy.kill();
    let _ = decoy.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_hooks_and_filters_in_the_clone_never_run_outside() {
    let h = Harness::new();
    wright_testkit::failing_python_repo(h.repo());
    let outside = tempfile::tempdir().unwrap();
    let o = outside.path().display().to_string();
    let repo = h.repo().display().to_string();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": format!(
            "printf '#!/bin/sh\\ntouch {o}/hook-ran\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && \
             git config filter.evil.clean 'touch {o}/filter-ran; cat' && echo '* filter=evil' > .gitattributes && \
             git config core.fsmonitor 'touch {o}/fsmonitor-ran' && echo changed >> export.py && echo planted"
        )})),
        reply().call("terminal", json!({"command": attempt(&format!("echo x > {repo}/.git/hooks/post-merge"))})),
        reply().call("terminal", json!({"command": attempt(&format!("echo x >> {repo}/.git/config"))})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "plant hooks", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let obs = observations(&h.events());
    assert_eq!(obs[0]["output"], "planted");
    assert_eq!(obs[1]["output"], "BLOCKED");
    assert_eq!(obs[2]["output"], "BLOCKED");
    // wright committed the clone (running its filter and hooks only inside the sandbox).
    let id = h.conversation_id();
    let log = wright_testkit::git(h.repo(), &["log", "--format=%B", &format!("wright/{id}")]);
    assert!(log.contains("Task: plant hooks"), "{log}");
    for evidence in ["hook-ran", "filter-ran", "fsmonitor-ran"] {
        assert!(
            !outside.path().join(evidence).exists(),
            "{evidence} outside the sandbox"
        );
    }
    assert!(!h.repo().join(".git/hooks/post-merge").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_confined_shell_keeps_timeouts_input_and_cwd() {
    let h = Harness::new();
    std::fs::create_dir(h.repo().join("sub")).unwrap();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "cd sub && echo $$"})),
        reply().call("terminal", json!({"command": "sleep 30", "timeout": 1})),
        reply().call("terminal", json!({"command": "pwd"})),
        reply().call(
            "terminal",
            json!({"command": "read -p 'name? ' n; echo hi $n"}),
        ),
        reply().call("terminal", json!({"command": "Ada", "is_input": true})),
        reply().call("finish", json!({"message": "ok"})),
    ])
    .await
    .unwrap();
    let started = std::time::Instant::now();
    let output = h.run(&server.url(), "x", &["--verbose"]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let obs = observations(&h.events());
    // The shell is PID 1 of its own namespace where it has one.
    let first = obs[0]["output"].as_str().unwrap();
    if crate::common::sandbox_header(&output).contains("own PID namespace") {
        assert!(first.starts_with("1\n[cwd: "), "{}", obs[0]);
    } else {
        assert!(first.contains("\n[cwd: "), "{}", obs[0]);
    }
    assert!(
        obs[1]["output"]
            .as_str()
            .unwrap()
            .contains("did not finish within 1 s"),
        "{}",
        obs[1]
    );
    assert!(
        obs[2]["output"].as_str().unwrap().ends_with("/sub"),
        "{}",
        obs[2]
    );
    assert!(
        obs[3]["output"]
            .as_str()
            .unwrap()
            .contains("waiting for input"),
        "{}",
        obs[3]
    );
    assert_eq!(obs[4]["output"], "hi Ada");
}

/// What the agent runs to reach `.git/fsmonitor--daemon.ipc` once it exists: CONNECTED,
/// BLOCKED, or MISSING when the socket is not there to try.
const REACH_LATER_SOCKET: &str = "touch started.flag
for i in $(seq 600); do test -S .git/fsmonitor--daemon.ipc && break; sleep 0.1; done
python3 - <<'EOF'
import os, socket, stat
path = '.git/fsmonitor--daemon.ipc'
try:
    present = stat.S_ISSOCK(os.stat(path).st_mode)
except OSError:
    present = False
if not present:
    print('MISSING')
else:
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(path); s.send(b'hi'); print('CONNECTED')
    except OSError:
        print('BLOCKED')
EOF";

/// In the user's own checkout (`--in-place`), a host program makes a Unix socket after the
/// run started (git's fsmonitor daemon does, in `.git`): the agent must not reach it,
/// whether or not the sandbox has a root of its own, while its own socket pairs work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_socket_made_in_place_during_the_run_is_unreachable() {
    let h = Harness::new();
    wright_testkit::failing_python_repo(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": REACH_LATER_SOCKET, "timeout": 100})),
        reply().call(
            "terminal",
            json!({"command": "python3 -c \"import socket\na, b = socket.socketpair(); a.send(b'ok'); print(b.recv(2).decode())\""}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let url = server.url();
    let pyenv = std::env::var("PYENV_ROOT").unwrap_or_default();
    let mut child = h.spawn_wright(
        &[
            "run",
            "--base-url",
            &url,
            "--model",
            "test-model",
            "--in-place",
            "reach a socket made later",
        ],
        &[("PYENV_ROOT", &pyenv)],
    );
    // The socket is made only once the agent's command runs: no scan at the start sees it.
    let flag = h.repo().join("started.flag");
    let waited = std::time::Instant::now();
    while !flag.exists() && waited.elapsed() < std::time::Duration::from_secs(90) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let socket = h.repo().join(".git/fsmonitor--daemon.ipc");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let output = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        child.wait_with_output(),
    )
    .await
    .expect("wright did not finish within 120 s")
    .unwrap();
    if crate::common::in_place_needs_namespaces(
        "a_host_socket_made_in_place_during_the_run_is_unreachable",
        &output,
    ) {
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let obs = observations(&h.events());
    assert_eq!(obs[0]["output"], "BLOCKED", "{}", obs[0]);
    assert_eq!(obs[1]["output"], "ok", "{}", obs[1]);
    assert!(listener.accept().is_err(), "the host socket was reached");
}

/// In wright's own clone no host program makes sockets: the agent's programs keep theirs
/// (a test suite's server on a Unix socket).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_own_unix_sockets_work_in_a_clone() {
    let h = Harness::new();
    wright_testkit::failing_python_repo(h.repo());
    let own = "python3 - <<'EOF'
import os, socket
path = os.path.join(os.environ['TMPDIR'], 'own.sock')
server = socket.socket(socket.AF_UNIX); server.bind(path); server.listen(1)
client = socket.socket(socket.AF_UNIX); client.connect(path); client.send(b'ok')
print(server.accept()[0].recv(2).decode())
EOF";
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": own})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let pyenv = std::env::var("PYENV_ROOT").unwrap_or_default();
    let output = h
        .wright(
            &[
                "run",
                "--base-url",
                &server.url(),
                "--model",
                "test-model",
                "own sockets",
            ],
            &[("PYENV_ROOT", &pyenv)],
        )
        .await;
    let said = stderr(&output);
    let obs = observations(&h.events());
    if said.contains("no namespaces") {
        // Without a root of its own the host's socket paths are all in view, so the
        // sandbox refuses every Unix socket but `socketpair` (as the header says).
        let out = obs[0]["output"].as_str().unwrap();
        assert!(out.contains("Operation not permitted"), "{out}");
        return;
    }
    assert!(output.status.success(), "{said}");
    assert_eq!(obs[0]["output"], "ok", "{}", obs[0]);
}
