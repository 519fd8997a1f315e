//! The foundation: wright fixes a failing Python test in a real git repository.

use crate::common::observations;
use crate::common::shape;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use pretty_assertions::assert_eq;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

fn fix_script() -> Vec<Reply> {
    vec![
        reply()
            .text("Je lance les tests pour voir l'échec.")
            .call("terminal", json!({"command": "python3 -m unittest 2>&1 | tail -n 20"})),
        reply().call("file_editor", json!({"command": "view", "path": "export.py"})),
        reply().text("row_to_csv drops the last column.").call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
        ),
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call(
            "finish",
            json!({"message": "row_to_csv dropped the last value of each row; it now joins the whole row. python3 -m unittest passes."}),
        ),
    ]
}

async fn fixes_the_failing_test(extra: &[&str]) {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(fix_script()).await.unwrap();
    let output = h
        .run(
            &server.url(),
            "Le test test_export_csv échoue depuis le dernier commit, corrige-le.",
            extra,
        )
        .await;
    assert!(
        output.status.success(),
        "stderr:\n{}\nstdout:\n{}",
        stderr(&output),
        stdout(&output)
    );
    assert_eq!(server.remaining(), 0);

    // The user's checkout is untouched; the fix is on the conversation's branch.
    let id = h.conversation_id();
    let checkout = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(checkout.contains(BUG), "the user's checkout was modified");
    let on_branch = git(h.repo(), &["show", &format!("wright/{id}:export.py")]);
    assert!(
        on_branch.contains(FIX) && !on_branch.contains(BUG),
        "{on_branch}"
    );

    // `wright apply` takes it, and the tests pass for real.
    let applied = h.wright(&["apply", &id[..15]], &[]).await;
    assert!(applied.status.success(), "{}", stderr(&applied));
    let source = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(source.contains(FIX) && !source.contains(BUG), "{source}");
    let tests = std::process::Command::new("python3")
        .args(["-m", "unittest"])
        .current_dir(h.repo())
        .output()
        .unwrap();
    assert!(tests.status.success());

    // Every step is in the log, in order: actions before their observations.
    let events = h.events();
    assert_eq!(
        shape(&events),
        vec![
            "start",
            "message",
            "state:running",
            "usage",
            "message",
            "action:terminal",
            "observation:terminal",
            "usage",
            "action:file_editor",
            "observation:file_editor",
            "usage",
            "message",
            "action:file_editor",
            "observation:file_editor",
            "usage",
            "action:terminal",
            "observation:terminal",
            "usage",
            "action:finish",
            // wright's account of the change, read before the finish is taken.
            "account",
            "observation:finish",
            "state:finished",
            "changes",
        ]
    );
    let ids: Vec<u64> = events.iter().map(|e| e.id).collect();
    assert_eq!(ids, (0..events.len() as u64).collect::<Vec<_>>());
    let obs = observations(&events);
    assert_eq!(obs[0]["exit_code"], 0, "a pipeline's status is tail's");
    assert!(
        obs[0]["output"]
            .as_str()
            .unwrap()
            .contains("FAIL: test_export_csv"),
        "{}",
        obs[0]
    );
    assert!(obs[1]["output"]
        .as_str()
        .unwrap()
        .contains("def row_to_csv(row):"));
    assert!(obs[2]["output"]
        .as_str()
        .unwrap()
        .starts_with("Edited export.py."));
    assert_eq!(obs[3]["exit_code"], 0);
    assert!(obs[3]["output"].as_str().unwrap().contains("OK"));

    // Request N+1 extends request N byte for byte (messages come last in the body).
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 5);
    for pair in requests.windows(2) {
        let (previous, next) = (&pair[0].body, &pair[1].body);
        assert!(previous.ends_with(b"]}"));
        let stem = &previous[..previous.len() - 2];
        assert!(
            next.starts_with(stem),
            "request does not extend the previous one"
        );
        assert!(next.len() > previous.len());
    }
    // The observation of the failing run reached the model.
    let second = requests[1].json();
    let last = second["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool");
    assert!(last["content"]
        .as_str()
        .unwrap()
        .contains("FAIL: test_export_csv"));

    // The report shows the summary and the diff.
    let out = stdout(&output);
    assert!(
        out.contains("── finished: the model called finish · 5 steps"),
        "{out}"
    );
    assert!(
        out.contains(&format!("-{BUG}")) && out.contains(&format!("+{FIX}")),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixes_a_failing_test_streamed() {
    fixes_the_failing_test(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixes_a_failing_test_without_streaming() {
    fixes_the_failing_test(&["--no-stream"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixes_a_failing_test_unconfined() {
    fixes_the_failing_test(&["--sandbox", "none"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_prints_the_log_lines() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(fix_script()).await.unwrap();
    let output = h.run(&server.url(), "fix the test", &["--json"]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let log = std::fs::read_to_string(h.log_path()).unwrap();
    assert_eq!(stdout(&output), log);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shell_never_sees_the_api_key() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "env; echo HOME=$HOME"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let url = server.url();
    let output = h
        .wright(
            &[
                "run",
                "--sandbox",
                "none",
                "--model",
                "test-model",
                "print the environment",
            ],
            &[
                ("OPENAI_BASE_URL", url.as_str()),
                ("OPENAI_API_KEY", "sk-wright-test-secret"),
                ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
            ],
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let env = observations(&h.events())[0]["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(env.contains("PATH="), "{env}");
    assert!(
        !env.contains("sk-wright-test-secret") && !env.contains("aws-secret"),
        "{env}"
    );
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_place_edits_the_checkout_and_refuses_a_dirty_tree() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    std::fs::write(h.repo().join("notes.txt"), "uncommitted work").unwrap();
    let server = ScriptedServer::start(fix_script()).await.unwrap();
    let refused = h.run(&server.url(), "fix it", &["--in-place"]).await;
    if crate::common::in_place_needs_namespaces("in_place_edits_the_checkout", &refused) {
        return;
    }
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("--in-place refuses to work in a tree with uncommitted changes"),
        "{}",
        stderr(&refused)
    );
    assert!(server.chat_requests().is_empty());

    let output = h
        .run(&server.url(), "fix it", &["--in-place", "--force"])
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let source = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(source.contains(FIX));
    assert_eq!(
        std::fs::read_to_string(h.repo().join("notes.txt")).unwrap(),
        "uncommitted work"
    );
    // The user's own changes were there: nothing is committed for them.
    assert!(
        stdout(&output).contains("left uncommitted"),
        "{}",
        stdout(&output)
    );
    assert_eq!(git(h.repo(), &["log", "--format=%s"]).trim(), "CSV export");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discard_drops_the_branch_and_the_clone() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(fix_script()).await.unwrap();
    let output = h.run(&server.url(), "fix it", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let dir = h.log_path().parent().unwrap().to_path_buf();
    let id = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(git(h.repo(), &["branch", "--list"]).contains(&format!("wright/{id}")));
    let discarded = h.wright(&["discard", &id], &[]).await;
    assert!(discarded.status.success(), "{}", stderr(&discarded));
    assert!(!git(h.repo(), &["branch", "--list"]).contains("wright/"));
    let clone = h.data.path().join("wright/workspaces").join(&id);
    assert!(!clone.exists(), "{} is still there", clone.display());
    assert!(std::fs::read_to_string(h.repo().join("export.py"))
        .unwrap()
        .contains(BUG));
}
