//! A directory that is not a git repository: wright keeps a copy before the first step,
//! shows the agent's changes at the end as a diff, and `wright discard` puts everything
//! back — contents, modes, links — without following what the agent planted; a directory
//! too large to copy is refused with the way out.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// Every path beneath `dir` with what is there (never following a link).
fn listing(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let what = if meta.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                walk(root, &path, out);
                format!("dir {mode:o}")
            } else {
                format!("file {mode:o} {:?}", std::fs::read(&path).unwrap())
            };
            out.insert(rel, what);
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn plain_directory(dir: &Path) {
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/b.txt"), "bee\n").unwrap();
    std::fs::write(dir.join("keep.bin"), [0u8, 159, 146, 150]).unwrap();
    std::os::unix::fs::symlink("a.txt", dir.join("l")).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_git_the_changes_are_shown_and_discard_puts_everything_back() {
    let h = Harness::new();
    plain_directory(h.repo());
    let outside = tempfile::tempdir().unwrap();
    let before = listing(h.repo());
    let command = format!(
        "printf 'two\\n' >> a.txt && rm -r sub && ln -s {} sub && mkdir new && echo c > new/c.txt && rm l && ln -s /etc/passwd l && chmod 755 keep.bin",
        outside.path().display()
    );
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({ "command": command })),
        reply().call("finish", json!({"message": "changed things"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "change things", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = stdout(&output);
    for part in [
        "--- a/a.txt\n+++ b/a.txt",
        "+two",
        "--- a/sub/b.txt\n+++ /dev/null",
        "-bee",
        "--- /dev/null\n+++ b/new/c.txt",
        "l: a link to a.txt -> a link to /etc/passwd",
        "sub: a directory -> a link to",
        "mode of keep.bin: 644 -> 755",
        "undo them: wright discard",
    ] {
        assert!(report.contains(part), "{part:?} not in:\n{report}");
    }
    // wright leaves nothing of its own in the directory.
    let mut after: Vec<String> = listing(h.repo()).into_keys().collect();
    after.retain(|p| !p.starts_with("new") && !before.contains_key(p));
    assert_eq!(after, Vec::<String>::new());

    let id = h.conversation_id();
    let applied = h.wright(&["apply", &id], &[]).await;
    assert_eq!(applied.status.code(), Some(2));
    assert!(
        stderr(&applied).contains("worked directly in"),
        "{}",
        stderr(&applied)
    );

    let discarded = h.wright(&["discard", &id], &[]).await;
    assert_eq!(discarded.status.code(), Some(0), "{}", stderr(&discarded));
    assert!(
        stdout(&discarded).contains("back as it was"),
        "{}",
        stdout(&discarded)
    );
    assert_eq!(listing(h.repo()), before);
    // Nothing was written through the link the agent put where a directory was.
    assert_eq!(listing(outside.path()), BTreeMap::new());

    let again = h.wright(&["discard", &id], &[]).await;
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(
        stdout(&again).contains("already as it was"),
        "{}",
        stdout(&again)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_too_large_to_copy_is_refused_with_the_way_out() {
    let h = Harness::new();
    std::fs::write(h.repo().join("a.txt"), "one\n").unwrap();
    // Sparse: it counts by its length, and takes no disk.
    let big = std::fs::File::create(h.repo().join("big.img")).unwrap();
    big.set_len(300 << 20).unwrap();
    let server = ScriptedServer::start(vec![reply().call("finish", json!({"message": "ok"}))])
        .await
        .unwrap();
    let output = h.run(&server.url(), "look", &[]).await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("more than 256 MiB")
            && said.contains("--no-snapshot")
            && said.contains("git init"),
        "{said}"
    );
    assert!(server.chat_requests().is_empty());
    assert_eq!(
        std::fs::read_dir(h.data.path().join("wright/conversations")).map_or(0, |d| d.count()),
        0,
        "the refused conversation was left behind"
    );

    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "ls"})),
        reply().call("finish", json!({"message": "ok"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "look", &["--no-snapshot"]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("no snapshot was kept"),
        "{}",
        stdout(&output)
    );
}

/// `wright ARGS` started in the background (output dropped), killed with SIGKILL once its
/// log holds `ready`.
async fn run_and_kill(h: &Harness, args: &[&str], ready: &str) {
    let mut child = h.spawn_wright(args, &[]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let log = std::fs::read_dir(h.data.path().join("wright/conversations"))
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .and_then(|e| std::fs::read_to_string(e.path().join("events.jsonl")).ok())
            .unwrap_or_default();
        if log.contains(ready) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never reached {ready:?}; log:\n{log}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discard_undoes_the_agents_changes_and_leaves_what_the_user_did_after_the_run() {
    let h = Harness::new();
    for (name, text) in [("a.txt", "one\n"), ("b.txt", "bee\n"), ("c.txt", "sea\n")] {
        std::fs::write(h.repo().join(name), text).unwrap();
    }
    let server = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "printf 'two\\n' >> a.txt && printf 'agent\\n' >> c.txt && echo new > new.txt && mkdir made && echo m > made/m.txt"}),
        ),
        reply().call("finish", json!({"message": "changed things"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "change things", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let id = h.conversation_id();

    // The user goes on working: a new file, an edit to a file the agent never touched,
    // one to a file it changed, and a file in a directory it made.
    std::fs::write(h.repo().join("notes.txt"), "mine\n").unwrap();
    std::fs::write(h.repo().join("b.txt"), "bee, edited by me\n").unwrap();
    std::fs::write(h.repo().join("c.txt"), "sea\nagent\nmine\n").unwrap();
    std::fs::write(h.repo().join("made/mine.txt"), "mine\n").unwrap();

    // `wright diff` shows the snapshot's diff, as the run did.
    let diff = h.wright(&["diff", &id], &[]).await;
    assert_eq!(diff.status.code(), Some(0), "{}", stderr(&diff));
    for part in ["--- a/a.txt\n+++ b/a.txt", "+two", "+++ b/new.txt"] {
        assert!(
            stdout(&diff).contains(part),
            "{part:?} not in:\n{}",
            stdout(&diff)
        );
    }

    let discarded = h.wright(&["discard", &id], &[]).await;
    assert_eq!(discarded.status.code(), Some(0), "{}", stderr(&discarded));
    let said = stdout(&discarded);
    for part in [
        "left as it is: notes.txt (changed since the run ended",
        "left as it is: b.txt (changed since the run ended",
        "left as it is: c.txt (changed since the run ended",
        "left as it is: made (the agent made it, but it holds made/mine.txt",
    ] {
        assert!(said.contains(part), "{part:?} not in:\n{said}");
    }
    let read = |name: &str| std::fs::read_to_string(h.repo().join(name)).ok();
    // The agent's changes are undone...
    assert_eq!(read("a.txt").as_deref(), Some("one\n"));
    assert_eq!(read("new.txt"), None);
    assert_eq!(read("made/m.txt"), None);
    // ...and nothing of the user's is.
    assert_eq!(read("notes.txt").as_deref(), Some("mine\n"));
    assert_eq!(read("b.txt").as_deref(), Some("bee, edited by me\n"));
    assert_eq!(read("c.txt").as_deref(), Some("sea\nagent\nmine\n"));
    assert_eq!(read("made/mine.txt").as_deref(), Some("mine\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_before_its_end_leaves_its_changes_and_a_resumed_run_is_undone() {
    let h = Harness::new();
    std::fs::write(h.repo().join("a.txt"), "one\n").unwrap();
    let server = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "echo k > killed.txt && printf 'two\\n' >> a.txt"}),
        ),
        reply().call("terminal", json!({"command": "sleep 30"})),
    ])
    .await
    .unwrap();
    let url = server.url();
    let args = ["run", "--base-url", &url, "--model", "test-model", "do it"];
    run_and_kill(&h, &args, "sleep 30").await;
    let id = h.conversation_id();
    std::fs::write(h.repo().join("notes.txt"), "mine\n").unwrap();

    // No record of how the killed run left the directory: nothing it changed can be told
    // from the user's work, so nothing is undone, and each is named.
    let discarded = h.wright(&["discard", &id], &[]).await;
    assert_eq!(discarded.status.code(), Some(0), "{}", stderr(&discarded));
    let said = stdout(&discarded);
    for name in ["a.txt", "killed.txt", "notes.txt"] {
        let part = format!("left as it is: {name} (changed during a run that was stopped");
        assert!(said.contains(&part), "{part:?} not in:\n{said}");
    }
    let read = |name: &str| std::fs::read_to_string(h.repo().join(name)).ok();
    assert_eq!(read("killed.txt").as_deref(), Some("k\n"));
    assert_eq!(read("notes.txt").as_deref(), Some("mine\n"));
    assert_eq!(read("a.txt").as_deref(), Some("one\ntwo\n"));

    // Resumed, the next run's changes are the agent's to undo; the rest still stays.
    let next = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "echo r > resumed.txt && printf 'three\\n' >> a.txt"}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let resumed = h.resume(&next.url(), &id, "go on").await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let discarded = h.wright(&["discard", &id], &[]).await;
    assert_eq!(discarded.status.code(), Some(0), "{}", stderr(&discarded));
    assert_eq!(read("resumed.txt"), None, "{}", stdout(&discarded));
    assert_eq!(read("a.txt").as_deref(), Some("one\ntwo\n"));
    assert_eq!(read("killed.txt").as_deref(), Some("k\n"));
    assert_eq!(read("notes.txt").as_deref(), Some("mine\n"));
    let said = stdout(&discarded);
    assert!(
        said.contains("left as it is: killed.txt (changed during a run that was stopped"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_user_does_between_runs_is_not_undone() {
    let h = Harness::new();
    std::fs::write(h.repo().join("a.txt"), "one\n").unwrap();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo x > x.txt"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "add x", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let id = h.conversation_id();
    // Between the runs, the user's own work.
    std::fs::write(h.repo().join("y.txt"), "mine\n").unwrap();
    std::fs::write(h.repo().join("a.txt"), "one\nmine\n").unwrap();
    let next = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "echo z > z.txt && printf 'agent\\n' >> a.txt"}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let resumed = h.resume(&next.url(), &id, "go on").await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));

    let discarded = h.wright(&["discard", &id], &[]).await;
    assert_eq!(discarded.status.code(), Some(0), "{}", stderr(&discarded));
    let read = |name: &str| std::fs::read_to_string(h.repo().join(name)).ok();
    assert_eq!(read("x.txt"), None, "{}", stdout(&discarded));
    assert_eq!(read("z.txt"), None);
    assert_eq!(read("y.txt").as_deref(), Some("mine\n"));
    // The file as the user left it between the runs, the second run's line gone.
    assert_eq!(read("a.txt").as_deref(), Some("one\nmine\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_of_directories_too_deep_to_walk_ends_the_run_and_discard_says_what_stays() {
    let h = Harness::new();
    let _chain = Chain(h.repo());
    std::fs::write(h.repo().join("a.txt"), "one\n").unwrap();
    // 12,000 levels: far past PATH_MAX, and past the stack a recursive walk needs. (The
    // sandbox's path checks cost each level its depth, so deeper takes minutes to make.)
    let command = "printf 'two\\n' >> a.txt && perl -e 'for (1..12000) { mkdir \"d\" or die; chdir \"d\" or die }'";
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({ "command": command })),
        reply().call("finish", json!({"message": "deep"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "go deep", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let events = h.events();
    let changes = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .find(|v| v["kind"] == "changes")
        .expect("no changes event");
    let diff = changes["diff"].as_str().unwrap_or_default();
    assert!(diff.contains("+two"), "{diff}");
    assert!(diff.contains("more than 256 directories deep"), "{diff}");

    let id = h.conversation_id();
    let discarded = h.wright(&["discard", &id], &[]).await;
    let said = stdout(&discarded);
    // Not all of it could be put back: it says so, and what it could, it did.
    assert_eq!(
        discarded.status.code(),
        Some(2),
        "{said}\n{}",
        stderr(&discarded)
    );
    assert!(
        said.contains("not put back: d (cannot remove it: it holds d/d/d"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(h.repo().join("a.txt")).unwrap(),
        "one\n"
    );
}

/// A chain of directories `d` too deep for `remove_dir_all` (a descriptor per level, and
/// recursion), removed when dropped — before the harness's directories, pass or fail:
/// down it one descriptor at a time, then back up by `..`, each level removed.
struct Chain<'a>(&'a Path);

impl Drop for Chain<'_> {
    fn drop(&mut self) {
        use nix::fcntl::OFlag;
        use nix::sys::stat::Mode;
        let flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW;
        let Ok(mut dir) = nix::fcntl::open(self.0, flags, Mode::empty()) else {
            return;
        };
        let mut depth = 0;
        while let Ok(next) = nix::fcntl::openat(&dir, "d", flags, Mode::empty()) {
            dir = next;
            depth += 1;
        }
        for _ in 0..depth {
            let Ok(up) = nix::fcntl::openat(&dir, "..", OFlag::O_DIRECTORY, Mode::empty()) else {
                return;
            };
            dir = up;
            let _ = nix::unistd::unlinkat(&dir, "d", nix::unistd::UnlinkatFlags::RemoveDir);
        }
    }
}
