//! Automations of GitLab and Gitea through the real server: each forge's issue event, in
//! the shape of its documented example payload and authenticated as that forge does
//! (GitLab's `X-Gitlab-Token`, Gitea's `X-Gitea-Signature`), starts a conversation that
//! fixes the failing test; the branch is pushed to a real git remote, and a merge request
//! (GitLab) or pull request (Gitea) is opened and a comment left on the issue through a
//! scripted forge that checks every request against that forge's documented REST API. A
//! wrong token or signature is refused with 401 and starts nothing.

use super::automations::hmac_sha256;
use super::automations::store_token;
use super::automations::SECRET;
use super::automations::TOKEN;
use super::*;
use wright_testkit::GitRemote;
use wright_testkit::ScriptedForge;

/// GitLab's documented `Issue Hook` example (trimmed), with the label `wright` just added.
fn gitlab_issue() -> Value {
    json!({
        "object_kind": "issue",
        "event_type": "issue",
        "user": {"id": 1, "name": "Administrator", "username": "root",
                 "email": "admin@example.com"},
        "project": {"id": 1, "name": "Gitlab Test", "description": "Aut reprehenderit ut est.",
                    "web_url": "http://example.com/gitlabhq/gitlab-test",
                    "git_http_url": "http://example.com/gitlabhq/gitlab-test.git",
                    "namespace": "GitlabHQ", "visibility_level": 20,
                    "path_with_namespace": "gitlabhq/gitlab-test", "default_branch": "master"},
        "object_attributes": {"id": 301, "title": "The CSV export drops a column",
                              "assignee_ids": [51], "author_id": 51, "project_id": 14,
                              "created_at": "2013-12-03T17:15:43Z", "updated_at": "2013-12-03T17:15:43Z",
                              "description": "Running the tests shows the last column missing.",
                              "iid": 23, "url": "http://example.com/diaspora/issues/23",
                              "state": "opened", "action": "update",
                              "labels": [{"id": 206, "title": "API", "color": "#ffffff",
                                          "project_id": 14, "type": "ProjectLabel", "group_id": 41},
                                         {"id": 207, "title": "wright", "color": "#ffffff",
                                          "project_id": 14, "type": "ProjectLabel", "group_id": 41}]},
        "labels": [{"id": 206, "title": "API"}, {"id": 207, "title": "wright"}],
        "changes": {"labels": {"previous": [{"id": 206, "title": "API"}],
                               "current": [{"id": 206, "title": "API"}, {"id": 207, "title": "wright"}]}}
    })
}

/// Gitea's `issues` payload for a label change (`label_updated`), as its documentation
/// and `IssuePayload` give it (trimmed).
fn gitea_issue() -> Value {
    json!({
        "action": "label_updated",
        "number": 5,
        "issue": {"id": 12, "url": "https://gitea.example/api/v1/repos/o/r/issues/5",
                  "html_url": "https://gitea.example/o/r/issues/5", "number": 5,
                  "user": {"id": 1, "login": "gitea"}, "title": "The CSV export drops a column",
                  "body": "Running the tests shows the last column missing.",
                  "labels": [{"id": 3, "name": "wright", "color": "e11d21"}], "state": "open"},
        "repository": {"id": 1, "name": "r", "full_name": "o/r",
                       "html_url": "https://gitea.example/o/r", "default_branch": "main"},
        "sender": {"id": 1, "login": "gitea"}
    })
}

