//! What the sandbox keeps read-only, wright's own in-process tools keep read-only too:
//! `file_editor` runs in wright's process, outside the sandbox's mounts, and once wrote an
//! in-place `.git/config` whose filter the user's next `git status` ran (issue 32). Here the
//! model edits the user's git directories and the work-tree files the user's git
//! configuration runs (a hooks directory, husky's hooks, an included config, a filter's
//! script) with `file_editor`, directly and through links inside the workspace, and with
//! the shell, also by moving their directory aside; every write is refused and the user's
//! next git commands run nothing of the agent's.

use super::attempt;
use super::Outside;
use crate::common::in_place_needs_namespaces;
use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use serde_json::Value;
use std::path::Path;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

fn edit(command: &str, path: &str) -> Reply {
    let arguments = match command {
        "create" => {
            json!({"command": "create", "path": path, "file_text": "[filter \"x\"]\n\tclean = sh -c 'touch /tmp/x'\n"})
        }
        "str_replace" => {
            json!({"command": "str_replace", "path": path, "old_str": "[core]", "new_str": "[core]\n\tfsmonitor = /tmp/x"})
        }
        _ => {
            json!({"command": "insert", "path": path, "insert_line": 0, "new_str": "touch /tmp/x\n"})
        }
    };
    reply().call("file_editor", arguments)
}

/// Asserts the observation refused the write, saying why.
fn refused(observation: &Value, what: &str) {
    let text = observation["output"].as_str().unwrap_or_default();
    assert!(
        text.contains("is read-only to the agent"),
        "{what} was not refused: {observation}"
    );
}

