//! Automations through the real server: a signed GitHub-shaped `issues` webhook (label
//! added) starts a conversation on a clone of a real git remote (`git daemon`), which
//! fixes the failing test (scripted model); the branch is pushed to the remote from
//! wright's copy and a pull request is opened through a scripted forge API that checks
//! every request against GitHub's documentation; a second firing for the same issue
//! updates that pull request. A bad or missing signature, an unknown automation, an
//! oversized body and a replayed delivery are refused (or taken as a duplicate) and
//! start nothing.

use super::*;
use sha2::Digest;
use wright_testkit::GitRemote;
use wright_testkit::ScriptedForge;

pub(crate) const SECRET: &str = "It's a Secret to Everybody";
pub(crate) const TOKEN: &str = "ghp_test_token_for_the_forge";

/// HMAC-SHA256 (RFC 2104) of `body` with `key`, in hex: what GitHub signs a delivery with.
pub(crate) fn hmac_sha256(key: &[u8], body: &[u8]) -> String {
    let mut block = [0u8; 64];
    block[..key.len()].copy_from_slice(key);
    let pad = |byte: u8| block.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let inner = sha2::Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(body)
        .finalize();
    let outer = sha2::Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize();
    outer.iter().map(|b| format!("{b:02x}")).collect()
}

/// GitHub's `issues` event, action `labeled`, in the documented shape (trimmed).
pub(crate) fn labeled(body: &str) -> Value {
    json!({
        "action": "labeled",
        "issue": {
            "url": "https://api.github.com/repos/octocat/Hello-World/issues/1347",
            "html_url": "https://github.com/octocat/Hello-World/issues/1347",
            "number": 1347,
            "state": "open",
            "title": "The CSV export drops a column",
            "body": body,
            "user": {"login": "octocat", "id": 1},
            "labels": [{"id": 208045946, "name": "wright", "color": "f29513"}],
            "author_association": "OWNER"
        },
        "label": {"id": 208045946, "name": "wright", "color": "f29513"},
        "repository": {"id": 1296269, "full_name": "octocat/Hello-World"},
        "sender": {"login": "octocat", "id": 1}
    })
}

