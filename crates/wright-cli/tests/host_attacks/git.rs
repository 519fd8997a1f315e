//! Git on what the agent wrote: its clone's config, attributes, hooks, alternates and refs
//! must never make a git outside the sandbox run a program or read another repository.

use super::plant_then_finish;
use super::Outside;
use crate::common::observations;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// Shell lines that plant every configured program git can be made to run, each leaving
/// evidence in `outside` if it runs where it can write there (outside the sandbox).
pub fn plant_programs(outside: &Outside) -> String {
    let o = outside.display();
    format!(
        r#"printf '#!/bin/sh\ntouch {o}/program-ran\ncat "${{1:--}}" 2>/dev/null\n' > "$PWD/prog.sh" && chmod +x "$PWD/prog.sh" &&
git config diff.x.textconv "$PWD/prog.sh" && git config diff.external "$PWD/prog.sh" &&
git config core.fsmonitor "$PWD/prog.sh" && git config filter.x.clean "$PWD/prog.sh" &&
git config filter.x.smudge "$PWD/prog.sh" && git config core.pager "$PWD/prog.sh" &&
git config core.hooksPath "$PWD/hooks" && mkdir -p hooks && cp prog.sh hooks/post-commit &&
cp prog.sh hooks/pre-commit && echo '* diff=x filter=x' > .gitattributes"#
    )
}