/// The user's next commands in `dir`, on the host: their status and a commit.
fn users_next_git(dir: &Path) {
    std::fs::write(dir.join("mine.txt"), "mine").unwrap();
    for args in [
        &["status", "--short"][..],
        &["add", "-A"][..],
        &[
            "-c",
            "user.name=u",
            "-c",
            "user.email=u@u",
            "commit",
            "-qm",
            "mine",
        ][..],
    ] {
        let _ = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output();
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_default()
}

/// In place: `.git/config`, `.git/info/attributes` and a hook, written with `file_editor`
/// by name, through a link to `.git` and a link to the config inside the workspace, and by
/// a `..` path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_place_the_editor_cannot_write_git() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let config = read(&h.repo().join(".git/config"));
    let server = ScriptedServer::start(vec![
        edit("str_replace", ".git/config"),
        edit("create", ".git/info/attributes"),
        edit("create", ".git/hooks/pre-commit"),
        reply().call(
            "terminal",
            json!({"command": "mkdir sub && ln -s .git g && ln -s .git/config cfg && ln -s ../.git/hooks sub/h && echo linked"}),
        ),
        edit("create", "g/hooks/post-commit"),
        edit("str_replace", "cfg"),
        edit("insert", "g/config"),
        edit("create", "sub/h/pre-push"),
        edit("create", "sub/../.git/hooks/post-checkout"),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "edit .git", &["--in-place"]).await;
    if in_place_needs_namespaces("in_place_the_editor_cannot_write_git", &output) {
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let obs = observations(&h.events());
    for n in [0, 1, 2, 4, 5, 6, 7, 8] {
        refused(&obs[n], &format!("edit {n}"));
    }
    assert_eq!(obs[3]["output"], "linked");
    assert_eq!(read(&h.repo().join(".git/config")), config);
    for planted in [
        "info/attributes",
        "hooks/pre-commit",
        "hooks/post-commit",
        "hooks/pre-push",
        "hooks/post-checkout",
    ] {
        assert!(!h.repo().join(".git").join(planted).exists(), "{planted}");
    }
}

/// Outside git, the user's repository in the directory: its `.git` written with
/// `file_editor` by name, through a link, and after the agent renamed the directory
/// holding it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_cannot_write_a_users_nested_repository() {
    let h = Harness::new();
    let mine = h.repo().join("mine");
    std::fs::create_dir(&mine).unwrap();
    git(&mine, &["init", "-q"]);
    git(&mine, &["commit", "-q", "--allow-empty", "-m", "mine"]);
    let config = read(&mine.join(".git/config"));
    let outside = Outside::new();
    let o = outside.display();
    let hook = format!("#!/bin/sh\ntouch {o}/hook-ran\n");
    let server = ScriptedServer::start(vec![
        edit("str_replace", "mine/.git/config"),
        reply().call(
            "file_editor",
            json!({"command": "create", "path": "mine/.git/hooks/pre-commit", "file_text": hook}),
        ),
        edit("create", "mine/.git/info/attributes"),
        reply().call(
            "terminal",
            json!({"command": "ln -s mine/.git m && ln -s mine/.git/hooks h && echo linked"}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "create", "path": "m/hooks/pre-commit", "file_text": hook}),
        ),
        edit("str_replace", "m/config"),
        edit("create", "h/post-checkout"),
        // Moving the repository's directory aside to put another in its place.
        reply().call("terminal", json!({"command": attempt("mv mine other")})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "edit a nested .git", &[]).await;
    if in_place_needs_namespaces("the_editor_cannot_write_a_users_nested_repository", &output) {
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let obs = observations(&h.events());
    for n in [0, 1, 2, 4, 5, 6] {
        refused(&obs[n], &format!("edit {n}"));
    }
    assert_eq!(obs[3]["output"], "linked");
    assert_eq!(obs[7]["output"], "BLOCKED");
    assert_eq!(read(&mine.join(".git/config")), config);
    assert!(!mine.join(".git/hooks/pre-commit").exists());
    assert!(!mine.join(".git/hooks/post-checkout").exists());
    assert!(!mine.join(".git/info/attributes").exists());
    users_next_git(&mine);
    outside.assert_untouched();
}

/// The user's repository for the in-place tests of what its configuration runs: husky's
/// layout (`core.hooksPath = .husky/_`, whose shim runs the tracked `.husky/pre-commit`),
/// a clean filter `sh tools/clean.sh`, and an included config in the work tree.
fn configured_repo(dir: &Path) {
    failing_python_repo(dir);
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(".husky/_/pre-commit", "#!/bin/sh\nsh .husky/pre-commit\n");
    write(".husky/pre-commit", "#!/bin/sh\ntrue\n");
    write("tools/clean.sh", "cat\n");
    write("tools/git.config", "[core]\n\tautocrlf = false\n");
    write(".gitattributes", "*.py filter=x\n");
    let _ = std::process::Command::new("chmod")
        .args(["+x", ".husky/_/pre-commit", ".husky/pre-commit"])
        .current_dir(dir)
        .status();
    git(dir, &["config", "core.hooksPath", ".husky/_"]);
    git(dir, &["config", "filter.x.clean", "sh tools/clean.sh"]);
    git(dir, &["config", "include.path", "../tools/git.config"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "--no-verify", "-m", "hooks"]);
}

/// In place: the work-tree files the user's git configuration runs are read-only to the
/// agent's shell and to `file_editor` alike, and the header says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_place_what_the_users_git_config_runs_is_read_only() {
    let h = Harness::new();
    configured_repo(h.repo());
    let outside = Outside::new();
    let o = outside.display();
    let plant = |file: &str| {
        reply().call(
            "terminal",
            json!({"command": attempt(&format!("echo 'touch {o}/ran-$$' >> {file}"))}),
        )
    };
    let server = ScriptedServer::start(vec![
        plant(".husky/pre-commit"),
        plant(".husky/_/pre-commit"),
        plant("tools/clean.sh"),
        plant("tools/git.config"),
        reply().call(
            "terminal",
            json!({"command": attempt(&format!("mv tools t2 && mkdir tools && echo 'touch {o}/ran' > tools/clean.sh"))}),
        ),
        edit("insert", ".husky/pre-commit"),
        edit("create", ".husky/_/post-checkout"),
        edit("insert", "tools/clean.sh"),
        edit("create", ".husky/_/pre-push"),
        edit("insert", "tools/git.config"),
        reply().call(
            "terminal",
            json!({"command": "echo fixed >> export.py && echo ok"}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h
        .run(&server.url(), "plant in tools", &["--in-place"])
        .await;
    if in_place_needs_namespaces("in_place_what_the_users_git_config_runs", &output) {
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("read-only to the agent: .git, ") && said.contains(".husky/_"),
        "{said}"
    );
    let obs = observations(&h.events());
    for (n, observation) in obs.iter().take(5).enumerate() {
        assert_eq!(observation["output"], "BLOCKED", "attempt {n}");
    }
    for (n, observation) in obs.iter().enumerate().skip(5).take(5) {
        refused(observation, &format!("edit {n}"));
    }
    for (file, text) in [
        (".husky/pre-commit", "#!/bin/sh\ntrue\n"),
        ("tools/clean.sh", "cat\n"),
    ] {
        assert_eq!(std::fs::read_to_string(h.repo().join(file)).unwrap(), text);
    }
    users_next_git(h.repo());
    outside.assert_untouched();
}

/// In place, a filter script the user's configuration names but the work tree lacks could
/// be made by the agent: the run is refused, saying why, before the model is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_place_is_refused_when_the_config_runs_a_missing_work_tree_file() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    git(
        h.repo(),
        &["config", "filter.x.smudge", "sh tools/smudge.sh"],
    );
    let server = ScriptedServer::start(vec![reply().call("finish", json!({"message": "x"}))])
        .await
        .unwrap();
    let output = h.run(&server.url(), "x", &["--in-place"]).await;
    assert!(!output.status.success());
    let said = stderr(&output);
    assert!(
        said.contains("--in-place cannot keep read-only") && said.contains("tools/smudge.sh"),
        "{said}"
    );
    assert_eq!(server.chat_requests().len(), 0);
}

/// Outside git, the agent makes the directory a repository whose `HEAD` is a symbolic
/// link to `refs/heads/main` (git accepts it), so no `.git` and no `HEAD` file: it is set
/// aside all the same, and the user's next git command there runs nothing it configured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_with_a_symlink_head_is_set_aside() {
    let h = Harness::new();
    let outside = Outside::new();
    let o = outside.display();
    let plant = format!(
        r#"git init -q --bare . && git config core.bare false && git config core.worktree "$PWD" &&
rm HEAD && ln -s refs/heads/main HEAD &&
printf '#!/bin/sh\ntouch {o}/fsmonitor-ran 2>/dev/null\n' > mon && chmod +x mon && git config core.fsmonitor "$PWD/mon" &&
echo x > f && echo planted"#
    );
    let output = super::plant_then_finish(&h, &plant, "make a repo", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(observations(&h.events())[0]["output"], "planted");
    assert!(
        crate::common::stdout(&output).contains("the agent made a git repository"),
        "{}",
        crate::common::stdout(&output)
    );
    users_next_git(h.repo());
    outside.assert_untouched();
}
