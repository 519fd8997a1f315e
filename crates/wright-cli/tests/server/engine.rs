//! `wright serve --model-file`: the server's conversations on wright's embedded engine,
//! two let run at once on the one model the process loads, every reply a valid call and
//! each step of each reading only the tokens added since its own last one.

use super::Served;
use crate::common::Harness;
use crate::engine::assert_each_step_reads_only_new_tokens;
use crate::engine::repo;
use crate::engine::tiny_model;
use serde_json::json;

/// The steps' cap on a reply, as given to the server.
const REPLY_CAP: u64 = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_conversations_run_at_once_on_one_embedded_model_each_with_its_cache() {
    let h = Harness::new();
    repo(&h);
    let (_models, file) = tiny_model();
    let cap = REPLY_CAP.to_string();
    let served = Served::start(
        &h,
        &[
            "--max-runs",
            "2",
            "--model-file",
            file.to_str().unwrap(),
            "--context-window",
            "8192",
            "--max-reply-tokens",
            &cap,
            "--temperature",
            "1.0",
        ],
        &[],
    )
    .await;
    let mut ids = Vec::new();
    for task in ["look at notes.txt", "count the lines of notes.txt"] {
        let (status, body) = served
            .post(
                "/api/conversations",
                json!({"workspace": h.repo(), "task": task,
                       "settings": {"confirm": "never", "max_steps": 5}}),
            )
            .await;
        assert_eq!(status, 202, "{body}");
        ids.push(body["id"].as_str().unwrap().to_string());
    }
    for id in &ids {
        // Random weights: the tiny model may call finish, repeat itself or use its steps.
        let ended = served.wait_for(id, &["finished", "stopped", "stuck"]).await;
        let events = served.events(id, 1000).await;
        let said = format!("{ended}\n{events:#?}");
        let start = events.iter().find(|e| e["kind"] == "start").unwrap();
        assert!(
            start["base_url"].as_str().unwrap().starts_with("engine://"),
            "{said}"
        );
        assert!(
            !events.iter().any(|e| e.to_string().contains("malformed")),
            "a reply was not a valid call: {said}"
        );
        assert_each_step_reads_only_new_tokens(&events, REPLY_CAP, &said);
    }
}
