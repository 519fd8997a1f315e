//! A comment on a pull request mentioning the bot, end to end: GitHub's documented
//! `issue_comment` payload (trimmed) on pull request #1, whose branch `feature` is in the
//! repository, starts a conversation on that branch's head (read through the scripted
//! forge's `GET /repos/{owner}/{repo}/pulls/{number}`), with the comment as untrusted
//! content; the fix is pushed as `wright/NAME-1`, a pull request into `feature` is opened
//! and the commented pull request is told. A comment that does not mention the bot starts
//! nothing; one on a fork's pull request fails, saying so, and starts no conversation.

use super::automations::hmac_sha256;
use super::automations::store_token;
use super::automations::wait_for_step;
use super::automations::SECRET;
use super::automations::TOKEN;
use super::*;
use wright_testkit::GitRemote;
use wright_testkit::ScriptedForge;

/// GitHub's `issue_comment` event, `created`, on pull request `number` (trimmed).
fn comment(number: u64, body: &str) -> Value {
    json!({
        "action": "created",
        "issue": {
            "number": number,
            "title": "Export the last column",
            "html_url": format!("https://github.com/octocat/Hello-World/pull/{number}"),
            "pull_request": {"url": format!("https://api.github.com/repos/octocat/Hello-World/pulls/{number}")},
            "user": {"login": "octocat"}
        },
        "comment": {
            "id": 492700400,
            "html_url": format!("https://github.com/octocat/Hello-World/pull/{number}#issuecomment-492700400"),
            "body": body,
            "user": {"login": "octocat"},
            "author_association": "OWNER"
        },
        "repository": {"full_name": "octocat/Hello-World"},
        "sender": {"login": "octocat"}
    })
}

async fn deliver(served: &Served, body: &Value, delivery: &str) -> (u16, Value) {
    let body = body.to_string();
    let signature = format!("sha256={}", hmac_sha256(SECRET.as_bytes(), body.as_bytes()));
    served
        .send(
            served
                .http
                .post(served.url("/hooks/asked"))
                .header("Content-Type", "application/json")
                .header("X-GitHub-Event", "issue_comment")
                .header("X-GitHub-Delivery", delivery)
                .header("X-Hub-Signature-256", signature)
                .body(body),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_comment_mentioning_the_bot_is_worked_on_at_its_branch() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    git(h.repo(), &["checkout", "-qb", "feature"]);
    std::fs::write(h.repo().join("FEATURE"), "yes\n").unwrap();
    git(h.repo(), &["add", "FEATURE"]);
    git(h.repo(), &["commit", "-qm", "A feature"]);
    git(h.repo(), &["checkout", "-q", "-"]);
    let remotes = tempfile::tempdir().unwrap();
    let remote = GitRemote::serve(h.repo(), remotes.path()).unwrap();
    let feature_before = remote.tip("feature").unwrap();
    let forge = ScriptedForge::start(TOKEN).await.unwrap();
    let ours = forge.add_pull(
        "octocat",
        "Hello-World",
        "feature",
        "main",
        "octocat/Hello-World",
    );
    let forked = forge.add_pull(
        "octocat",
        "Hello-World",
        "patch-1",
        "main",
        "stranger/Hello-World",
    );
    let model = ScriptedServer::start(fixing_script()).await.unwrap();
    let config = h.data.path().join("config/wright");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[automations.asked]\non = \"webhook\"\nforge = \"github\"\nsecret_env = \"HOOK_SECRET\"\n\
             event = \"comment\"\nmention = \"wright-bot\"\nrepository = \"{}\"\n\
             task = \"On pull request {{issue.number}} you were asked:\\n{{comment.body}}\"\nmax_steps = 20\n\n\
             [automations.asked.result]\npush = true\npull_request = true\ncomment = true\n\
             token_secret = \"GITHUB_TOKEN\"\napi_url = \"{}\"\napi_repository = \"octocat/Hello-World\"\n",
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

    let (status, answer) = deliver(&served, &comment(ours, "Looks good to me"), "d-0").await;
    assert_eq!(
        (status, answer["outcome"].as_str()),
        (200, Some("ignored")),
        "{answer}"
    );
    // A fork's pull request: its branch is not the repository's; nothing runs.
    let (status, answer) = deliver(
        &served,
        &comment(forked, "@wright-bot fix the tests"),
        "d-1",
    )
    .await;
    assert_eq!(status, 202, "{answer}");
    let mut tries = 0;
    let refused = loop {
        tries += 1;
        assert!(tries < 600, "the fork's pull request was never refused");
        let (_, listed) = served.get("/api/automations").await;
        let failed = listed["automations"][0]["firings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["outcome"] == "failed")
            .cloned();
        if let Some(failed) = failed {
            break failed;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        refused["detail"]
            .as_str()
            .unwrap()
            .contains("comes from a fork"),
        "{refused:#}"
    );
    assert!(refused["conversation"].is_null(), "{refused:#}");

    let (status, answer) = deliver(
        &served,
        &comment(ours, "@wright-bot the CSV test fails, please fix it"),
        "d-2",
    )
    .await;
    assert_eq!(status, 202, "{answer}");
    wait_for_step(&served, 0, "commented").await;
    let pushed = "wright/asked-1";
    assert_eq!(remote.file(pushed, "FEATURE").as_deref(), Some("yes\n"));
    assert!(remote.file(pushed, "export.py").unwrap().contains(FIX));
    assert_eq!(remote.tip("feature").unwrap(), feature_before);
    let opened: Vec<Value> = forge
        .pulls()
        .into_iter()
        .filter(|p| p["head"]["ref"] == pushed)
        .collect();
    assert_eq!(opened.len(), 1, "{:?}", forge.pulls());
    assert_eq!(opened[0]["base"]["ref"], "feature");
    let comments = forge.comments();
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert_eq!(comments[0]["issue"], ours);
    let first = crate::common::first_user_message(&model.chat_requests()[0].json());
    assert!(first.contains("its comment"), "{first}");
    assert!(first.contains("please fix it"), "{first}");
    assert_eq!(forge.violations(), Vec::<String>::new());
}
