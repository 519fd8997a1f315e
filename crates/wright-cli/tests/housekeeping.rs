//! Housekeeping: `ls` with each conversation's repository and what became of its changes,
//! `diff`, `apply` and `diff` without an id, `rm` and `gc` — never removing work nobody
//! took without `--force`, never a running conversation — and `show` cutting long
//! outputs to their head and tail.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use std::path::Path;
use std::time::Duration;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

fn repo_with_a_commit(dir: &Path) {
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "a"]);
}

/// Runs the agent in `h`'s repository with `command` run once, then `finish`; returns
/// the new conversation's id.
async fn run_with(h: &Harness, task: &str, command: Option<&str>) -> String {
    let mut script = Vec::new();
    if let Some(command) = command {
        script.push(reply().call("terminal", json!({ "command": command })));
    }
    script.push(reply().call("finish", json!({"message": "done"})));
    let server = ScriptedServer::start(script).await.unwrap();
    let before = ids(h);
    let output = h.run(&server.url(), task, &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let after = ids(h);
    let new: Vec<&String> = after.iter().filter(|id| !before.contains(id)).collect();
    assert_eq!(new.len(), 1, "{after:?}");
    new[0].clone()
}

fn ids(h: &Harness) -> Vec<String> {
    let dir = h.data.path().join("wright/conversations");
    let mut ids: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

/// `wright ls`'s line for `id`.
async fn ls_line(h: &Harness, id: &str) -> String {
    let listed = stdout(&h.wright(&["ls"], &[]).await);
    listed
        .lines()
        .find(|line| line.starts_with(id))
        .unwrap_or_else(|| panic!("{id} not in\n{listed}"))
        .to_string()
}

fn branches(h: &Harness) -> String {
    git(h.repo(), &["branch", "--list"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rm_and_gc_remove_only_what_nobody_needs() {
    let h = Harness::new();
    repo_with_a_commit(h.repo());
    let applied = run_with(&h, "change a", Some("echo changed > a.txt")).await;
    let discarded = run_with(&h, "add b", Some("echo b > b.txt")).await;
    let unchanged = run_with(&h, "only look", Some("cat a.txt")).await;
    let forced = run_with(&h, "add c", Some("echo c > c.txt")).await;

    // ls: the repository, and what became of each one's changes.
    let line = ls_line(&h, &applied).await;
    assert!(line.contains(" has changes "), "{line}");
    assert!(line.contains("finished"), "{line}");
    let name = h.repo().file_name().unwrap().to_string_lossy().into_owned();
    assert!(line.contains(&name), "{line}");
    assert!(line.contains("change a"), "{line}");
    let line = ls_line(&h, &unchanged).await;
    assert!(line.contains(" no changes "), "{line}");

    // diff: the branch against its start; without an id, the latest on this repository.
    let diff = h.wright(&["diff", &applied], &[]).await;
    assert!(diff.status.success(), "{}", stderr(&diff));
    assert!(stdout(&diff).contains("+changed"), "{}", stdout(&diff));
    assert!(stdout(&diff).contains("-a"), "{}", stdout(&diff));
    let latest = h.wright(&["diff"], &[]).await;
    assert!(latest.status.success(), "{}", stderr(&latest));
    assert!(
        stderr(&latest).contains(&format!("conversation {forced}, the latest on")),
        "{}",
        stderr(&latest)
    );
    assert!(stdout(&latest).contains("+c"), "{}", stdout(&latest));
    let none = h.wright(&["diff", &unchanged], &[]).await;
    assert!(
        stdout(&none).contains("made no changes"),
        "{}",
        stdout(&none)
    );

    // rm refuses changes nobody took, and says how to see, take or force.
    let refused = h.wright(&["rm", &applied], &[]).await;
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains(&format!(
            "its branch wright/{applied} has changes you have not taken"
        )),
        "{}",
        stderr(&refused)
    );
    assert!(ids(&h).contains(&applied));

    let taken = h.wright(&["apply", &applied], &[]).await;
    assert!(taken.status.success(), "{}", stderr(&taken));
    assert!(ls_line(&h, &applied).await.contains(" applied "));
    let dropped = h.wright(&["discard", &discarded], &[]).await;
    assert!(dropped.status.success(), "{}", stderr(&dropped));
    assert!(ls_line(&h, &discarded).await.contains(" discarded "));

    // Taken: removed with its branch and clone; the change stays in the user's branch.
    let clone = h.data.path().join("wright/workspaces").join(&applied);
    assert!(clone.is_dir());
    let removed = h.wright(&["rm", &applied, &unchanged], &[]).await;
    assert!(removed.status.success(), "{}", stderr(&removed));
    let said = stdout(&removed);
    assert!(
        said.contains(&format!("removed {applied} (")) && said.contains("freed"),
        "{said}"
    );
    assert!(
        said.contains(&format!("its branch wright/{applied} is deleted")),
        "{said}"
    );
    assert!(said.contains(&format!("removed {unchanged} (")), "{said}");
    assert!(!clone.exists());
    assert!(!ids(&h).contains(&applied) && !ids(&h).contains(&unchanged));
    assert!(!branches(&h).contains(&applied));
    assert_eq!(
        std::fs::read_to_string(h.repo().join("a.txt")).unwrap(),
        "changed\n"
    );

    // --force takes changes nobody took, and says how to get the branch back.
    let refused = h.wright(&["rm", &forced], &[]).await;
    assert_eq!(refused.status.code(), Some(1));
    let tip = git(h.repo(), &["rev-parse", &format!("wright/{forced}")]);
    let removed = h.wright(&["rm", "--force", &forced], &[]).await;
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert!(
        stdout(&removed).contains(&format!("git branch wright/{forced} {}", tip.trim())),
        "{}",
        stdout(&removed)
    );
    assert!(!branches(&h).contains(&forced));

    // gc: young conversations stay; the scratch of an ended run goes whatever its age.
    let temp = tempfile::tempdir().unwrap();
    let scratch = temp.path().join(format!("wright-{discarded}-Q1w2E3"));
    std::fs::create_dir_all(scratch.join("out")).unwrap();
    std::fs::write(scratch.join("out/output-1.txt"), vec![b'x'; 300_000]).unwrap();
    let tmp = temp.path().to_str().unwrap();
    let young = h.wright(&["gc"], &[("TMPDIR", tmp)]).await;
    assert!(young.status.success(), "{}", stderr(&young));
    let said = stdout(&young);
    let line = said
        .lines()
        .find(|l| l.contains(&scratch.display().to_string()))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        line.ends_with("(scratch of an ended run, 304.0 KiB)")
            || line.contains("(scratch of an ended run, 29"),
        "{line}"
    );
    assert!(!scratch.exists());
    assert!(ids(&h).contains(&discarded));

    let dry = h
        .wright(&["gc", "--older-than", "0", "--dry-run"], &[])
        .await;
    assert!(
        stdout(&dry).contains(&format!("would remove {discarded} (discarded, ")),
        "{}",
        stdout(&dry)
    );
    assert!(stdout(&dry).contains("would free"), "{}", stdout(&dry));
    assert!(ids(&h).contains(&discarded));
    let gone = h.wright(&["gc", "--older-than", "0"], &[]).await;
    assert!(
        stdout(&gone).contains(&format!("removed {discarded} (discarded, ")),
        "{}",
        stdout(&gone)
    );
    assert!(
        stdout(&gone).contains("freed ") && stdout(&gone).contains("(1 conversation,"),
        "{}",
        stdout(&gone)
    );
    assert!(ids(&h).is_empty(), "{:?}", ids(&h));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gc_keeps_changes_nobody_took_and_ls_filters_by_repository() {
    let h = Harness::new();
    repo_with_a_commit(h.repo());
    let here = run_with(&h, "change a", Some("echo changed > a.txt")).await;
    let other = tempfile::tempdir().unwrap();
    repo_with_a_commit(other.path());
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "cat a.txt"})),
        reply().call("finish", json!({"message": "ok"})),
    ])
    .await
    .unwrap();
    let url = server.url();
    let elsewhere = h
        .wright(
            &[
                "run",
                "--base-url",
                &url,
                "--model",
                "test-model",
                "-C",
                other.path().to_str().unwrap(),
                "look elsewhere",
            ],
            &[],
        )
        .await;
    assert!(elsewhere.status.success(), "{}", stderr(&elsewhere));
    let there: String = ids(&h).into_iter().find(|id| *id != here).unwrap();

    let only_there = stdout(
        &h.wright(&["ls", "--repo", other.path().to_str().unwrap()], &[])
            .await,
    );
    assert!(
        only_there.contains(&there) && !only_there.contains(&here),
        "{only_there}"
    );
    let only_here = stdout(&h.wright(&["ls", "--here"], &[]).await);
    assert!(
        only_here.contains(&here) && !only_here.contains(&there),
        "{only_here}"
    );

    // The latest conversation on this repository, not the latest of all.
    let applied = h.wright(&["apply"], &[]).await;
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert!(
        stderr(&applied).contains(&format!("conversation {here}, the latest on")),
        "{}",
        stderr(&applied)
    );
    assert_eq!(
        std::fs::read_to_string(h.repo().join("a.txt")).unwrap(),
        "changed\n"
    );

    // Changes nobody took are kept, and said so.
    git(h.repo(), &["reset", "-q", "--hard", "HEAD~1"]);
    assert!(ls_line(&h, &here).await.contains(" has changes "));
    // Repositories the server cloned for conversations that are gone: an old one is
    // removed, a fresh one may be a clone in progress and is kept.
    let repositories = h.data.path().join("wright-repositories");
    for name in ["20250101-000000-dead", "20250101-000000-new"] {
        std::fs::create_dir_all(repositories.join(name).join(".git")).unwrap();
    }
    let aged = std::process::Command::new("touch")
        .args(["-d", "2 hours ago"])
        .arg(repositories.join("20250101-000000-dead"))
        .status()
        .unwrap();
    assert!(aged.success());
    let gc = h.wright(&["gc", "--older-than", "0"], &[]).await;
    assert!(gc.status.success(), "{}", stderr(&gc));
    let said = stdout(&gc);
    assert!(
        said.contains("20250101-000000-dead (a repository cloned for a conversation that is gone")
            && !said.contains("20250101-000000-new"),
        "{said}"
    );
    assert!(!repositories.join("20250101-000000-dead").exists());
    assert!(repositories.join("20250101-000000-new").exists());

    assert!(
        said.contains(&format!("removed {there} (no changes, ")),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "kept 1 conversation with changes nobody took: {here}"
        )),
        "{said}"
    );
    assert_eq!(ids(&h), vec![here.clone()]);
    assert!(branches(&h).contains(&here));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_conversation_is_never_removed_nor_a_killed_ones_clone() {
    let h = Harness::new();
    repo_with_a_commit(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo work > work.txt"})),
        Reply::Delayed(
            Duration::from_secs(60),
            Box::new(reply().call("finish", json!({"message": "done"}))),
        ),
    ])
    .await
    .unwrap();
    let url = server.url();
    let mut child = h.spawn_wright(
        &["run", "--base-url", &url, "--model", "test-model", "go"],
        &[],
    );
    let dir = h.data.path().join("wright/conversations");
    let mut id = String::new();
    for _ in 0..300 {
        if let Some(found) = ids(&h).first() {
            let log =
                std::fs::read_to_string(dir.join(found).join("events.jsonl")).unwrap_or_default();
            if log.contains("\"kind\":\"observation\"") {
                id = found.clone();
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!id.is_empty(), "the run never got going");

    for args in [vec!["rm", &id], vec!["rm", "--force", &id]] {
        let refused = h.wright(&args, &[]).await;
        assert_eq!(refused.status.code(), Some(1));
        assert!(
            stderr(&refused).contains(&format!("conversation {id} is running")),
            "{}",
            stderr(&refused)
        );
    }
    let gc = h.wright(&["gc", "--older-than", "0"], &[]).await;
    assert!(stdout(&gc).contains("freed"), "{}", stdout(&gc));
    assert!(ids(&h).contains(&id));

    // Killed before it handed its work over: the clone holds it.
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    assert!(ls_line(&h, &id).await.contains(" in its clone "));
    let refused = h.wright(&["rm", &id], &[]).await;
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("holds work its run never handed over"),
        "{}",
        stderr(&refused)
    );
    let gc = h.wright(&["gc", "--older-than", "0"], &[]).await;
    assert!(
        stdout(&gc).contains("kept 1 conversation"),
        "{}",
        stdout(&gc)
    );
    let removed = h.wright(&["rm", "--force", &id], &[]).await;
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert!(!h.data.path().join("wright/workspaces").join(&id).exists());
    assert!(ids(&h).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_keeps_the_end_of_a_long_failure_and_full_prints_it_all() {
    let h = Harness::new();
    repo_with_a_commit(h.repo());
    // A test run's output: a long traceback, its verdict on the last lines.
    let command = "for i in $(seq 1 30); do echo \"  frame $i\"; done; echo 'AssertionError: 2 != 3'; echo 'FAILED (failures=1)'";
    let summary =
        "The test failed on a wrong count.\nThe fixture counts 2 rows, the test expects 3.\nWhich one is right is yours to say.";
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({ "command": command })),
        reply().call("finish", json!({ "message": summary })),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "run the tests", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    // Live, the end is there too, with what was left out said.
    let live = stderr(&output);
    assert!(live.contains("AssertionError: 2 != 3"), "{live}");
    assert!(live.contains("lines left out"), "{live}");
    assert!(stdout(&output).contains(summary), "{}", stdout(&output));
    let id = h.conversation_id();

    let shown = stdout(&h.wright(&["show", &id], &[]).await);
    assert!(shown.contains("    frame 1\n"), "{shown}");
    assert!(!shown.contains("frame 12\n"), "{shown}");
    assert!(shown.contains("… 17 lines left out …"), "{shown}");
    assert!(shown.contains("AssertionError: 2 != 3"), "{shown}");
    assert!(shown.contains("FAILED (failures=1)"), "{shown}");
    assert!(
        shown.contains(&format!("agent (finish): {summary}")),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("`wright show --full {id}`")),
        "{shown}"
    );

    let full = stdout(&h.wright(&["show", "--full", &id], &[]).await);
    for i in 1..=30 {
        assert!(full.contains(&format!("frame {i}\n")), "{full}");
    }
    assert!(!full.contains("lines left out"), "{full}");
    assert!(
        full.contains(&format!("agent (finish): {summary}")),
        "{full}"
    );
}