/// Waits until automation `name`'s latest firing has a step of one of `kinds`.
pub(crate) async fn wait_for(served: &Served, name: &str, kinds: &[&str]) -> Value {
    for _ in 0..1200 {
        let (_, listed) = served.get("/api/automations").await;
        let automation = listed["automations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap()
            .clone();
        if let Some(firing) = automation["firings"].as_array().unwrap().first() {
            let steps = firing["steps"].as_array().unwrap();
            if steps.iter().any(|s| kinds.iter().any(|k| s["kind"] == *k)) {
                return firing.clone();
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("automation {name} reached none of {kinds:?}");
}

/// Waits until automation `name`'s latest firing updated its pull request and commented.
async fn updated(served: &Served, name: &str) {
    let firing = wait_for(served, name, &["commented", "failed"]).await;
    let kinds: Vec<&str> = firing["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "fired",
            "started",
            "ended",
            "pushed",
            "pull_request_updated",
            "commented"
        ],
        "{firing:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitlab_and_gitea_issues_open_their_merge_and_pull_requests() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let remotes = tempfile::tempdir().unwrap();
    let remote = GitRemote::serve(h.repo(), remotes.path()).unwrap();
    let forge = ScriptedForge::start(TOKEN).await.unwrap();
    let mut script = Vec::new();
    for _ in 0..4 {
        script.extend(fixing_script());
    }
    let model = ScriptedServer::start(script).await.unwrap();
    let config = h.data.path().join("config/wright");
    std::fs::create_dir_all(&config).unwrap();
    let automation = |name: &str, forge_name: &str, api: &str, repository: &str| {
        format!(
            "[automations.{name}]\non = \"webhook\"\nforge = \"{forge_name}\"\nsecret_env = \"HOOK_SECRET\"\n\
             repository = \"{}\"\ntask = \"Fix issue {{issue.number}}: {{issue.title}}\\n{{issue.body}}\"\n\
             label = \"wright\"\nmax_steps = 20\n\n[automations.{name}.result]\npush = true\npull_request = true\n\
             comment = true\ntoken_secret = \"GITHUB_TOKEN\"\napi_url = \"{}{api}\"\napi_repository = \"{repository}\"\n",
            remote.url(),
            forge.url()
        )
    };
    std::fs::write(
        config.join("config.toml"),
        automation("gl", "gitlab", "/api/v4", "gitlabhq/gitlab-test")
            + &automation("gt", "gitea", "/api/v1", "o/r"),
    )
    .unwrap();
    store_token(&h);
    let served = Served::start(
        &h,
        &["--base-url", &model.url(), "--model", "test-model"],
        &[("HOOK_SECRET", SECRET)],
    )
    .await;

    // GitLab: its token, compared whole; a wrong one is refused and starts nothing.
    let body = gitlab_issue().to_string();
    let gitlab = |token: &str| {
        served
            .http
            .post(served.url("/hooks/gl"))
            .header("Content-Type", "application/json")
            .header("X-Gitlab-Event", "Issue Hook")
            .header(
                "X-Gitlab-Event-UUID",
                "13792a34-cac6-4fda-95a8-c58e00a3954e",
            )
            .header("X-Gitlab-Token", token)
            .body(body.clone())
    };
    let (status, _) = served.send(gitlab("not the secret")).await;
    assert_eq!(status, 401);
    let (status, answer) = served.send(gitlab(SECRET)).await;
    assert_eq!(status, 202, "{answer}");
    let firing = wait_for(&served, "gl", &["commented", "failed"]).await;
    let kinds: Vec<&str> = firing["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "fired",
            "started",
            "ended",
            "pushed",
            "pull_request_opened",
            "commented"
        ],
        "{firing:#}"
    );
    assert!(remote
        .file("wright/gl-23", "export.py")
        .unwrap()
        .contains(FIX));
    assert_eq!(
        firing["pull_request"],
        "https://gitlab.example/gitlabhq/gitlab-test/-/merge_requests/1"
    );

    // Gitea: the HMAC of the body; a signature of another secret is refused.
    let body = gitea_issue().to_string();
    let gitea = |secret: &[u8]| {
        served
            .http
            .post(served.url("/hooks/gt"))
            .header("Content-Type", "application/json")
            .header("X-Gitea-Event", "issues")
            .header("X-Gitea-Event-Type", "issue_label")
            .header("X-Gitea-Delivery", "a1b2c3d4-0000-4000-8000-000000000005")
            .header("X-Gitea-Signature", hmac_sha256(secret, body.as_bytes()))
            .body(body.clone())
    };
    let (status, _) = served.send(gitea(b"another secret")).await;
    assert_eq!(status, 401);
    let (status, answer) = served.send(gitea(SECRET.as_bytes())).await;
    assert_eq!(status, 202, "{answer}");
    let firing = wait_for(&served, "gt", &["commented", "failed"]).await;
    let last = firing["steps"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["kind"], "commented", "{firing:#}");
    assert!(remote
        .file("wright/gt-5", "export.py")
        .unwrap()
        .contains(FIX));
    assert_eq!(firing["pull_request"], "https://gitea.example/o/r/pulls/2");

    // A second firing for each issue updates its merge or pull request (one after the
    // other: the scripted model answers in order).
    let body = gitlab_issue()
        .to_string()
        .replace("last column missing.", "last column missing, still.");
    let again = served
        .http
        .post(served.url("/hooks/gl"))
        .header("Content-Type", "application/json")
        .header("X-Gitlab-Event", "Issue Hook")
        .header(
            "X-Gitlab-Event-UUID",
            "13792a34-cac6-4fda-95a8-c58e00a3954f",
        )
        .header("X-Gitlab-Token", SECRET)
        .body(body);
    let (status, answer) = served.send(again).await;
    assert_eq!(status, 202, "{answer}");
    updated(&served, "gl").await;
    let body = gitea_issue()
        .to_string()
        .replace("last column missing.", "last column missing, still.");
    let again = served
        .http
        .post(served.url("/hooks/gt"))
        .header("Content-Type", "application/json")
        .header("X-Gitea-Event", "issues")
        .header("X-Gitea-Delivery", "a1b2c3d4-0000-4000-8000-000000000006")
        .header(
            "X-Gitea-Signature",
            hmac_sha256(SECRET.as_bytes(), body.as_bytes()),
        )
        .body(body.clone());
    let (status, answer) = served.send(again).await;
    assert_eq!(status, 202, "{answer}");
    updated(&served, "gt").await;
    assert_eq!(forge.pulls().len(), 2, "{:?}", forge.pulls());

    // Every request as each forge documents it, in order.
    assert_eq!(forge.violations(), Vec::<String>::new());
    let requests: Vec<String> = forge
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        requests,
        [
            "GET /api/v4/projects/gitlabhq%2Fgitlab-test/merge_requests",
            "POST /api/v4/projects/gitlabhq%2Fgitlab-test/merge_requests",
            "POST /api/v4/projects/gitlabhq%2Fgitlab-test/issues/23/notes",
            "GET /api/v1/repos/o/r/pulls",
            "POST /api/v1/repos/o/r/pulls",
            "POST /api/v1/repos/o/r/issues/5/comments",
            "GET /api/v4/projects/gitlabhq%2Fgitlab-test/merge_requests",
            "PUT /api/v4/projects/gitlabhq%2Fgitlab-test/merge_requests/1",
            "POST /api/v4/projects/gitlabhq%2Fgitlab-test/issues/23/notes",
            "GET /api/v1/repos/o/r/pulls",
            "PATCH /api/v1/repos/o/r/pulls/2",
            "POST /api/v1/repos/o/r/issues/5/comments",
        ]
    );
    let sent = forge.requests();
    assert_eq!(sent[0].query, "source_branch=wright%2Fgl-23&state=opened");
    assert_eq!(sent[1].body["source_branch"], "wright/gl-23");
    assert_eq!(sent[1].body["target_branch"], "main");
    assert!(sent[1].body["description"]
        .as_str()
        .unwrap()
        .contains("row_to_csv keeps the last column now."));
    assert_eq!(sent[4].body["head"], "wright/gt-5");
    let comments = forge.comments();
    assert_eq!(comments.len(), 4, "{comments:?}");
    assert!(comments[2]["body"]
        .as_str()
        .unwrap()
        .contains("updated https://gitlab.example/"));
    assert!(sent[7].body["description"].is_string());
    assert_eq!(
        sent[10].body["title"],
        "wright: The CSV export drops a column"
    );
    assert!(comments[0]["body"]
        .as_str()
        .unwrap()
        .contains("opened https://gitlab.example/gitlabhq/gitlab-test/-/merge_requests/1"));
    assert!(comments[1]["body"]
        .as_str()
        .unwrap()
        .contains("opened https://gitea.example/o/r/pulls/2"));
}
