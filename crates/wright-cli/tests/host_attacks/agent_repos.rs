//! Repositories where the agent works directly (outside git, or nested in an in-place
//! checkout): the user's own stay read-only to it, and any it makes — a `.git`, a bare
//! layout, one hidden in an unreadable directory, one made while wright commits, one left
//! by a run that never reached its end — is set aside before anyone's git trusts it.

use super::plant_then_finish;
use super::Outside;
use crate::common::observations;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// The user's next git command in `dir`, on the host.
fn users_git(dir: &std::path::Path, args: &[&str]) {
    let _ = std::process::Command::new("git")
        .args(["-c", "user.name=u", "-c", "user.email=u@u"])
        .args(args)
        .current_dir(dir)
        .output();
}

/// Outside git the agent works in the directory itself: a repository it makes there must
/// not become "the user's repository" for the next run and `wright apply`, whose git runs
/// that repository's hooks on the host (from a review).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_the_agent_made_is_not_taken_for_the_users() {
    let h = Harness::new();
    std::fs::create_dir_all(h.repo().join("mine/.git")).unwrap();
    let outside = Outside::new();
    let o = outside.display();
    let plant = format!(
        r#"git init -q && git config user.email a@a && git config user.name a &&
printf '#!/bin/sh\ntouch {o}/hook-ran\n' > .git/hooks/post-merge && chmod +x .git/hooks/post-merge &&
echo x > f && git add f && git commit -qm init && mkdir -p deep/er && git init -q deep/er && echo planted"#
    );
    let output = plant_then_finish(&h, &plant, "make a repo", &[]).await;
    if crate::common::in_place_needs_namespaces("a_repository_the_agent_made", &output) {
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(observations(&h.events())[0]["output"], "planted");
    // Both repositories are set aside and said so; the user's own one is left.
    let said = stdout(&output);
    assert!(said.contains("the agent made a git repository"), "{said}");
    assert!(!h.repo().join(".git").exists() && !h.repo().join("deep/er/.git").exists());
    assert!(h
        .repo()
        .join(".git.wright-quarantined/hooks/post-merge")
        .exists());
    assert!(h.repo().join("mine/.git").is_dir());
    // The next run there is not in "the user's repository", and there is nothing to apply.
    let data2 = tempfile::tempdir().unwrap();
    let d2 = data2.path().display().to_string();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo y >> f && echo ok"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let url = server.url();
    let env = [("XDG_DATA_HOME", d2.as_str())];
    let second = h
        .wright(
            &[
                "run",
                "--base-url",
                &url,
                "--model",
                "test-model",
                "change f",
            ],
            &env,
        )
        .await;
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        stdout(&second).contains("not a git repository"),
        "{}",
        stdout(&second)
    );
    let listed = std::fs::read_dir(data2.path().join("wright/conversations")).unwrap();
    let id = listed.flatten().next().unwrap().file_name();
    let id = id.to_string_lossy().into_owned();
    let applied = h.wright(&["apply", &id], &env).await;
    assert_ne!(applied.status.code(), Some(0), "{}", stderr(&applied));
    outside.assert_untouched();
}

/// Outside git, the agent makes the directory a repository with no `.git` at all: a bare
/// layout whose config says it has a work tree here (from a second review).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_without_a_dot_git_is_set_aside() {
    let h = Harness::new();
    let outside = Outside::new();
    let o = outside.display();
    let plant = format!(
        r#"git init -q --bare . && git config core.bare false && git config core.worktree "$PWD" &&
printf '#!/bin/sh\ntouch {o}/fsmonitor-ran 2>/dev/null\n' > "$PWD/mon" && chmod +x mon && git config core.fsmonitor "$PWD/mon" &&
echo x > f && echo planted"#
    );
    let output = plant_then_finish(&h, &plant, "make a bare repo", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(observations(&h.events())[0]["output"], "planted");
    assert!(
        stdout(&output).contains("the agent made a git repository"),
        "{}",
        stdout(&output)
    );
    users_git(h.repo(), &["status", "--short"]);
    outside.assert_untouched();
}

/// A repository of the user's inside the workspace is read-only to the agent (from a
/// second review).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_repository_inside_the_workspace_takes_no_hook() {
    let h = Harness::new();
    let mine = h.repo().join("mine");
    std::fs::create_dir(&mine).unwrap();
    git(&mine, &["init", "-q"]);
    git(&mine, &["commit", "-q", "--allow-empty", "-m", "mine"]);
    let outside = Outside::new();
    let plant = format!(
        "printf '#!/bin/sh\\ntouch {}/hook-ran\\n' > mine/.git/hooks/pre-commit && chmod +x mine/.git/hooks/pre-commit && echo planted || echo refused",
        outside.display()
    );
    let output = plant_then_finish(&h, &plant, "plant a hook", &[]).await;
    if crate::common::in_place_needs_namespaces("a_users_repository_inside_the_workspace", &output)
    {
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let said = observations(&h.events())[0]["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(said.ends_with("refused"), "{said}");
    users_git(&mine, &["commit", "-q", "--allow-empty", "-m", "x"]);
    outside.assert_untouched();
    assert!(
        mine.join(".git").is_dir(),
        "the user's own repository was set aside"
    );
}

/// The agent makes directories holding repositories unreadable (0311) or unwritable
/// (0555), to hide them from the walk or keep them from being set aside (from a second
/// review; as root the modes change nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repositories_in_unreadable_or_unwritable_directories_are_set_aside() {
    let h = Harness::new();
    let outside = Outside::new();
    let o = outside.display();
    let plant = format!(
        r#"for d in hidden stuck; do mkdir $d && git init -q $d &&
printf '#!/bin/sh\ntouch {o}/ran-%s 2>/dev/null\n' $d > $d/mon && chmod +x $d/mon &&
git -C $d config core.fsmonitor "$PWD/$d/mon" || exit 1; done &&
chmod 0311 hidden && chmod 0555 stuck && echo planted"#
    );
    let output = plant_then_finish(&h, &plant, "hide repos", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(observations(&h.events())[0]["output"], "planted");
    for d in ["hidden", "stuck"] {
        users_git(&h.repo().join(d), &["status", "--short"]);
    }
    for d in ["hidden", "stuck"] {
        let _ = std::process::Command::new("chmod")
            .args(["0755", &h.repo().join(d).display().to_string()])
            .status();
    }
    outside.assert_untouched();
}

/// A run killed before its end (the second Ctrl-C, SIGKILL) never sets aside what its
/// agent made: the next run in that directory does, before anything trusts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_left_by_a_killed_run_is_set_aside_by_the_next() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "git init -q && echo made"})),
        reply().call("terminal", json!({"command": "sleep 60"})),
    ])
    .await
    .unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args([
            "run",
            "--base-url",
            &server.url(),
            "--model",
            "test-model",
            "x",
        ])
        .current_dir(h.repo())
        .env("XDG_DATA_HOME", h.data.path())
        .env("XDG_CACHE_HOME", h.data.path().join("cache"))
        .env("XDG_CONFIG_HOME", h.data.path().join("config"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !h.repo().join(".git").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the agent never made its repository"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    assert!(h.repo().join(".git").exists());
    let next = plant_then_finish(&h, "echo next", "next", &[]).await;
    assert!(next.status.success(), "{}", stderr(&next));
    assert!(
        stderr(&next).contains("an earlier run's agent made a git repository"),
        "{}",
        stderr(&next)
    );
    assert!(!h.repo().join(".git").exists());
    assert!(
        stdout(&next).contains("not a git repository"),
        "{}",
        stdout(&next)
    );
}
