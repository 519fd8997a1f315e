//! A whole conversation through the UI, as a person would click it, at both viewports.

use super::browser::launch;
use super::browser::Browser;
use super::browser::Viewport;
use crate::common::Harness;
use crate::server::Served;
use serde_json::json;
use std::time::Duration;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

const WRITTEN: &str = "Looking at the failing test first, then at the code it checks.";

/// The doctor's speed check; a first reply written slowly (its words stream), a second held until the test stops
/// the run; the fix and the finish after the message; the fork's one reply.
fn script() -> Vec<Reply> {
    vec![
        // What the form's doctor measures its speed with.
        reply().text("1 2 3 4 5"),
        Reply::Paced(
            Duration::from_millis(120),
            Box::new(reply().text(WRITTEN).call(
                "terminal",
                json!({"command": "python3 -m unittest 2>&1 | tail -n 3"}),
            )),
        ),
        Reply::Delayed(
            Duration::from_secs(120),
            Box::new(reply().call("finish", json!({"message": "too late"}))),
        ),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
        ),
        reply().call(
            "finish",
            json!({"message": "row_to_csv keeps the last column now."}),
        ),
        reply().call("finish", json!({"message": "The fork looked, and agrees."})),
    ]
}

/// The id in a `#/c/ID` route.
fn route_id(hash: &str) -> String {
    hash.trim_start_matches("#/c/")
        .split('/')
        .next()
        .unwrap()
        .to_string()
}

async fn state_is(browser: &Browser, state: &str) {
    browser
        .find(&format!("#state[data-state=\"{state}\"]"))
        .await;
}

