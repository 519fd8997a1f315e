//! What the agent writes is shown, never run: HTML and script planted in its words, a
//! command's output, a file's name and the diff appear as text on every page, and not
//! one planted element or global comes to life. The pages' headers are checked too.

use super::browser::launch;
use super::browser::Viewport;
use crate::common::Harness;
use crate::server::Served;
use serde_json::json;
use serde_json::Value;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// Each plant sets a global of its own if it ever runs.
const IN_WORDS: &str =
    "<img src=x onerror=\"window.__pwnedWords=1\"><script>window.__pwnedWords=2</script>";
pub(super) const IN_OUTPUT: &str =
    "<img src=x onerror=window.__pwnedOutput=1><script>window.__pwnedOutput=2</script>";
/// A file name holds no `/`: no closing tag, an `onerror` and an `autofocus` handler.
pub(super) const IN_NAME: &str = "<img src=x onerror=window.__pwnedName=1><b onfocus=window.__pwnedName=2 autofocus tabindex=1>n.txt";
pub(super) const IN_DIFF: &str = "<svg onload=window.__pwnedDiff=1></svg><iframe srcdoc=\"<script>parent.__pwnedDiff=2</script>\"></iframe>";

/// What the page shows of the plants: globals set, elements the UI never makes, and
/// whether Trusted Types would refuse a string turned into HTML.
pub(super) const PROBE: &str = r#"
const globals = Object.keys(window).filter(k => k.startsWith('__pwned'));
const planted = document.querySelectorAll('img, svg, iframe, b, script:not([src]), object, embed').length;
const scripts = [...document.scripts].map(s => s.getAttribute('src'));
let trusted;
try { document.createElement('div').insertAdjacentHTML('beforeend', '<i>x</i>'); trusted = 'allowed'; }
catch (e) { trusted = e.name; }
return {globals, planted, scripts, trusted, text: document.body.textContent};
"#;

pub(super) fn check(probe: &Value, page: &str, shown: &[&str]) {
    assert_eq!(probe["globals"], json!([]), "{page}: a plant ran");
    assert_eq!(
        probe["planted"],
        json!(0),
        "{page}: a planted element exists"
    );
    assert_eq!(probe["scripts"], json!(["/ui/app.js"]), "{page}");
    assert_eq!(
        probe["trusted"],
        json!("TypeError"),
        "{page}: HTML from a string is allowed"
    );
    let text = probe["text"].as_str().unwrap();
    for plant in shown {
        assert!(
            text.contains(plant),
            "{page} does not show {plant:?} as text:\n{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_shows_what_the_agent_wrote_as_text_and_runs_none_of_it() {
    let test = "ui_shows_what_the_agent_wrote_as_text_and_runs_none_of_it";
    let Some(browser) = launch(test, Viewport::Desktop).await else {
        return;
    };
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(vec![
        reply().text(IN_WORDS).call(
            "terminal",
            json!({"command": format!("echo '{IN_OUTPUT}'")}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "create", "path": IN_NAME, "file_text": format!("{IN_DIFF}\n")}),
        ),
        reply().call("finish", json!({"message": IN_WORDS})),
    ])
    .await
    .unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;

    // The pages' headers: the strict policy, never sniffed, never framed.
    let page = served
        .http
        .get(served.url("/"))
        .bearer_auth(&served.key)
        .send()
        .await
        .unwrap();
    let headers = page.headers().clone();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    let policy = headers["content-security-policy"].to_str().unwrap();
    for part in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
    ] {
        assert!(policy.contains(part), "{policy}");
    }
    assert!(!policy.contains("unsafe"), "{policy}");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    for path in ["/ui/app.js", "/api/conversations"] {
        let answer = served
            .http
            .get(served.url(path))
            .bearer_auth(&served.key)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200, "{path}");
        assert_eq!(
            answer.headers()["x-content-type-options"],
            "nosniff",
            "{path}"
        );
    }
    let (status, _) = served.get("/ui/nothing.js").await;
    assert_eq!(status, 404);

    let id = served.create(h.repo(), IN_WORDS, &model.url()).await;
    served.wait_for(&id, &["finished"]).await;

    browser.goto(&served.browser).await;
    browser.until_text("#conversations", "__pwnedWords").await;
    check(&browser.js(PROBE).await, "the list", &[IN_WORDS]);

    browser.goto(&served.url(&format!("/#/c/{id}"))).await;
    browser.find("li.changes").await;
    // Every row opened: outputs, arguments and reasoning made.
    browser
        .js("document.querySelectorAll('details').forEach(d => { d.open = true; });")
        .await;
    browser.until_text("pre.out", IN_OUTPUT).await;
    browser
        .until_text("li.tool-file_editor .diff .add", "__pwnedDiff")
        .await;
    check(
        &browser.js(PROBE).await,
        "the conversation",
        &[IN_WORDS, IN_OUTPUT, IN_NAME, IN_DIFF],
    );

    browser.click("#open-diff").await;
    browser.find("details.file .diff").await;
    browser.until_text("#files", IN_NAME).await;
    check(&browser.js(PROBE).await, "the diff", &[IN_NAME, IN_DIFF]);
    browser.screenshot("hostile-diff").await;
    browser.quit().await;
}