/// Nothing done, nothing to keep: a chat left before its first message, and a fork never
/// gone on with, are removed without --force, and gc takes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_chat_and_an_unused_fork_hold_no_work() {
    let h = Harness::new();
    repo_with_a_commit(h.repo());
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let chat = h.chat_with_input(&server.url(), b"").await;
    assert!(chat.status.success(), "{}", stderr(&chat));
    let empty = ids(&h).pop().unwrap();
    assert!(h
        .data
        .path()
        .join("wright/workspaces")
        .join(&empty)
        .exists());
    assert!(ls_line(&h, &empty).await.contains("no changes"));
    let removed = h.wright(&["rm", &empty], &[]).await;
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert!(!h
        .data
        .path()
        .join("wright/workspaces")
        .join(&empty)
        .exists());
    assert!(ids(&h).is_empty());

    // A fork of a run that changed a file, made without a message: the original holds the
    // work, the fork nothing of its own.
    let original = run_with(&h, "write b", Some("echo b > b.txt")).await;
    let forked = h.wright(&["fork", &original], &[]).await;
    assert!(forked.status.success(), "{}", stderr(&forked));
    let fork = ids(&h).into_iter().find(|id| *id != original).unwrap();
    assert!(ls_line(&h, &fork).await.contains("no changes"));
    let gc = h.wright(&["gc", "--older-than", "0"], &[]).await;
    assert!(
        stdout(&gc).contains(&format!("removed {fork}")),
        "{}",
        stdout(&gc)
    );
    // The original's work is still kept.
    assert_eq!(ids(&h), vec![original.clone()]);
    assert!(
        branches(&h).contains(&format!("wright/{original}")),
        "{}",
        branches(&h)
    );
}

