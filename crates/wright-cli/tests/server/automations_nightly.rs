//! The ready-made automation "a nightly run of the test suite that opens (or updates) an
//! issue when it fails", end to end on the real `wright serve`: a schedule with a `forge`
//! and `tests`, on a clone of a real git remote. Each night is a server start with the
//! schedule's last time written three days back, so its missed night fires once at start
//! (`missed = "run_once"`, the schedule's own clock, no sleeping): the first failing night
//! opens an issue through the scripted forge's documented `POST /repos/{owner}/{repo}/issues`
//! with the failing output; the second finds it open (`GET …/issues/N`) and comments on
//! it instead of opening another; once the fix is on the remote, a passing night opens
//! nothing; after the issue is closed, a failing night opens a new one.

use super::automations::store_token;
use super::automations::wait_for_firing;
use super::automations::TOKEN;
use super::*;
use wright_testkit::GitRemote;
use wright_testkit::ScriptedForge;

const TESTS: &str = "python3 -m unittest";

/// A night's model: it runs the tests and finishes (a finish while the tests fail is sent
/// back twice by the retest assist, then the run stops: enough finishes for that).
async fn night() -> ScriptedServer {
    let mut script = vec![reply().call("terminal", json!({"command": TESTS}))];
    for _ in 0..3 {
        script.push(reply().call("finish", json!({"message": "Ran the test suite."})));
    }
    ScriptedServer::start(script).await.unwrap()
}

/// Starts the server for one night: its missed night fires once at start.
async fn start_night(h: &Harness, model: &ScriptedServer) -> Served {
    let last = h
        .data
        .path()
        .join("wright/automations/nightly/schedule-last.txt");
    std::fs::create_dir_all(last.parent().unwrap()).unwrap();
    std::fs::write(&last, "2020-01-01T00:00:00+00:00").unwrap();
    Served::start(
        h,
        &["--base-url", &model.url(), "--model", "test-model"],
        &[],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_night_opens_an_issue_the_next_comments_on_it_a_passing_one_opens_nothing() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let remotes = tempfile::tempdir().unwrap();
    let remote = GitRemote::serve(h.repo(), remotes.path()).unwrap();
    let forge = ScriptedForge::start(TOKEN).await.unwrap();
    let config = h.data.path().join("config/wright");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[automations.nightly]\non = \"schedule\"\nschedule = \"0 3 * * *\"\nmissed = \"run_once\"\n\
             forge = \"github\"\nrepository = \"{}\"\ntests = \"{TESTS}\"\n\
             task = \"Run the test suite with `{TESTS}` and say how it went; change nothing.\"\n\
             max_steps = 10\n\n[automations.nightly.result]\nissue = true\n\
             token_secret = \"GITHUB_TOKEN\"\napi_url = \"{}\"\napi_repository = \"octocat/Hello-World\"\n",
            remote.url(),
            forge.url()
        ),
    )
    .unwrap();
    store_token(&h);
    let model = night().await;

    // Night 1: the tests fail, an issue is opened with their output.
    let served = start_night(&h, &model).await;
    let first = wait_for_firing(&served, 0, &["issue_opened", "failed"]).await;
    let issues = forge.issues();
    assert_eq!(issues.len(), 1, "{first:#}");
    assert_eq!(issues[0]["title"], "wright: the tests fail (nightly)");
    let body = issues[0]["body"].as_str().unwrap();
    assert!(body.contains("ran `python3 -m unittest`"), "{body}");
    assert!(body.contains("it exited 1"), "{body}");
    assert!(body.contains("FAILED (failures=1)"), "{body}");
    assert!(
        body.contains(first["conversation"].as_str().unwrap()),
        "{body}"
    );
    assert_eq!(first["issue"], 1, "{first:#}");
    drop(served);

    // Night 2: still failing, the issue is open: a comment on it, no second issue.
    let model = night().await;
    let served = start_night(&h, &model).await;
    let second = wait_for_firing(&served, 1, &["commented", "issue_opened", "failed"]).await;
    assert!(
        second["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["kind"] == "commented"),
        "{second:#}"
    );
    assert_eq!(forge.issues().len(), 1);
    let comments = forge.comments();
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert_eq!(comments[0]["issue"], 1);
    assert!(comments[0]["body"]
        .as_str()
        .unwrap()
        .contains("FAILED (failures=1)"));
    drop(served);

    // Night 3: the fix is on the remote; the tests pass, nothing is opened.
    std::fs::write(
        h.repo().join("export.py"),
        std::fs::read_to_string(h.repo().join("export.py"))
            .unwrap()
            .replace(BUG, FIX),
    )
    .unwrap();
    git(h.repo(), &["commit", "-qam", "Keep the last column"]);
    let bare = remote.bare.display().to_string();
    git(h.repo(), &["push", "-q", &bare, "HEAD:main"]);
    let model = night().await;
    let served = start_night(&h, &model).await;
    let third = wait_for_firing(
        &served,
        2,
        &["tests_passed", "issue_opened", "commented", "failed"],
    )
    .await;
    assert_eq!(third["outcome"], "tests_passed", "{third:#}");
    assert_eq!(forge.issues().len(), 1);
    assert_eq!(forge.comments().len(), 1);
    drop(served);

    // Night 4: failing again after the issue was closed: a new issue.
    git(h.repo(), &["revert", "--no-edit", "HEAD"]);
    git(h.repo(), &["push", "-q", &bare, "HEAD:main"]);
    forge.close_issue(1);
    let model = night().await;
    let served = start_night(&h, &model).await;
    wait_for_firing(&served, 3, &["issue_opened", "commented", "failed"]).await;
    let issues = forge.issues();
    assert_eq!(issues.len(), 2, "{issues:?}");
    assert_eq!(forge.comments().len(), 1);
    let methods: Vec<String> = forge
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        methods,
        [
            "POST /repos/octocat/Hello-World/issues",
            "GET /repos/octocat/Hello-World/issues/1",
            "POST /repos/octocat/Hello-World/issues/1/comments",
            "GET /repos/octocat/Hello-World/issues/1",
            "POST /repos/octocat/Hello-World/issues",
        ]
    );
    assert_eq!(forge.violations(), Vec::<String>::new());
    drop(served);
}
