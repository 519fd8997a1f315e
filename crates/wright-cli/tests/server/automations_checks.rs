//! The ready-made automation "fix the failing check on a branch", end to end: a signed
//! GitHub-shaped `check_run` webhook (completed, failure, on `release`) starts a
//! conversation on a clone of the real remote at that branch's head, with the failing
//! job's log — fetched on the host through the scripted forge's documented
//! `GET …/actions/jobs/{job_id}/logs` (302 to a download URL that gets no token), its end
//! kept — in the task as untrusted content; the scripted model fixes the test; the fix is
//! pushed as `wright/NAME-release` and a pull request asks to merge it into `release`. A
//! second failure on the branch whose log cannot be had still runs, says so in its record
//! and task, and updates that pull request. A passing check, or one on another branch,
//! starts nothing.

use super::automations::hmac_sha256;
use super::automations::store_token;
use super::automations::wait_for_step;
use super::automations::SECRET;
use super::automations::TOKEN;
use super::*;
use wright_testkit::GitRemote;
use wright_testkit::ScriptedForge;

const JOB: u64 = 128620228;

/// GitHub's `check_run` event, `completed`, in the documented shape (trimmed).
fn check_run(id: u64, conclusion: &str, branch: &str, head: &str) -> Value {
    json!({
        "action": "completed",
        "check_run": {
            "id": id,
            "name": "tests",
            "head_sha": head,
            "url": format!("https://api.github.com/repos/Codertocat/Hello-World/check-runs/{id}"),
            "html_url": format!("https://github.com/Codertocat/Hello-World/runs/{id}"),
            "status": "completed",
            "conclusion": conclusion,
            "output": {"title": "1 test failed", "summary": "test_export failed", "text": null},
            "check_suite": {"id": 118578147, "head_branch": branch, "head_sha": head,
                            "status": "completed", "conclusion": conclusion},
            "app": {"id": 15368, "slug": "github-actions"},
            "pull_requests": []
        },
        "repository": {"id": 186853002, "full_name": "Codertocat/Hello-World"},
        "sender": {"login": "Codertocat", "id": 21031067}
    })
}

