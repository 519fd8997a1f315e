//! Steering from the page after a server restart, from the log's state: a side question
//! (`/ask`) answered in the page and logged as its own row; a fork from an event; Discard,
//! which deletes work, asks in the page first — "Keep it" leaves the branch, "Yes,
//! discard it" removes it.

use super::browser::launch;
use super::browser::Viewport;
use crate::common::Harness;
use crate::server::fixing_script;
use crate::server::Served;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_asks_aside_and_discards_only_once_confirmed_after_a_restart() {
    let test = "ui_asks_aside_and_discards_only_once_confirmed_after_a_restart";
    let Some(browser) = launch(test, Viewport::Desktop).await else {
        return;
    };
    let h = Harness::new();
    failing_python_repo(h.repo());
    let mut script = fixing_script();
    script.push(reply().text("ASIDE-ANSWER: it fixed row_to_csv."));
    let model = ScriptedServer::start(script).await.unwrap();
    let mut first = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let id = first
        .create(h.repo(), "the tests fail, fix it", &model.url())
        .await;
    first.wait_for(&id, &["finished"]).await;
    let signalled = std::process::Command::new("kill")
        .args(["-TERM", &first.child.id().unwrap().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    first.child.wait().await.unwrap();

    // A new server knows the conversation from its log alone.
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    browser
        .goto(&format!("{}&next=/%23/c/{id}", served.browser))
        .await;
    browser.find("#state[data-state=\"finished\"]").await;
    browser.click("#open-ask").await;
    browser
        .type_into("#ask-question", "What did you change?")
        .await;
    browser.click("#ask-send").await;
    browser.until_text("#ask-reply", "ASIDE-ANSWER").await;
    browser
        .until_text("li.side-question .answer", "ASIDE-ANSWER")
        .await;
    browser.screenshot("ask-aside").await;
    let events = served.events(&id, 1000).await;
    assert_eq!(
        events
            .iter()
            .filter(|e| e["kind"] == "side_question")
            .count(),
        1
    );

    // A fork from its first action, made by the new server from the log.
    browser.click("li.action.tool-terminal button.fork").await;
    browser.find("#fork-panel:not([hidden])").await;
    browser.click("#fork-confirm").await;
    browser
        .until(
            "the fork's page",
            &format!("return location.hash.startsWith('#/c/') && location.hash !== '#/c/{id}';"),
        )
        .await;
    browser.until_text("li.start .forked", &id).await;
    browser.goto(&served.url(&format!("/#/c/{id}"))).await;
    browser.find("#state[data-state=\"finished\"]").await;

    browser.click("#open-diff").await;
    browser.find("details.file .diff").await;
    browser.click("#discard").await;
    browser
        .until_text("#discard-confirm", "cannot be undone")
        .await;
    browser.screenshot("discard-confirm").await;
    browser.click("#discard-no").await;
    browser
        .until(
            "the question gone",
            "return document.getElementById('discard-confirm').hidden;",
        )
        .await;
    // Kept: its branch is still there.
    let (status, diff) = served.get(&format!("/api/conversations/{id}/diff")).await;
    assert_eq!(status, 200, "{diff}");
    assert!(diff["diff"].is_string(), "{diff}");

    browser.click("#discard").await;
    browser.click("#discard-yes").await;
    browser.until_text("#outcome", "Discarded").await;
    let (status, diff) = served.get(&format!("/api/conversations/{id}/diff")).await;
    assert_eq!(status, 200, "{diff}");
    assert!(diff["diff"].is_null(), "{diff}");
    browser.quit().await;
}
