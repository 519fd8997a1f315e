//! Automations a repository defines (`.wright/automations.toml`): read from the
//! configured repository's automations branch only, at the content the user allowed. An
//! unapproved file is listed by `GET /api/automations` as waiting, with its hash, and
//! none of its automations exists (its hook is 404); `wright allow repo-automations`
//! approves exactly that content; a change on the branch waits again. A file on another
//! branch, or in the checked-out work tree, is never read.

use super::automations::hmac_sha256;
use super::automations::SECRET;
use super::*;
use crate::common::stdout;
use sha2::Digest;

fn definition(name: &str) -> String {
    format!(
        "[automations.{name}]\non = \"webhook\"\nforge = \"github\"\nsecret_env = \"HOOK_SECRET\"\n\
         repository = \"/srv/checkouts/app\"\ntask = \"Fix issue {{issue.number}}\"\n"
    )
}

fn commit_file(repo: &std::path::Path, text: &str, message: &str) {
    std::fs::create_dir_all(repo.join(".wright")).unwrap();
    std::fs::write(repo.join(".wright/automations.toml"), text).unwrap();
    git(repo, &["add", ".wright/automations.toml"]);
    git(repo, &["commit", "-qm", message]);
}

/// A signed `ping` to `/hooks/NAME`: 404 when no such automation, else taken (and
/// ignored: not an issue).
async fn ping(served: &Served, name: &str) -> u16 {
    let body = json!({"zen": "Keep it logically awesome.", "hook_id": 1}).to_string();
    let signature = format!("sha256={}", hmac_sha256(SECRET.as_bytes(), body.as_bytes()));
    served
        .send(
            served
                .http
                .post(served.url(&format!("/hooks/{name}")))
                .header("X-GitHub-Event", "ping")
                .header("X-GitHub-Delivery", format!("ping-{name}-{}", rand_id()))
                .header("X-Hub-Signature-256", signature)
                .body(body),
        )
        .await
        .0
}

fn rand_id() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn sha256(text: &str) -> String {
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

async fn listed(h: &Harness) -> (Value, Served) {
    let served = Served::start(h, &[], &[("HOOK_SECRET", SECRET)]).await;
    let (status, listed) = served.get("/api/automations").await;
    assert_eq!(status, 200, "{listed}");
    (listed, served)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repositorys_automations_fire_only_from_its_branch_at_the_allowed_content() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let repo = h.repo().to_path_buf();
    let on_main = definition("from-repo");
    commit_file(&repo, &on_main, "Automations");
    // Another branch defines another automation, and is what is checked out.
    git(&repo, &["checkout", "-qb", "other"]);
    commit_file(&repo, &definition("from-branch"), "Another automation");
    let config = h.data.path().join("config/wright");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[server]\nautomations_repository = \"{}\"\n",
            repo.display()
        ),
    )
    .unwrap();

    // Not approved: waiting, with its hash; nothing of it exists.
    let (list, served) = listed(&h).await;
    assert_eq!(list["automations"], json!([]), "{list}");
    let waiting = &list["waiting"][0];
    assert_eq!(waiting["hash"], sha256(&on_main), "{list}");
    assert_eq!(waiting["branch"], "main");
    assert_eq!(waiting["file"], ".wright/automations.toml");
    assert_eq!(ping(&served, "from-repo").await, 404);
    assert_eq!(ping(&served, "from-branch").await, 404);
    drop(served);

    // Approved: its automation exists; the other branch's never does.
    let allowed = h.wright(&["allow", "repo-automations"], &[]).await;
    assert!(allowed.status.success(), "{allowed:?}");
    assert!(
        stdout(&allowed).contains(&sha256(&on_main)),
        "{}",
        stdout(&allowed)
    );
    let (list, served) = listed(&h).await;
    let names: Vec<&str> = list["automations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["from-repo"], "{list}");
    assert_eq!(list["waiting"], json!([]), "{list}");
    assert_eq!(ping(&served, "from-repo").await, 200);
    assert_eq!(ping(&served, "from-branch").await, 404);
    drop(served);

    // Changed on main: waiting again, at its new hash, and gone until approved.
    git(&repo, &["checkout", "-q", "main"]);
    let changed = format!("{on_main}label = \"wright\"\n");
    commit_file(&repo, &changed, "Only labelled issues");
    let (list, served) = listed(&h).await;
    assert_eq!(list["automations"], json!([]), "{list}");
    assert_eq!(list["waiting"][0]["hash"], sha256(&changed), "{list}");
    assert_eq!(ping(&served, "from-repo").await, 404);
    drop(served);
}
