//! `wright run --parallel 3`: three agents on one task, each in its own clone and branch
//! (here each on its own profile's server, so each follows its own script), judged by a
//! check run on each branch in the sandbox; the one that passes is offered for `wright
//! apply`, by the exact command printed, and `wright ls` shows the three together.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::ServerOptions;
use wright_testkit::BUG;
use wright_testkit::FIX;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_runs_one_passes_the_check_and_is_offered() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let wrong = "    return \",\".join(str(v) for v in row[1:])";
    // A llama-server with one slot, as far as its /props says.
    let a = ScriptedServer::start_with(
        vec![
            reply().call(
                "file_editor",
                json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": wrong}),
            ),
            reply().call("finish", json!({"message": "fixed"})),
        ],
        ServerOptions {
            llama_cpp_context: Some(32768),
            ..ServerOptions::default()
        },
    )
    .await
    .unwrap();
    let b = ScriptedServer::start(vec![
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
        ),
        reply().call("finish", json!({"message": "joins the whole row"})),
    ])
    .await
    .unwrap();
    let c = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "true"})),
        reply().call("finish", json!({"message": "nothing to do"})),
    ])
    .await
    .unwrap();
    let dir = h.data.path().join("config/wright");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "[profiles.a]\nbase_url = \"{}\"\nmodel = \"test-model\"\n[profiles.b]\nbase_url = \"{}\"\nmodel = \"test-model\"\n[profiles.c]\nbase_url = \"{}\"\nmodel = \"test-model\"\n",
            a.url(),
            b.url(),
            c.url()
        ),
    )
    .unwrap();
    let output = h
        .wright(
            &[
                "run",
                "--parallel",
                "3",
                "--profiles",
                "a,b,c",
                "-j",
                "2",
                "--map",
                "off",
                "--first-look",
                "off",
                "--check",
                "python3 -m unittest",
                "fix test_export_csv",
            ],
            &[],
        )
        .await;
    let (out, err) = (stdout(&output), stderr(&output));
    assert!(output.status.success(), "{err}\n{out}");
    assert_eq!(
        (a.remaining(), b.remaining(), c.remaining()),
        (0, 0, 0),
        "{err}"
    );
    assert!(err.contains("llama-server with one slot"), "{err}");
    assert!(row_of(&out, 3).contains(" unchecked "), "{out}");

    // The table: one row per run; #2 passed, #1 failed the check, #3 changed nothing.
    let row = |n: usize| row_of(&out, n);
    assert!(row(1).contains(" failed "), "{out}");
    assert!(row(2).contains(" passed "), "{out}");
    assert!(row(2).contains("+1 -1 (1 file)"), "{out}");
    assert!(out.contains("prefix cache:"), "{out}");
    let id = row(2).split_whitespace().nth(1).unwrap().to_string();
    let command = format!("take it: wright apply {id}");
    assert!(out.contains(&command), "{out}");
    assert!(out.contains("the others stay as branches"), "{out}");

    // The exact command takes the passing branch.
    let applied = h.wright(&["apply", &id], &[]).await;
    assert!(applied.status.success(), "{}", stderr(&applied));
    let source = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(source.contains(FIX), "{source}");
    // The failing run's branch is still there, until discarded.
    let branches = git(h.repo(), &["branch", "--list", "wright/*"]);
    assert_eq!(branches.lines().count(), 2, "{branches}");

    // `wright ls` shows the three together.
    let listed = h.wright(&["ls"], &[]).await;
    let listed = stdout(&listed);
    let header = listed
        .lines()
        .position(|line| line.starts_with("group g-") && line.ends_with("(3 conversations):"))
        .unwrap_or_else(|| panic!("{listed}"));
    let members: Vec<&str> = listed.lines().skip(header + 1).take(3).collect();
    assert!(
        members.iter().all(|line| line.starts_with("  ")),
        "{listed}"
    );
    assert!(members.iter().any(|line| line.contains(&id)), "{listed}");
}

/// The table's row of run `n`.
fn row_of(out: &str, n: usize) -> String {
    out.lines()
        .find(|line| line.trim_start().starts_with(&format!("{n} ")))
        .unwrap_or_else(|| panic!("no row {n}:\n{out}"))
        .to_string()
}