async fn whole_flow(test: &str, viewport: Viewport) {
    let Some(browser) = launch(test, viewport).await else {
        return;
    };
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(script()).await.unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;

    // The address `wright serve` printed: its cookie, then the list.
    browser.goto(&served.browser).await;
    browser.find("#conversations").await;
    browser
        .until_text("#conversations", "No conversation yet")
        .await;
    browser.screenshot("list").await;

    // The form: workspace, task, the model the server found, the doctor's word.
    browser.click("#new-conversation").await;
    browser.find("#workspace").await;
    browser
        .type_into("#workspace", &h.repo().display().to_string())
        .await;
    browser
        .type_into("#task", "The test of row_to_csv fails: fix it.")
        .await;
    browser
        .until(
            "the model picker offers test-model",
            "return document.querySelector('#model').value === 'test-model';",
        )
        .await;
    browser
        .until(
            "the doctor's report (or why there is none) is shown",
            "return !!document.querySelector('#doctor h2') && !document.querySelector('#doctor > p.muted');",
        )
        .await;
    // The sandbox as a choice (never "none" from a browser), and what it enforces in
    // words, part by part: no JSON.
    let options = browser
        .js("return [...document.querySelectorAll('#sandbox option')].map(o => o.value);")
        .await;
    assert_eq!(
        options,
        json!(["", "auto", "namespaces", "landlock", "docker"])
    );
    browser.until_text("#doctor dl", "syscalls").await;
    let doctor = browser
        .js("return document.querySelector('#doctor').textContent;")
        .await;
    assert!(!doctor.as_str().unwrap().contains("{\""), "{doctor}");
    browser.screenshot("new").await;
    browser.click("#start").await;
    browser
        .until(
            "the new conversation's page",
            "return location.hash.startsWith('#/c/');",
        )
        .await;
    let id = route_id(&browser.hash().await);

    // The reply shows as it is written, before it is logged whole.
    browser.until_text("#streaming-text", "Looking at").await;
    browser.until_text("li.message.agent .text", WRITTEN).await;
    // Its action, then what it printed once opened.
    browser
        .find("li.action.tool-terminal[data-done=\"1\"]")
        .await;
    browser.click("li.action.tool-terminal summary").await;
    browser
        .until_text("li.action.tool-terminal pre.cmd", "python3 -m unittest")
        .await;
    browser
        .until_text("li.action.tool-terminal pre.out", "FAILED")
        .await;
    browser.until_text("#stat-steps strong", "1").await;

    // Stopped while its second step waits on the model.
    state_is(&browser, "running").await;
    browser.click("#stop").await;
    state_is(&browser, "stopped").await;
    browser.until_text("li.state", "stopped").await;
    browser.screenshot("conversation").await;

    // A message goes on with it: the fix, shown as a diff, then the finish.
    browser.type_into("#message", "Go on: fix it now.").await;
    browser.click("#send").await;
    state_is(&browser, "finished").await;
    browser
        .until_text("li.message.user .text", "Go on: fix it now.")
        .await;
    browser.click("li.action.tool-file_editor summary").await;
    browser
        .until_text("li.action.tool-file_editor .diff .add", FIX.trim())
        .await;
    browser
        .until_text("li.action.tool-file_editor .diff .del", BUG.trim())
        .await;
    browser.until_text("li.changes", "wright/").await;
    browser.until_text("#stat-steps strong", "3").await;
    browser.screenshot("finished").await;

    // A fork from the first action: a new conversation, which says where it came from.
    browser.click("li.action.tool-terminal button.fork").await;
    browser.find("#fork-panel:not([hidden])").await;
    browser
        .type_into("#fork-message", "Look again before you change anything.")
        .await;
    browser.click("#fork-confirm").await;
    let mine = format!("#/c/{id}");
    let check = format!(
        "return location.hash.startsWith('#/c/') && location.hash !== {};",
        json!(mine)
    );
    browser.until("the fork's page", &check).await;
    let fork = route_id(&browser.hash().await);
    browser.until_text("li.start .forked", &id).await;
    state_is(&browser, "finished").await;
    browser
        .until_text("li.action .call", "The fork looked, and agrees.")
        .await;
    browser.screenshot("fork").await;
    assert_ne!(fork, id);

    // The first conversation's diff, file by file; applied to the user's branch.
    browser.goto(&served.url(&format!("/#/c/{id}"))).await;
    state_is(&browser, "finished").await;
    browser.click("#open-diff").await;
    browser.find("details.file[data-path=\"export.py\"]").await;
    browser
        .until_text("details.file .diff .add", FIX.trim())
        .await;
    browser.until_text("#diff-summary", "1 file changed").await;
    browser.screenshot("diff").await;
    let mine = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(mine.contains(BUG), "applied before the click: {mine}");
    browser.click("#apply").await;
    browser.until_text("#outcome .ok", "Applied").await;
    let applied = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(applied.contains(FIX), "{applied}");
    assert!(git(h.repo(), &["status", "--porcelain"]).is_empty());
    browser.screenshot("applied").await;

    // The list: both conversations, searched by a word of the task.
    browser.click("#nav-list").await;
    browser
        .until_text(
            &format!("li.conversation[data-id=\"{fork}\"]"),
            "test-model",
        )
        .await;
    browser
        .until_text(&format!("li.conversation[data-id=\"{id}\"]"), "finished")
        .await;
    browser.type_into("#search", "row_to_csv").await;
    browser
        .until(
            "the search keeps both",
            "return document.querySelectorAll('li.conversation').length === 2;",
        )
        .await;
    browser.type_into("#search", "nothing like it").await;
    browser
        .until_text("#conversations", "No conversation matches")
        .await;
    browser
        .js("const s = document.querySelector('#search'); s.value = ''; s.dispatchEvent(new Event('input'));")
        .await;
    browser
        .until(
            "the list again",
            "return document.querySelectorAll('li.conversation').length === 2;",
        )
        .await;
    browser.screenshot("list-filled").await;
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_runs_a_conversation_from_the_form_to_the_applied_diff() {
    whole_flow(
        "ui_runs_a_conversation_from_the_form_to_the_applied_diff",
        Viewport::Desktop,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_runs_a_conversation_on_a_phone_sized_screen() {
    whole_flow(
        "ui_runs_a_conversation_on_a_phone_sized_screen",
        Viewport::Phone,
    )
    .await;
}