async fn deliver(served: &Served, body: &Value, delivery: &str) -> (u16, Value) {
    let body = body.to_string();
    let signature = format!("sha256={}", hmac_sha256(SECRET.as_bytes(), body.as_bytes()));
    served
        .send(
            served
                .http
                .post(served.url("/hooks/fix-check"))
                .header("Content-Type", "application/json")
                .header("X-GitHub-Event", "check_run")
                .header("X-GitHub-Delivery", delivery)
                .header("X-Hub-Signature-256", signature)
                .body(body),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_check_on_a_branch_is_fixed_on_that_branch_with_its_log() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    // `release` differs from the default branch: the fix must be made on it.
    git(h.repo(), &["checkout", "-qb", "release"]);
    std::fs::write(h.repo().join("RELEASE"), "1.0\n").unwrap();
    git(h.repo(), &["add", "RELEASE"]);
    git(h.repo(), &["commit", "-qm", "Release 1.0"]);
    git(h.repo(), &["checkout", "-q", "-"]);
    let remotes = tempfile::tempdir().unwrap();
    let remote = GitRemote::serve(h.repo(), remotes.path()).unwrap();
    let release_before = remote.tip("release").unwrap();
    let forge = ScriptedForge::start(TOKEN).await.unwrap();
    // A long log: its start is left out, its end (the failure) kept.
    let log = format!(
        "EARLY-MARKER setting up the job\n{}FAILED test_export.py::test_row - AssertionError: 'a,b' != 'a,b,c'\n",
        "##[group]noise line of the job's setup\n".repeat(4000)
    );
    forge.set_job_log(JOB, &log);
    let mut script = fixing_script();
    script.extend(fixing_script());
    let model = ScriptedServer::start(script).await.unwrap();

    let config = h.data.path().join("config/wright");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[automations.fix-check]\non = \"webhook\"\nforge = \"github\"\nsecret_env = \"HOOK_SECRET\"\n\
             event = \"check_run\"\nbranch = \"release\"\nrepository = \"{}\"\n\
             task = \"The check {{check_run.name}} failed on {{branch}} at {{commit}}. Its log:\\n{{check_run.log}}\\nFix it.\"\n\
             max_steps = 20\n\n[automations.fix-check.result]\npush = true\npull_request = true\n\
             token_secret = \"GITHUB_TOKEN\"\napi_url = \"{}\"\napi_repository = \"Codertocat/Hello-World\"\n",
            remote.url(),
            forge.url()
        ),
    )
    .unwrap();
    store_token(&h);
    let served = Served::start(
        &h,
        &["--base-url", &model.url(), "--model", "test-model"],
        &[("HOOK_SECRET", SECRET)],
    )
    .await;

    // A passing check, and a failure on another branch, start nothing.
    for (body, why) in [
        (
            check_run(JOB, "success", "release", &release_before),
            "did not fail",
        ),
        (
            check_run(JOB, "failure", "main", &release_before),
            "another branch",
        ),
    ] {
        let (status, answer) = deliver(&served, &body, &format!("d-{why}")).await;
        assert_eq!(
            (status, answer["outcome"].as_str()),
            (200, Some("ignored")),
            "{answer}"
        );
        assert!(answer["why"].as_str().unwrap().contains(why), "{answer}");
    }
    let (status, answer) = deliver(
        &served,
        &check_run(JOB, "failure", "release", &release_before),
        "d-1",
    )
    .await;
    assert_eq!(status, 202, "{answer}");

    let firing = wait_for_step(&served, 0, "pull_request_opened").await;
    let pushed = "wright/fix-check-release";
    assert!(
        remote.branches().contains(&pushed.to_string()),
        "{:?}",
        remote.branches()
    );
    // Worked on `release`'s head: its file is there, with the fix.
    assert_eq!(remote.file(pushed, "RELEASE").as_deref(), Some("1.0\n"));
    assert!(remote.file(pushed, "export.py").unwrap().contains(FIX));
    assert_eq!(remote.tip("release").unwrap(), release_before);
    let pulls = forge.pulls();
    assert_eq!(pulls.len(), 1, "{pulls:?}");
    assert_eq!(pulls[0]["head"]["ref"], pushed);
    assert_eq!(pulls[0]["base"]["ref"], "release");
    assert!(
        pulls[0]["title"]
            .as_str()
            .unwrap()
            .contains("failing check tests on release"),
        "{}",
        pulls[0]["title"]
    );
    // The task had the log's end, wrapped as untrusted, and not its start.
    let first = crate::common::first_user_message(&model.chat_requests()[0].json());
    assert!(first.contains("FAILED test_export.py::test_row"), "{first}");
    assert!(first.contains("its failing job's log"), "{first}");
    assert!(
        !first.contains("EARLY-MARKER"),
        "the whole log reached the task"
    );
    assert!(first.contains("the log's start is left out"), "{first}");
    assert!(first.contains(&release_before), "{first}");
    let paths: Vec<String> = forge
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        paths[..2],
        [
            format!("GET /repos/Codertocat/Hello-World/actions/jobs/{JOB}/logs"),
            format!("GET /download/jobs/{JOB}"),
        ]
    );
    assert!(firing["steps"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["kind"] != "log_missing"));

    // A failure whose log the forge does not have still runs, saying so.
    let (status, answer) = deliver(
        &served,
        &check_run(555, "failure", "release", &release_before),
        "d-2",
    )
    .await;
    assert_eq!(status, 202, "{answer}");
    let second = wait_for_step(&served, 1, "pull_request_updated").await;
    let missing = second["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "log_missing")
        .unwrap_or_else(|| panic!("no log_missing step: {second:#}"));
    assert!(
        missing["detail"].as_str().unwrap().contains("404"),
        "{missing}"
    );
    let told = model
        .chat_requests()
        .iter()
        .map(|r| crate::common::first_user_message(&r.json()))
        .any(|m| m.contains("(the failing job's log is missing: fetching job 555's log"));
    assert!(told, "no task said the log was missing");
    assert_eq!(forge.pulls().len(), 1, "{:?}", forge.pulls());
    assert_eq!(forge.violations(), Vec::<String>::new());
    for request in model.requests() {
        assert!(!String::from_utf8_lossy(&request.body).contains(TOKEN));
    }
}