/// The forge's token in `h`'s secrets store (0700 directory, 0600 file), as
/// `GITHUB_TOKEN`.
pub(crate) fn store_token(h: &Harness) {
    use std::os::unix::fs::PermissionsExt;
    let secrets = h.data.path().join("wright/secrets");
    std::fs::create_dir_all(&secrets).unwrap();
    std::fs::set_permissions(&secrets, std::fs::Permissions::from_mode(0o700)).unwrap();
    let file = secrets.join("secrets.json");
    std::fs::write(
        &file,
        json!({"version": 1, "secrets": {"GITHUB_TOKEN": TOKEN}}).to_string(),
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
}

pub(crate) async fn deliver(
    served: &Served,
    name: &str,
    body: &[u8],
    delivery: &str,
    signature: Option<String>,
) -> (u16, Value) {
    let mut request = served
        .http
        .post(served.url(&format!("/hooks/{name}")))
        .header("Content-Type", "application/json")
        .header("X-GitHub-Event", "issues")
        .header("X-GitHub-Delivery", delivery)
        .body(body.to_vec());
    if let Some(signature) = signature {
        request = request.header("X-Hub-Signature-256", signature);
    }
    served.send(request).await
}

pub(crate) fn signed(body: &[u8]) -> Option<String> {
    Some(format!("sha256={}", hmac_sha256(SECRET.as_bytes(), body)))
}

/// Waits until the automation's firing `n` (oldest first) has a step of `kind`, or one
/// that failed.
pub(crate) async fn wait_for_step(served: &Served, n: usize, kind: &str) -> Value {
    let firing = wait_for_firing(served, n, &[kind, "failed"]).await;
    let steps = firing["steps"].as_array().unwrap();
    if !steps.iter().any(|s| s["kind"] == kind) {
        panic!("firing failed: {firing:#}");
    }
    firing
}

/// Waits until the automation's firing `n` (oldest first, of those that started a
/// conversation) has a step of one of `kinds`.
pub(crate) async fn wait_for_firing(served: &Served, n: usize, kinds: &[&str]) -> Value {
    for _ in 0..1200 {
        let (status, listed) = served.get("/api/automations").await;
        assert_eq!(status, 200, "{listed}");
        let firings = listed["automations"][0]["firings"]
            .as_array()
            .unwrap()
            .clone();
        let started: Vec<&Value> = firings
            .iter()
            .rev()
            .filter(|f| {
                f["steps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|s| s["kind"] == "started")
            })
            .collect();
        if let Some(firing) = started.get(n) {
            let steps = firing["steps"].as_array().unwrap();
            if steps.iter().any(|s| kinds.iter().any(|k| s["kind"] == *k)) {
                return (*firing).clone();
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("no firing {n} reached any of {kinds:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_labeled_issue_fixes_the_repository_pushes_and_opens_a_pull_request() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let remotes = tempfile::tempdir().unwrap();
    let remote = GitRemote::serve(h.repo(), remotes.path()).unwrap();
    let main_before = remote.tip("main").or_else(|| remote.tip("master")).unwrap();
    let forge = ScriptedForge::start(TOKEN).await.unwrap();
    let mut script = fixing_script();
    script.extend(fixing_script());
    let model = ScriptedServer::start(script).await.unwrap();

    let config = h.data.path().join("config/wright");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[automations.fix]\non = \"webhook\"\nforge = \"github\"\nsecret_env = \"HOOK_SECRET\"\n\
             repository = \"{}\"\ntask = \"Fix issue {{issue.number}}: {{issue.title}}\\n{{issue.body}}\"\n\
             label = \"wright\"\nmax_steps = 20\n\n[automations.fix.result]\npush = true\npull_request = true\ncomment = true\n\
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
    let body = labeled("Running the tests shows the last column missing.").to_string();
    let bytes = body.as_bytes();

    // Refused, and nothing runs: no signature, a wrong one, another secret's, an
    // unknown automation, an oversized body.
    let (status, answer) = deliver(&served, "fix", bytes, "d-0", None).await;
    assert_eq!(status, 401, "{answer}");
    let wrong = Some(format!("sha256={}", "0".repeat(64)));
    assert_eq!(deliver(&served, "fix", bytes, "d-0", wrong).await.0, 401);
    let other = Some(format!("sha256={}", hmac_sha256(b"another secret", bytes)));
    assert_eq!(deliver(&served, "fix", bytes, "d-0", other).await.0, 401);
    let tampered = body.replace("1347", "1348");
    assert_eq!(
        deliver(&served, "fix", tampered.as_bytes(), "d-0", signed(bytes))
            .await
            .0,
        401
    );
    let (status, answer) = deliver(&served, "nope", bytes, "d-0", signed(bytes)).await;
    assert_eq!(status, 404, "{answer}");
    let huge = labeled(&"x".repeat(2 * 1024 * 1024)).to_string();
    let (status, answer) = deliver(
        &served,
        "fix",
        huge.as_bytes(),
        "d-0",
        signed(huge.as_bytes()),
    )
    .await;
    assert_eq!(status, 413, "{answer}");
    // The server key is not a webhook's key either.
    let (status, _) = served
        .send(
            served
                .http
                .post(served.url("/hooks/fix"))
                .bearer_auth(&served.key)
                .header("X-GitHub-Event", "issues")
                .body(body.clone()),
        )
        .await;
    assert_eq!(status, 401);
    let (_, listed) = served.get("/api/conversations").await;
    assert_eq!(listed["conversations"], json!([]), "{listed}");

    // The signed delivery is accepted; its redelivery is a duplicate.
    let (status, answer) = deliver(&served, "fix", bytes, "d-1", signed(bytes)).await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["outcome"], "accepted", "{answer}");
    let (status, answer) = deliver(&served, "fix", bytes, "d-1", signed(bytes)).await;
    assert_eq!(
        (status, answer["outcome"].as_str()),
        (200, Some("duplicate")),
        "{answer}"
    );
    // A label that is not the automation's starts nothing.
    let other_label = body.replace("\"wright\"", "\"bug\"");
    let (status, answer) = deliver(
        &served,
        "fix",
        other_label.as_bytes(),
        "d-2",
        signed(other_label.as_bytes()),
    )
    .await;
    assert_eq!(
        (status, answer["outcome"].as_str()),
        (200, Some("ignored")),
        "{answer}"
    );

    let firing = wait_for_step(&served, 0, "pull_request_opened").await;
    let conversation = firing["conversation"].as_str().unwrap().to_string();
    assert_eq!(firing["issue"], 1347, "{firing}");
    assert_eq!(
        firing["pull_request"], "https://github.com/octocat/Hello-World/pull/1",
        "{firing}"
    );
    let (_, listed) = served.get("/api/conversations").await;
    assert_eq!(
        listed["conversations"].as_array().unwrap().len(),
        1,
        "{listed}"
    );
    // The task reached the model with the issue's words marked untrusted.
    let first = crate::common::first_user_message(&model.chat_requests()[0].json());
    assert!(first.contains("Fix issue 1347"), "{first}");
    assert!(
        first.contains("the event that started automation fix: its issue body"),
        "{first}"
    );

    // The remote has the fix on wright's branch; its main is as it was.
    let pushed = "wright/fix-1347";
    assert!(
        remote.branches().contains(&pushed.to_string()),
        "{:?}",
        remote.branches()
    );
    assert!(remote.file(pushed, "export.py").unwrap().contains(FIX));
    assert_eq!(
        remote.tip("main").or_else(|| remote.tip("master")).unwrap(),
        main_before
    );
    // The pull request, as the documented API took it.
    assert_eq!(forge.violations(), Vec::<String>::new());
    let pulls = forge.pulls();
    assert_eq!(pulls.len(), 1, "{pulls:?}");
    assert_eq!(pulls[0]["head"]["ref"], pushed);
    assert_eq!(pulls[0]["base"]["ref"], "main");
    let text = pulls[0]["body"].as_str().unwrap();
    assert!(
        text.contains("row_to_csv keeps the last column now."),
        "{text}"
    );
    assert!(text.contains(&conversation), "{text}");

    // A second firing for the same issue updates that pull request.
    let again = labeled("Still broken?").to_string();
    let (status, _) = deliver(
        &served,
        "fix",
        again.as_bytes(),
        "d-3",
        signed(again.as_bytes()),
    )
    .await;
    assert_eq!(status, 202);
    let second = wait_for_step(&served, 1, "pull_request_updated").await;
    assert_ne!(second["conversation"], firing["conversation"]);
    assert_eq!(forge.pulls().len(), 1, "{:?}", forge.pulls());
    let second = wait_for_step(&served, 1, "commented").await;
    let methods: Vec<String> = forge
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        methods,
        [
            "GET /repos/octocat/Hello-World/pulls",
            "POST /repos/octocat/Hello-World/pulls",
            "POST /repos/octocat/Hello-World/issues/1347/comments",
            "GET /repos/octocat/Hello-World/pulls",
            "PATCH /repos/octocat/Hello-World/pulls/1",
            "POST /repos/octocat/Hello-World/issues/1347/comments",
        ]
    );
    // A comment back on the issue for each firing, naming the pull request.
    let comments = forge.comments();
    assert_eq!(comments.len(), 2, "{comments:?}");
    let pull = "https://github.com/octocat/Hello-World/pull/1";
    assert!(comments[0]["body"]
        .as_str()
        .unwrap()
        .contains(&format!("opened {pull}")));
    assert!(comments[1]["body"]
        .as_str()
        .unwrap()
        .contains(&format!("updated {pull}")));
    // Each push, pull request and comment is an event in its conversation's log.
    for (firing, pulled) in [
        (&firing, "pull_request_opened"),
        (&second, "pull_request_updated"),
    ] {
        let id = firing["conversation"].as_str().unwrap();
        let handed: Vec<(String, String)> = served
            .events(id, 100)
            .await
            .iter()
            .filter(|e| e["kind"] == "handed_back")
            .map(|e| {
                assert_eq!(e["automation"], "fix");
                assert_eq!(e["firing"], firing["firing"]);
                (
                    e["what"].as_str().unwrap().to_string(),
                    e["url"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let comment = comments[if pulled == "pull_request_opened" {
            0
        } else {
            1
        }]["html_url"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(
            handed,
            [
                ("pushed".to_string(), "wright/fix-1347".to_string()),
                (pulled.to_string(), pull.to_string()),
                ("commented".to_string(), comment),
            ]
        );
    }
    assert_eq!(
        forge.requests()[0].query,
        "head=octocat%3Awright%2Ffix-1347&state=open"
    );
    assert_eq!(forge.violations(), Vec::<String>::new());
    // The token never reached the model (nor so the sandbox's commands).
    for request in model.requests() {
        assert!(!String::from_utf8_lossy(&request.body).contains(TOKEN));
    }
}
