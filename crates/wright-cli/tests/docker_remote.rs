//! `--sandbox docker` on an engine that does not see this machine's files: a second
//! dockerd in its own mount namespace, where the temporary directory (and so the
//! workspace) is an empty tmpfs, reached over loopback TCP. The workspace can only get
//! there as a copy, and the work can only come back as one. Skips, loudly, where a second
//! dockerd cannot run (not root, no dockerd).

use crate::common::observations;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use crate::docker::IMAGE;
use serde_json::json;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;
use std::process::Stdio;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::SecondDockerd;

/// The second engine with the test image in it, or `None` after saying loudly why not.
fn second_engine_or_skip(test: &str) -> Option<SecondDockerd> {
    engine_or_skip(test, SecondDockerd::start)
}

fn engine_or_skip(
    test: &str,
    start: fn() -> Result<SecondDockerd, String>,
) -> Option<SecondDockerd> {
    let engine = match start() {
        Ok(engine) => engine,
        Err(why) => {
            let _ = writeln!(
                std::io::stderr(),
                "\n!!! SKIPPED {test}: a second Docker engine cannot run here ({why}) !!!\n"
            );
            return None;
        }
    };
    // From the first engine when it has the image (`docker save | docker load`), else
    // built straight into the second one (the script needs no registry).
    let first_has_it = Command::new("docker")
        .args(["image", "inspect", IMAGE])
        .output()
        .is_ok_and(|out| out.status.success());
    if first_has_it {
        let mut save = Command::new("docker")
            .args(["save", IMAGE])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let loaded = engine
            .docker(&["load", "-q"])
            .stdin(save.stdout.take().unwrap())
            .output()
            .unwrap();
        assert!(save.wait().unwrap().success());
        assert!(
            loaded.status.success(),
            "{}",
            String::from_utf8_lossy(&loaded.stderr)
        );
    } else {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/docker-test-image.sh");
        let built = Command::new("bash")
            .arg(&script)
            .arg(IMAGE)
            .env("DOCKER_HOST", engine.tcp())
            .output()
            .unwrap();
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
    }
    Some(engine)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_on_another_engine_works_on_a_copy_and_its_work_comes_back() {
    let test = "a_sandbox_on_another_engine_works_on_a_copy_and_its_work_comes_back";
    let Some(engine) = second_engine_or_skip(test) else {
        return;
    };
    let h = Harness::new();
    let root = h.repo().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "old\n").unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/gone.txt"), "to delete\n").unwrap();
    // As root, hand the workspace to an ordinary uid: the container, and what comes back,
    // must take it on, as a bind mount would.
    if nix::unistd::geteuid().is_root() {
        let chowned = Command::new("chown")
            .args(["-R", "4242:4242"])
            .arg(&root)
            .status()
            .unwrap();
        assert!(chowned.success());
    }
    let owner = std::fs::metadata(&root).unwrap().uid();

    // That engine does not see this machine's workspace: a bind of it fails there.
    let bind = engine
        .docker(&[
            "run",
            "--rm",
            "--mount",
            &format!("type=bind,source={},target=/w", root.display()),
            IMAGE,
            "cat",
            "/w/notes.txt",
        ])
        .output()
        .unwrap();
    assert!(
        !bind.status.success(),
        "a bind of {} worked there",
        root.display()
    );
    assert!(
        String::from_utf8_lossy(&bind.stderr).contains("does not exist"),
        "{}",
        String::from_utf8_lossy(&bind.stderr)
    );

    let term = |command: &str| reply().call("terminal", json!({ "command": command }));
    let server = ScriptedServer::start(vec![
        term("cat notes.txt; echo made > made.txt; mkdir deep; echo x > deep/y; id -u; pwd"),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "notes.txt", "old_str": "old", "new_str": "edited by the tool"}),
        ),
        term("cat notes.txt; rm sub/gone.txt; ln -s /etc/passwd pw; ls"),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let tcp = engine.tcp();
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
        "--docker-host",
        &tcp,
        "--verbose",
        "work on the notes",
    ];
    let output = h.wright(&args, &[]).await;
    let err = stderr(&output);
    assert!(output.status.success(), "{err}\n{}", stdout(&output));
    assert!(
        err.contains("a copy, at the same path, on the engine at tcp://127.0.0.1:"),
        "{err}"
    );

    let obs = observations(&h.events());
    let text = |i: usize| obs[i]["output"].as_str().unwrap().to_string();
    // The container had the workspace, at the same path.
    assert_eq!(text(0), format!("old\n{owner}\n{}", root.display()));
    // The tool's edit, made on this machine, was in the container for the next command.
    assert!(text(2).starts_with("edited by the tool\n"), "{}", text(2));

    // The work came back: a file and a directory made, one deleted, a link kept a link.
    assert_eq!(
        std::fs::read_to_string(root.join("made.txt")).unwrap(),
        "made\n"
    );
    assert_eq!(std::fs::read_to_string(root.join("deep/y")).unwrap(), "x\n");
    for made in ["made.txt", "deep", "deep/y"] {
        assert_eq!(
            std::fs::metadata(root.join(made)).unwrap().uid(),
            owner,
            "{made}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "edited by the tool\n"
    );
    assert!(!root.join("sub/gone.txt").exists());
    assert_eq!(
        std::fs::read_link(root.join("pw")).unwrap(),
        Path::new("/etc/passwd")
    );

    let id = h.conversation_id();
    let left = engine
        .docker(&[
            "ps",
            "-aq",
            "--filter",
            &format!("label=wright.conversation={id}"),
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&left.stdout).trim(),
        "",
        "the container outlived the run"
    );
    let volumes = engine.docker(&["volume", "ls", "-q"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&volumes.stdout).trim(),
        "",
        "its volumes outlived it"
    );
}

