//! The user's uncommitted work and the agent's clone: said before the first step, and
//! given to the agent only when asked for, as a snapshot commit on its branch (files as
//! they are on disk, links as links), the user's checkout untouched either way.

use crate::common::observations;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use std::path::Path;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// A committed repository (`a`, `b`, `gone`), then uncommitted work: `a` changed, `b`
/// staged, `gone` deleted, `new.txt` and a link to a file outside added.
fn repository_with_work(dir: &Path) {
    for (name, text) in [("a", "one\n"), ("b", "bee\n"), ("gone", "here\n")] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "first"]);
    std::fs::write(dir.join("a"), "one, edited\n").unwrap();
    std::fs::write(dir.join("b"), "bee, staged\n").unwrap();
    git(dir, &["add", "b"]);
    std::fs::remove_file(dir.join("gone")).unwrap();
    std::fs::write(dir.join("new.txt"), "brand new\n").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", dir.join("link")).unwrap();
}

fn script() -> Vec<wright_testkit::Reply> {
    vec![
        reply().call(
            "terminal",
            json!({"command": "cat a b new.txt; ls gone; readlink link; printf 'agent\\n' >> a"}),
        ),
        reply().call("finish", json!({"message": "Added a line to a."})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uncommitted_work_is_given_only_when_asked_and_never_touched() {
    let h = Harness::new();
    repository_with_work(h.repo());
    let status = git(h.repo(), &["status", "--porcelain"]);
    let head = git(h.repo(), &["rev-parse", "HEAD"]);

    let server = ScriptedServer::start(script()).await.unwrap();
    let output = h
        .run(&server.url(), "add a line to a", &["--include-uncommitted"])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("your 5 uncommitted changes are in the agent's clone"),
        "{}",
        stderr(&output)
    );
    let seen = observations(&h.events())[0]["output"].to_string();
    for part in ["one, edited", "bee, staged", "brand new", "/etc/hostname"] {
        assert!(seen.contains(part), "{part} not in {seen}");
    }
    assert!(seen.contains("No such file"), "{seen}");

    // The checkout is as the user left it.
    assert_eq!(git(h.repo(), &["status", "--porcelain"]), status);
    assert_eq!(git(h.repo(), &["rev-parse", "HEAD"]), head);
    assert_eq!(
        std::fs::read_to_string(h.repo().join("a")).unwrap(),
        "one, edited\n"
    );

    // The branch: HEAD, the snapshot, the agent's commit; the link stored as a link.
    let branch = format!("wright/{}", h.conversation_id());
    let parents = git(
        h.repo(),
        &[
            "rev-list",
            "--format=%s",
            &format!("{}..{branch}", head.trim()),
        ],
    );
    assert!(
        parents.contains("wright: your uncommitted changes at the start")
            && parents.contains("Added a line to a."),
        "{parents}"
    );
    let snapshot = format!("{branch}~1");
    let tree = git(h.repo(), &["ls-tree", &snapshot]);
    assert!(tree.contains("120000 blob"), "{tree}");
    assert!(!tree.contains("gone"), "{tree}");
    assert_eq!(
        git(h.repo(), &["show", &format!("{snapshot}:link")]),
        "/etc/hostname"
    );
    // The diff shown is the agent's alone.
    let diff = stdout(&output);
    assert!(diff.contains("+agent"), "{diff}");
    assert!(!diff.contains("brand new"), "{diff}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn left_out_uncommitted_work_is_said_before_the_first_step() {
    let h = Harness::new();
    repository_with_work(h.repo());
    let server = ScriptedServer::start(script()).await.unwrap();
    let output = h.run(&server.url(), "add a line to a", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    let notice = said
        .find("has 5 uncommitted changes the agent does not see")
        .unwrap_or_else(|| panic!("{said}"));
    assert!(said[notice..].contains("--include-uncommitted"), "{said}");
    let seen = observations(&h.events())[0]["output"].to_string();
    assert!(
        seen.contains("one\\n") && !seen.contains("edited"),
        "{seen}"
    );
}

/// In a terminal, wright asks; a yes gives the agent the work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_terminal_wright_asks_whether_to_give_them() {
    let h = Harness::new();
    repository_with_work(h.repo());
    let server = ScriptedServer::start(script()).await.unwrap();
    let command = h.terminal_command(
        &format!(
            "run --base-url {} --model test-model \"add a line\" </dev/tty",
            server.url()
        ),
        "RUN",
        30,
    );
    let Some(terminal) = crate::common::terminal::Terminal::start("uncommitted", &command) else {
        return;
    };
    let screen = terminal.wait_for("[y/N]");
    assert!(screen.contains("has 5 uncommitted changes"), "{screen}");
    terminal.send(&["y", "Enter"]);
    let screen = terminal.wait_for("RUN-EXIT-");
    assert!(screen.contains("RUN-EXIT-0"), "{screen}");
    drop(terminal);
    let seen = observations(&h.events())[0]["output"].to_string();
    assert!(seen.contains("one, edited"), "{seen}");
}

/// A repository with no commit has nothing a clone could start from: said with both ways
/// on, before any model request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_without_a_commit_is_refused_saying_what_to_do() {
    let h = Harness::new();
    std::fs::write(h.repo().join("a"), "one\n").unwrap();
    git(h.repo(), &["init", "-q"]);
    let server = ScriptedServer::start(script()).await.unwrap();
    let output = h.run(&server.url(), "edit a", &[]).await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("has no commit yet") && said.contains("commit once, or use --in-place"),
        "{said}"
    );
    assert!(server.chat_requests().is_empty());
    assert_eq!(
        std::fs::read_to_string(h.repo().join("a")).unwrap(),
        "one\n"
    );
}
