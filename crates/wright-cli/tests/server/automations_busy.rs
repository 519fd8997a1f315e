//! Firings of one automation bounded (`max_running = 1`), through the real server: while
//! a firing's conversation runs (its model holds its answer), a second delivery of a
//! `when_busy = "skip"` automation is recorded as skipped and starts nothing, and one of
//! a `when_busy = "queue"` automation waits — no conversation of its own — until the
//! first ends, then runs.

use super::automations::signed;
use super::automations::SECRET;
use super::automations_forges::wait_for;
use super::*;

/// A GitHub `issues` delivery (label `wright` added) of issue `number` to `name`.
async fn deliver(served: &Served, name: &str, number: u64) -> Value {
    let mut body = super::automations::labeled("Please fix.");
    body["issue"]["number"] = json!(number);
    let body = body.to_string();
    let (status, answer) = super::automations::deliver(
        served,
        name,
        body.as_bytes(),
        &format!("{name}-{number}"),
        signed(body.as_bytes()),
    )
    .await;
    assert_eq!(status, 202, "{answer}");
    answer
}

async fn conversations(served: &Served) -> usize {
    let (_, listed) = served.get("/api/conversations").await;
    listed["conversations"].as_array().unwrap().len()
}

/// The kinds of a firing's steps.
fn kinds(firing: &Value) -> Vec<String> {
    firing["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_automation_skips_or_queues_its_next_firing() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let held = || {
        Reply::Delayed(
            Duration::from_secs(120),
            Box::new(reply().call("finish", json!({"message": "too late"}))),
        )
    };
    let model = ScriptedServer::start(vec![
        held(),
        held(),
        reply().call("finish", json!({"message": "queued, then done"})),
    ])
    .await
    .unwrap();
    let config = h.data.path().join("config/wright");
    std::fs::create_dir_all(&config).unwrap();
    let automation = |name: &str, busy: &str| {
        format!(
            "[automations.{name}]\non = \"webhook\"\nforge = \"github\"\nsecret_env = \"HOOK_SECRET\"\n\
             repository = \"{}\"\ntask = \"Fix issue {{issue.number}}\"\nlabel = \"wright\"\n\
             max_running = 1\nwhen_busy = \"{busy}\"\n",
            h.repo().display()
        )
    };
    std::fs::write(
        config.join("config.toml"),
        automation("skip", "skip") + &automation("queue", "queue"),
    )
    .unwrap();
    let served = Served::start(
        &h,
        &[
            "--base-url",
            &model.url(),
            "--model",
            "test-model",
            "--max-runs",
            "4",
        ],
        &[("HOOK_SECRET", SECRET)],
    )
    .await;

    // skip: the second firing while the first runs is recorded and dropped.
    deliver(&served, "skip", 1).await;
    let first = wait_for(&served, "skip", &["started"]).await;
    let conversation = first["conversation"].as_str().unwrap().to_string();
    served.wait_for(&conversation, &["running"]).await;
    deliver(&served, "skip", 2).await;
    let skipped = wait_for(&served, "skip", &["skipped"]).await;
    assert_eq!(kinds(&skipped), ["fired", "skipped"], "{skipped:#}");
    assert_eq!(skipped["issue"], 2);
    assert_eq!(conversations(&served).await, 1);
    let (status, body) = served
        .post(
            &format!("/api/conversations/{conversation}/interrupt"),
            json!({}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    served.wait_for(&conversation, &["stopped"]).await;

    // queue: the second firing waits for the first's end, then runs.
    deliver(&served, "queue", 1).await;
    let first = wait_for(&served, "queue", &["started"]).await;
    let conversation = first["conversation"].as_str().unwrap().to_string();
    served.wait_for(&conversation, &["running"]).await;
    deliver(&served, "queue", 2).await;
    let waiting = wait_for(&served, "queue", &["fired"]).await;
    assert_eq!(waiting["issue"], 2);
    // The first is still running (its model holds its answer for two minutes): the
    // second has no conversation.
    let (_, running) = served
        .get(&format!("/api/conversations/{conversation}"))
        .await;
    assert_eq!(running["state"], "running", "{running}");
    assert_eq!(kinds(&waiting), ["fired"], "{waiting:#}");
    assert_eq!(conversations(&served).await, 2);
    let (status, body) = served
        .post(
            &format!("/api/conversations/{conversation}/interrupt"),
            json!({}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let second = wait_for(&served, "queue", &["ended"]).await;
    assert_eq!(second["issue"], 2, "{second:#}");
    assert_eq!(kinds(&second), ["fired", "started", "ended"], "{second:#}");
    assert_ne!(second["conversation"], json!(conversation));
    assert_eq!(conversations(&served).await, 3);
}
