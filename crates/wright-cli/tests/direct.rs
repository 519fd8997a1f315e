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
