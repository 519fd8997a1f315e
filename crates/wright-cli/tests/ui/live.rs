//! The diff so far, while the agent works: the live-diff route answers while the
//! conversation runs (today's `/diff` refuses then), and the page's Changes pane shows
//! each edit once the agent made it — read again on the events the page already gets,
//! not by polling — on a laptop's window and a phone's screen. The diff is the agent's:
//! a hostile file name and content plant nothing. Once the run ended, the pane shows what
//! it handed over.

use super::browser::launch;
use super::browser::Viewport;
use super::hostile::check;
use super::hostile::IN_DIFF;
use super::hostile::IN_NAME;
use super::hostile::PROBE;
use crate::common::Harness;
use crate::server::Served;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

async fn live(test: &str, viewport: Viewport) {
    let Some(browser) = launch(test, viewport).await else {
        return;
    };
    let h = Harness::new();
    failing_python_repo(h.repo());
    // Each edit is followed by a risky call, so the run waits (still running) there.
    let model = ScriptedServer::start(vec![
        reply().call(
            "file_editor",
            json!({"command": "create", "path": IN_NAME, "file_text": format!("{IN_DIFF}\n")}),
        ),
        reply().call(
            "terminal",
            json!({"command": "chmod 600 export.py && echo first-wait"}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "create", "path": "second.txt", "file_text": "second-words\n"}),
        ),
        reply().call(
            "terminal",
            json!({"command": "chmod +x export.py && echo second-wait"}),
        ),
        reply().call("finish", json!({"message": "two files made"})),
    ])
    .await
    .unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let id = served
        .create(h.repo(), "make two files", &model.url())
        .await;
    let waiting = served.wait_for(&id, &["awaiting_confirmation"]).await;

    // The route answers while it runs; `/diff` does not; an unknown id is not found.
    let (status, answer) = served
        .get(&format!("/api/conversations/{id}/live-diff"))
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["live"], true, "{answer}");
    assert_eq!(answer["files"], json!([IN_NAME]), "{answer}");
    assert!(
        answer["diff"].as_str().unwrap().contains("+<svg onload"),
        "{answer}"
    );
    let (status, _) = served.get(&format!("/api/conversations/{id}/diff")).await;
    assert_eq!(status, 409);
    let unknown = format!("{}0", &id[..id.len() - 1]);
    let unknown = if unknown == id {
        format!("{}1", &id[..id.len() - 1])
    } else {
        unknown
    };
    let (status, body) = served
        .get(&format!("/api/conversations/{unknown}/live-diff"))
        .await;
    assert_eq!(status, 404, "{body}");

    browser.goto(&served.browser).await;
    browser.find("#conversations").await;
    browser.goto(&served.url(&format!("/#/c/{id}"))).await;
    browser
        .find("#state[data-state=\"awaiting_confirmation\"]")
        .await;
    browser.click("#open-changes").await;
    browser
        .until(
            "the Changes pane",
            &format!("return location.hash === '#/c/{id}/changes';"),
        )
        .await;
    browser.find("#live-files[data-live=\"1\"]").await;
    browser
        .until_text("#live-files .diff .add", "__pwnedDiff")
        .await;
    browser.until_text("#live-files", IN_NAME).await;
    check(
        &browser.js(PROBE).await,
        "the live diff",
        &[IN_NAME, IN_DIFF],
    );
    browser.screenshot("live-diff").await;

    // Approved through the API: the agent writes its second file and waits again; the
    // pane, left open, shows it.
    let approve = |action: &serde_json::Value| json!({"action": action.clone(), "approve": true});
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/confirm"),
            approve(&waiting["pending"]["action"]),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    browser.until_text("#live-files", "second-words").await;
    browser.until_text("#live-files", "second.txt").await;
    let (_, info) = served.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(info["state"], "awaiting_confirmation", "{info}");
    browser.screenshot("live-diff-second").await;

    let (_, info) = served.get(&format!("/api/conversations/{id}")).await;
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/confirm"),
            approve(&info["pending"]["action"]),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    served.wait_for(&id, &["finished"]).await;
    // Once it ended: what it handed over, both files in it.
    browser.find("#live-files[data-live=\"0\"]").await;
    browser.until_text("#live-files", "second-words").await;
    browser.until_text("#live-files", "__pwnedDiff").await;
    check(
        &browser.js(PROBE).await,
        "the handed-over diff",
        &[IN_NAME, IN_DIFF],
    );
    let (status, answer) = served
        .get(&format!("/api/conversations/{id}/live-diff"))
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["live"], false, "{answer}");
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_shows_the_diff_as_the_agent_edits_on_a_laptop() {
    live(
        "ui_shows_the_diff_as_the_agent_edits_on_a_laptop",
        Viewport::Desktop,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_shows_the_diff_as_the_agent_edits_on_a_phone() {
    live(
        "ui_shows_the_diff_as_the_agent_edits_on_a_phone",
        Viewport::Phone,
    )
    .await;
}