/// A huge output the tool itself cut: what the user is told was left out counts the lines
/// the tool omitted, not only those of its cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_output_says_how_many_lines_were_really_left_out() {
    let h = Harness::new();
    repo_with_a_commit(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({ "command": "seq 1 2000000" })),
        reply().call("finish", json!({"message": "counted"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "count", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let left_out = |text: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.contains("lines left out"))
            .unwrap_or_else(|| panic!("{text}"));
        line.split_whitespace()
            .find_map(|word| word.parse().ok())
            .unwrap_or_else(|| panic!("{line}"))
    };
    // Shown: two or so lines at each end; the rest of two million left out.
    let live = left_out(&stderr(&output));
    assert!((1_999_000..2_000_000).contains(&live), "{live}");
    let id = h.conversation_id();
    let shown = left_out(&stdout(&h.wright(&["show", &id], &[]).await));
    assert!((1_999_000..2_000_000).contains(&shown), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_shows_the_commit_made_in_place() {
    let h = Harness::new();
    repo_with_a_commit(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo in-place > a.txt"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "change a", &["--in-place"]).await;
    if crate::common::in_place_needs_namespaces("diff_shows_the_commit_made_in_place", &output) {
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let id = h.conversation_id();
    // Committed since: the diff is still the commit wright made, not the tree's.
    std::fs::write(h.repo().join("later.txt"), "later\n").unwrap();
    git(h.repo(), &["add", "-A"]);
    git(h.repo(), &["commit", "-qm", "later"]);
    let diff = h.wright(&["diff"], &[]).await;
    assert!(diff.status.success(), "{}", stderr(&diff));
    let text = stdout(&diff);
    assert!(text.contains("+in-place") && text.contains("-a"), "{text}");
    assert!(!text.contains("later"), "{text}");
    assert!(ls_line(&h, &id).await.contains(" in your tree "));
    // Its work is in the user's branch: nothing to refuse.
    let removed = h.wright(&["rm", &id], &[]).await;
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert_eq!(
        std::fs::read_to_string(h.repo().join("a.txt")).unwrap(),
        "in-place\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_and_apply_without_an_id_outside_any_conversation_say_so() {
    let h = Harness::new();
    repo_with_a_commit(h.repo());
    for command in ["diff", "apply"] {
        let output = h.wright(&[command], &[]).await;
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("no conversation on ")
                && stderr(&output).contains("`wright ls` lists them"),
            "{}",
            stderr(&output)
        );
    }
}
