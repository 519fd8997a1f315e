//! The `browser` tool's screenshots beside their steps: a conversation run by the server
//! takes one with real Chromium in its sandbox; the screenshot route gives it as a PNG
//! (strict type, `nosniff`) and nothing else — no other name, no link, no file that is not
//! a PNG, no conversation but an existing one — and the UI, in a real headless Chromium,
//! shows it as an image in the step's row without the step being opened.

use super::browser::launch;
use super::browser::Viewport;
use crate::common::Harness;
use crate::server::brief;
use crate::server::Served;
use serde_json::json;
use std::io::Write;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_shows_a_browser_steps_screenshot_beside_it() {
    let test = "ui_shows_a_browser_steps_screenshot_beside_it";
    let Some(browser) = launch(test, Viewport::Desktop).await else {
        return;
    };
    let h = Harness::new();
    std::fs::write(h.repo().join("README"), "a page\n").unwrap();
    git(h.repo(), &["init", "-q"]);
    git(h.repo(), &["config", "user.name", "User"]);
    git(h.repo(), &["config", "user.email", "user@example.com"]);
    git(h.repo(), &["add", "-A"]);
    git(h.repo(), &["commit", "-qm", "first"]);
    let model = ScriptedServer::start(vec![
        reply().call("browser", json!({"action": "goto", "url": "about:blank"})),
        reply().call("browser", json!({"action": "screenshot"})),
        reply().call("finish", json!({"message": "looked"})),
    ])
    .await
    .unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let id = served
        .accepted(json!({"workspace": h.repo(), "task": "look at the page",
            "settings": {"base_url": model.url(), "model": "test-model", "tools": "full"}}))
        .await;
    // A browser that cannot run here makes both its calls errors, so the finish is refused
    // as premature and the script runs out: the run fails, and that is said, not hidden.
    let ended = served.wait_for(&id, &["finished", "failed"]).await;
    let events = served.events(&id, 1000).await;
    let browser_said = |n: usize| {
        events
            .iter()
            .filter(|e| e["kind"] == "observation" && e["tool"] == "browser")
            .nth(n)
            .and_then(|e| e["output"].as_str())
            .unwrap_or_else(|| panic!("no browser observation {n}: {}", brief(&events)))
    };
    let said = browser_said(1);
    if browser_said(0).contains("the browser cannot run here")
        || said.contains("the browser cannot run here")
    {
        let _ = writeln!(
            std::io::stderr(),
            "!!! the browser refused to run in this sandbox: the screenshot view is NOT CHECKED: {said} !!!"
        );
        browser.quit().await;
        return;
    }
    assert_eq!(ended["state"], "finished", "{}", brief(&events));
    assert!(
        said.starts_with("screenshot saved for the user: ") && said.contains("/screenshot-1.png"),
        "{said}"
    );

    // The route: the PNG, strictly typed.
    let route = |name: &str| served.url(&format!("/api/conversations/{id}/screenshots/{name}"));
    let answer = served
        .http
        .get(route("screenshot-1.png"))
        .bearer_auth(&served.key)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["content-type"], "image/png");
    assert_eq!(answer.headers()["x-content-type-options"], "nosniff");
    assert!(answer
        .bytes()
        .await
        .unwrap()
        .starts_with(b"\x89PNG\r\n\x1a\n"));
    // Nothing else: a file that is not a PNG, a link out, a FIFO, another name, another
    // conversation, no key.
    let shots = h
        .data
        .path()
        .join("wright/conversations")
        .join(&id)
        .join("screenshots");
    std::fs::write(
        shots.join("screenshot-2.png"),
        "<svg onload=alert(1)></svg>",
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc/passwd", shots.join("screenshot-3.png")).unwrap();
    let events_file = shots.parent().unwrap().join("events.jsonl");
    std::os::unix::fs::symlink(&events_file, shots.join("screenshot-4.png")).unwrap();
    for (name, status) in [
        ("screenshot-2.png", 404),
        ("screenshot-3.png", 404),
        ("screenshot-4.png", 404),
        ("screenshot-9.png", 404),
        ("..%2Fevents.jsonl", 400),
        ("events.jsonl", 400),
        ("screenshot-1.svg", 400),
    ] {
        let answer = served
            .http
            .get(route(name))
            .bearer_auth(&served.key)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), status, "{name}");
        assert!(answer.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json"));
    }
    let (status, body) = served
        .get("/api/conversations/nobody-s-id/screenshots/screenshot-1.png")
        .await;
    assert_eq!(status, 404, "{body}");
    let answer = served
        .http
        .get(route("screenshot-1.png"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 401);

    // The UI: the image in the step's row, loaded from the route, the step still closed.
    browser.goto(&served.browser).await;
    browser.find("#conversations").await;
    browser.goto(&served.url(&format!("/#/c/{id}"))).await;
    browser.find("#state[data-state=\"finished\"]").await;
    let img = "li.ev.action.tool-browser figure.screenshot img";
    browser.find(img).await;
    browser
        .until(
            "the screenshot loaded",
            &format!(
                "const i = document.querySelector({}); return !!i && i.complete && i.naturalWidth > 0;",
                json!(img)
            ),
        )
        .await;
    let shown = browser
        .js(&format!(
            "const i = document.querySelector({}); const d = i.closest('li').querySelector('details.call'); return [new URL(i.src).pathname, d.open, document.querySelectorAll('figure.screenshot').length];",
            json!(img)
        ))
        .await;
    assert_eq!(
        shown,
        json!([
            format!("/api/conversations/{id}/screenshots/screenshot-1.png"),
            false,
            1
        ])
    );
    browser.screenshot("browser-screenshot").await;
    browser.quit().await;
}