async fn failed_commit_runs_nothing_outside(extra: &[&str]) {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let outside = Outside::new();
    let plant = format!(
        "{} && echo changed >> export.py && touch .git/index.lock && echo planted",
        plant_programs(&outside)
    );
    let output = plant_then_finish(&h, &plant, "plant programs", extra).await;
    let obs = observations(&h.events());
    assert_eq!(obs[0]["output"], "planted", "{}", stderr(&output));
    outside.assert_untouched();
    // The commit could not be made: an error, with the clone kept and named.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("could not commit"), "{said}");
    assert!(said.contains("kept"), "{said}");
    assert!(!stdout(&output).contains("program-ran"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_commit_keeps_the_clone_and_runs_no_planted_program() {
    failed_commit_runs_nothing_outside(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_commit_runs_no_planted_program_with_docker() {
    if crate::docker::docker_or_skip("a_failed_commit_runs_no_planted_program_with_docker") {
        let image = crate::docker::IMAGE;
        failed_commit_runs_nothing_outside(&["--sandbox", "docker", "--docker-image", image]).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_of_a_clone_runs_no_planted_program() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let outside = Outside::new();
    let plant = format!(
        "{} && echo changed >> export.py && echo planted",
        plant_programs(&outside)
    );
    let output = plant_then_finish(&h, &plant, "plant programs", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    outside.assert_untouched();
    // The change is there, as text, on the branch.
    assert!(stdout(&output).contains("+changed"), "{}", stdout(&output));
    let id = h.conversation_id();
    let shown = git(h.repo(), &["show", &format!("wright/{id}:export.py")]);
    assert!(shown.ends_with("changed\n"), "{shown}");
}

/// Another repository with a committed secret, and its commit id.
fn other_repository() -> (tempfile::TempDir, String) {
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("secret.txt"), "other repo secret\n").unwrap();
    git(other.path(), &["init", "-q"]);
    git(other.path(), &["add", "."]);
    git(other.path(), &["commit", "-q", "-m", "secret"]);
    let commit = git(other.path(), &["rev-parse", "HEAD"]).trim().to_string();
    (other, commit)
}

async fn plant_in_the_clone(plant: String) -> (Harness, std::process::Output, String) {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let (other, secret_commit) = other_repository();
    let plant = plant
        .replace("OTHER", &other.path().display().to_string())
        .replace("SECRET_COMMIT", &secret_commit);
    let output = plant_then_finish(&h, &plant, "reach another repository", &[]).await;
    let all = format!("{}{}", stdout(&output), stderr(&output));
    assert!(!all.contains("other repo secret"), "{all}");
    // The user's repository never received the other repository's objects.
    let present = std::process::Command::new("git")
        .args(["cat-file", "-e", &secret_commit])
        .current_dir(h.repo())
        .output()
        .unwrap();
    assert!(
        !present.status.success(),
        "the other repository's commit reached the user's repository"
    );
    drop(other);
    (h, output, secret_commit)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alternates_and_a_forged_parent_do_not_import_another_repository() {
    // A commit object written by hand whose parent is the other repository's commit: git
    // inside the sandbox cannot read that parent, a git outside could.
    let plant = r#"echo OTHER/.git/objects >> .git/objects/info/alternates &&
t=$(git write-tree) &&
c=$(printf 'tree %s\nparent %s\nauthor a <a@a> 0 +0000\ncommitter a <a@a> 0 +0000\n\nx\n' $t SECRET_COMMIT | git hash-object -t commit -w --stdin --literally) &&
git update-ref refs/heads/$(git branch --show-current) $c && echo changed >> export.py && echo planted"#;
    let (_h, output, _) = plant_in_the_clone(plant.to_string()).await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("kept"), "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_ref_pointing_into_another_repository_is_not_followed() {
    let plant = r#"echo OTHER/.git/objects >> .git/objects/info/alternates &&
b=$(git branch --show-current) && ln -sf OTHER/.git/refs/heads/main .git/refs/heads/$b &&
echo changed >> export.py && echo planted"#;
    let (h, output, _) = plant_in_the_clone(plant.to_string()).await;
    // Inside the sandbox the link leads nowhere (or, without a root of its own, to a file
    // it may not read): git either makes a branch of the agent's own files, handed over as
    // that and holding nothing of the other's, or fails and the clone is kept.
    if output.status.code() == Some(1) {
        assert!(stderr(&output).contains("kept"), "{}", stderr(&output));
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let id = h.conversation_id();
    let files = git(
        h.repo(),
        &["ls-tree", "-r", "--name-only", &format!("wright/{id}")],
    );
    assert!(!files.contains("secret.txt"), "{files}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_copies_what_the_agent_left_without_following_it() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let outside = Outside::new();
    let o = outside.display();
    let server = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": format!("mkfifo pipe && ln -s {o}/target.txt link && ln -s {o} dirlink && echo changed >> export.py && echo ok")}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "leave traps", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let id = h.conversation_id();
    let forked = h.wright(&["fork", &id], &[]).await;
    assert!(forked.status.success(), "{}", stderr(&forked));
    outside.assert_untouched();
}

/// A run in a subdirectory of the repository works in the same subdirectory of the clone,
/// which the agent can replace with a link: on resume, wright's own process (the file
/// editor) must not take the link's target for the workspace (from a review).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subdirectory_swapped_for_a_link_is_not_the_workspace_on_resume() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    std::fs::create_dir(h.repo().join("sub")).unwrap();
    std::fs::write(h.repo().join("sub/a.txt"), "a\n").unwrap();
    git(h.repo(), &["add", "."]);
    git(h.repo(), &["commit", "-q", "-m", "sub"]);
    let outside = Outside::new();
    let o = outside.display();
    // The first run works in sub/ (its files are there), then replaces it with a link.
    let server = ScriptedServer::start(vec![
        reply().call("file_editor", json!({"command": "view", "path": "a.txt"})),
        reply().call(
            "terminal",
            json!({"command": format!("cd .. && rm -rf sub && ln -s {o} sub && echo swapped")}),
        ),
        reply().call("terminal", json!({"command": "echo never"})),
    ])
    .await
    .unwrap();
    let sub = h.repo().join("sub").display().to_string();
    let output = h
        .run(&server.url(), "swap", &["-C", &sub, "--max-steps", "2"])
        .await;
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let obs = observations(&h.events());
    assert!(
        obs[0]["output"].as_str().unwrap().contains("1\ta"),
        "{}",
        obs[0]
    );
    assert!(
        obs[1]["output"].as_str().unwrap().starts_with("swapped"),
        "{}",
        obs[1]
    );
    let id = h.conversation_id();
    let server = ScriptedServer::start(vec![
        reply().call(
            "file_editor",
            json!({"command": "view", "path": "target.txt"}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "create", "path": "planted-by-the-agent", "file_text": "x"}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let url = server.url();
    let resumed = h.resume(&url, &id, "go on").await;
    // Refused, saying why; nothing read or written outside.
    assert_eq!(resumed.status.code(), Some(2), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains("not a directory"),
        "{}",
        stderr(&resumed)
    );
    let log = std::fs::read_to_string(h.log_path()).unwrap();
    assert!(!log.contains("original"), "read outside");
    outside.assert_untouched();
}

/// A branch that changes what configures git or git-lfs (`.gitattributes`, `.lfsconfig`)
/// makes the host's merge run the user's filters and drivers on files the agent chose, and
/// git-lfs talk to a server of its choosing: `wright apply` takes it only when told to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_asks_before_taking_git_configuration() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let plant = "printf '[lfs]\\n\\turl = http://attacker.invalid/lfs\\n' > .lfsconfig && echo '* filter=lfs diff=lfs merge=lfs' > .gitattributes && echo fixed >> export.py && echo planted";
    let output = plant_then_finish(&h, plant, "configure lfs", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("note: it changes .gitattributes, .lfsconfig"),
        "{}",
        stdout(&output)
    );
    let id = h.conversation_id();
    let refused = h.wright(&["apply", &id], &[]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains(".gitattributes") && said.contains(".lfsconfig"),
        "{said}"
    );
    assert!(said.contains("--with-git-config"), "{said}");
    assert!(!h.repo().join(".lfsconfig").exists(), "taken anyway");
    let taken = h.wright(&["apply", &id, "--with-git-config"], &[]).await;
    assert!(taken.status.success(), "{}", stderr(&taken));
    assert!(h.repo().join(".lfsconfig").exists());
}

/// `--cherry-pick` checks out every commit of the branch: a `.gitattributes` the agent
/// committed and then removed still runs the user's own filter on its files, so every
/// commit is looked at, not only the end result (from a review).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cherry_pick_does_not_take_git_configuration_from_an_intermediate_commit() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let marks = tempfile::tempdir().unwrap();
    let mark = marks.path().join("smudge-ran");
    // Picking commits needs the user's identity.
    git(h.repo(), &["config", "user.name", "u"]);
    git(h.repo(), &["config", "user.email", "u@u"]);
    // The user's own filter, as `git lfs install` configures one.
    git(
        h.repo(),
        &[
            "config",
            "filter.x.smudge",
            &format!("touch {} && cat", mark.display()),
        ],
    );
    let plant = "A='-c user.name=a -c user.email=a@a' && \
echo '*.txt filter=x' > .gitattributes && echo data > a.txt && git add .gitattributes a.txt && \
git $A commit -qm one && git rm -q .gitattributes && git $A commit -qm two && echo planted";
    let output = plant_then_finish(&h, plant, "two commits", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(observations(&h.events())[0]["output"], "planted");
    let id = h.conversation_id();
    let applied = h.wright(&["apply", &id, "--cherry-pick"], &[]).await;
    assert_eq!(applied.status.code(), Some(2), "{}", stderr(&applied));
    assert!(
        stderr(&applied).contains(".gitattributes"),
        "{}",
        stderr(&applied)
    );
    assert!(!mark.exists(), "the user's filter ran on the agent's file");
    // Told to, it picks both commits (none of them empty).
    let taken = h
        .wright(&["apply", &id, "--cherry-pick", "--with-git-config"], &[])
        .await;
    assert!(taken.status.success(), "{}", stderr(&taken));
}

/// Hooks kept in the tree (`core.hooksPath = .githooks`, as husky and lefthook set up):
/// the merge brings the agent's version of them, so `wright apply` runs no hook, and a
/// branch changing them counts as changing git's configuration (from a review).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_does_not_run_a_hook_the_agent_wrote_in_the_tree() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    std::fs::create_dir(h.repo().join(".githooks")).unwrap();
    let hook = h.repo().join(".githooks/post-merge");
    std::fs::write(&hook, "#!/bin/sh\nexit 0\n").unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&hook)
        .status()
        .unwrap();
    git(h.repo(), &["add", ".githooks"]);
    git(h.repo(), &["commit", "-qm", "hooks"]);
    git(h.repo(), &["config", "core.hooksPath", ".githooks"]);
    let outside = Outside::new();
    let plant = format!(
        "printf '#!/bin/sh\\ntouch {}/hook-ran\\n' > .githooks/post-merge && echo fixed >> export.py && echo planted",
        outside.display()
    );
    let output = plant_then_finish(&h, &plant, "change a hook", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let id = h.conversation_id();
    let refused = h.wright(&["apply", &id], &[]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains(".githooks/post-merge"),
        "{}",
        stderr(&refused)
    );
    let taken = h.wright(&["apply", &id, "--with-git-config"], &[]).await;
    assert!(taken.status.success(), "{}", stderr(&taken));
    outside.assert_untouched();
}