/// An engine on a Unix socket of its own that sees this machine's files: bind mode is
/// the default there, the work is written in place, and the terminal's `docker` client
/// reaches that engine (nothing answers on the usual socket's address in its place).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_on_another_socket_binds_the_workspace() {
    let test = "an_engine_on_another_socket_binds_the_workspace";
    let Some(engine) = engine_or_skip(test, SecondDockerd::start_seeing_files) else {
        return;
    };
    let h = Harness::new();
    let root = h.repo().canonicalize().unwrap();
    let server = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "echo bound > bound.txt; pwd"}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let unix = engine.unix();
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
        "--docker-host",
        &unix,
        "--verbose",
        "bind",
    ];
    let output = h.wright(&args, &[]).await;
    let err = stderr(&output);
    assert!(output.status.success(), "{err}\n{}", stdout(&output));
    assert!(err.contains("bind-mounted at the same path"), "{err}");
    let obs = observations(&h.events());
    assert_eq!(
        obs[0]["output"].as_str().unwrap(),
        root.display().to_string()
    );
    assert_eq!(
        std::fs::read_to_string(root.join("bound.txt")).unwrap(),
        "bound\n"
    );
}

/// The figures of docs/sandbox.md: the same run (a copy of wright's `crates/`, 740 files,
/// 7.6 MB; five commands that change nothing (`echo N`), then one that writes a file) on an engine
/// that sees the files (bind) and on one that does not (copy). Run by hand:
/// `cargo test --test all -- --ignored --nocapture docker_remote::costs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, run by hand"]
async fn costs_of_the_copy() {
    let Some(hidden) = second_engine_or_skip("costs_of_the_copy") else {
        return;
    };
    let Some(seeing) = engine_or_skip("costs_of_the_copy", SecondDockerd::start_seeing_files)
    else {
        return;
    };
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (engine, address) in [(&seeing, seeing.unix()), (&hidden, hidden.tcp())] {
        let _ = engine;
        let h = Harness::new();
        let copied = Command::new("cp")
            .arg("-r")
            .arg(&crates)
            .arg(h.repo().join("crates"))
            .status()
            .unwrap();
        assert!(copied.success());
        let mut script: Vec<_> = (0..5)
            .map(|i| reply().call("terminal", json!({"command": format!("echo {i}")})))
            .collect();
        script.push(reply().call("terminal", json!({"command": "echo x > crates/new.txt"})));
        script.push(reply().call("finish", json!({"message": "done"})));
        let server = ScriptedServer::start(script).await.unwrap();
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
            "--docker-host",
            &address,
            "measure",
        ];
        let started = std::time::Instant::now();
        let output = h.wright(&args, &[]).await;
        let whole = started.elapsed();
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(h.repo().join("crates/new.txt").exists());
        let events: Vec<serde_json::Value> = h
            .events()
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect();
        let ms = |v: &serde_json::Value| {
            let ts = v["ts"].as_str().unwrap();
            let time = ts.split('T').nth(1).unwrap().trim_end_matches('Z');
            let parts: Vec<f64> = time.split(':').map(|p| p.parse().unwrap()).collect();
            (parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]) * 1000.0
        };
        let mut commands = Vec::new();
        for (i, e) in events.iter().enumerate() {
            if e["kind"] == "action" && e["tool"] == "terminal" {
                let done = events[i..]
                    .iter()
                    .find(|o| o["kind"] == "observation")
                    .unwrap();
                commands.push(ms(done) - ms(e));
            }
        }
        eprintln!("{address}: whole run {whole:?}, each command (ms): {commands:?}");
    }
}
