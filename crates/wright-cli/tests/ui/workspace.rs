//! The workspace in the browser: the file tree (one directory listed at a time), the
//! read-only viewer and the terminal pane with every command's whole output — on a
//! laptop's window and a phone's screen. The agent's file names, contents and outputs
//! are hostile: shown as text, none run; a link out of the workspace and a FIFO are
//! listed, never followed or opened, and the listing route refuses to leave the
//! workspace.

use super::browser::launch;
use super::browser::Viewport;
use super::hostile::check;
use super::hostile::IN_DIFF;
use super::hostile::IN_NAME;
use super::hostile::IN_OUTPUT;
use super::hostile::PROBE;
use crate::common::Harness;
use crate::server::Served;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

async fn workspace(test: &str, viewport: Viewport) {
    let Some(browser) = launch(test, viewport).await else {
        return;
    };
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": format!(
                "mkdir sub && echo inner-words > sub/inner.txt && mkfifo pipe && ln -s /etc etc-link && echo '{IN_OUTPUT}' && seq 1 400 | sed 's/^/line /'")}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "create", "path": IN_NAME, "file_text": format!("{IN_DIFF}\n")}),
        ),
        reply().call("finish", json!({"message": "made a few files"})),
    ])
    .await
    .unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let id = served.create(h.repo(), "make files", &model.url()).await;
    served.wait_for(&id, &["finished"]).await;

    // The route stays beneath the workspace: no `..`, no link out, no FIFO opened.
    let list = |path: &str| format!("/api/conversations/{id}/files?path={path}");
    let (status, top) = served.get(&list("")).await;
    assert_eq!(status, 200, "{top}");
    let kinds: Vec<(String, String)> = top["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (name, kind) in [
        ("sub", "dir"),
        ("pipe", "other"),
        ("etc-link", "link"),
        ("export.py", "file"),
    ] {
        assert!(
            kinds.contains(&(name.to_string(), kind.to_string())),
            "{name} as {kind}: {kinds:?}"
        );
    }
    assert!(!kinds.iter().any(|(name, _)| name == ".git"), "{kinds:?}");
    for bad in ["..", "../..", "etc-link", "pipe", "/etc"] {
        let (status, body) = served.get(&list(bad)).await;
        assert_eq!(status, 400, "{bad}: {body}");
    }

    browser.goto(&served.browser).await;
    browser.find("#conversations").await;
    browser.goto(&served.url(&format!("/#/c/{id}"))).await;
    browser.find("#state[data-state=\"finished\"]").await;
    browser.click("#open-files").await;
    browser
        .find("#tree button.entry.dir[data-path=\"sub\"]")
        .await;
    browser
        .until_text("#tree li.entry.other", "etc-link (a link, not followed)")
        .await;
    browser
        .until_text(
            "#tree li.entry.other",
            "pipe (not a regular file, not opened)",
        )
        .await;
    browser
        .click("#tree button.entry.dir[data-path=\"sub\"]")
        .await;
    browser
        .click("#tree button.entry.file[data-path=\"sub/inner.txt\"]")
        .await;
    browser.until_text("#viewer-text", "inner-words").await;
    browser.until_text("#tree", IN_NAME).await;
    browser
        .js(&format!(
            "[...document.querySelectorAll('#tree button.entry.file')].find(b => b.dataset.path === {}).click(); return true;",
            json!(IN_NAME)
        ))
        .await;
    browser.until_text("#viewer-text", "__pwnedDiff").await;
    browser.until_text("#viewer-path", IN_NAME).await;
    check(&browser.js(PROBE).await, "the files", &[IN_NAME, IN_DIFF]);
    browser.screenshot("files").await;

    // The terminal pane: each command as typed, its whole output (400 lines, none cut).
    browser.click("#tab-terminal").await;
    browser.until_text("#terminal .prompt", "mkfifo pipe").await;
    browser.until_text("#terminal .term-out", "line 400").await;
    browser.until_text("#terminal .term-out", "line 1\n").await;
    check(&browser.js(PROBE).await, "the terminal", &[IN_OUTPUT]);
    browser.screenshot("terminal").await;
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_shows_the_workspace_files_and_the_terminal_on_a_laptop() {
    workspace(
        "ui_shows_the_workspace_files_and_the_terminal_on_a_laptop",
        Viewport::Desktop,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_shows_the_workspace_files_and_the_terminal_on_a_phone() {
    workspace(
        "ui_shows_the_workspace_files_and_the_terminal_on_a_phone",
        Viewport::Phone,
    )
    .await;
}
