//! The automations in the browser: the server's automations with their trigger and
//! repository, and their last firings — how each ended, for which issue — each run
//! linking to the conversation it started; an event the automation does not fire for is
//! listed as ignored, with no conversation. A signed GitHub-shaped `issues` delivery
//! (label added) fires it for real; what the forge sent (a label's name) plants nothing.

use super::browser::launch;
use super::browser::Viewport;
use super::hostile::check;
use super::hostile::PROBE;
use crate::common::Harness;
use crate::server::fixing_script;
use crate::server::Served;
use serde_json::json;
use serde_json::Value;
use sha2::Digest;
use std::time::Duration;
use wright_testkit::failing_python_repo;
use wright_testkit::ScriptedServer;

const SECRET: &str = "ui-automation-secret";
const PLANT: &str = "<img src=x onerror=window.__pwnedLabel=1>";

/// HMAC-SHA256 (RFC 2104) of `body`, in hex: GitHub's `X-Hub-Signature-256`.
fn signature(body: &[u8]) -> String {
    let mut block = [0u8; 64];
    block[..SECRET.len()].copy_from_slice(SECRET.as_bytes());
    let pad = |byte: u8| block.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let inner = sha2::Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(body)
        .finalize();
    let outer = sha2::Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize();
    let hex: String = outer.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// GitHub's `issues` event, action `labeled` (trimmed from its documented example).
fn labeled(label: &str) -> Vec<u8> {
    json!({
        "action": "labeled",
        "issue": {
            "number": 1347, "state": "open", "title": "The CSV export drops a column",
            "body": "Running the tests shows the last column missing.",
            "user": {"login": "octocat", "id": 1},
            "labels": [{"id": 208045946, "name": label}],
            "author_association": "OWNER"
        },
        "label": {"id": 208045946, "name": label},
        "repository": {"id": 1296269, "full_name": "octocat/Hello-World"},
        "sender": {"login": "octocat", "id": 1}
    })
    .to_string()
    .into_bytes()
}

async fn deliver(served: &Served, body: Vec<u8>, delivery: &str) -> (u16, Value) {
    let request = served
        .http
        .post(served.url("/hooks/fix"))
        .header("Content-Type", "application/json")
        .header("X-GitHub-Event", "issues")
        .header("X-GitHub-Delivery", delivery)
        .header("X-Hub-Signature-256", signature(&body))
        .body(body);
    served.send(request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_lists_the_automations_their_runs_and_outcomes_linking_each_run() {
    automations_page(
        "ui_lists_the_automations_their_runs_and_outcomes_linking_each_run",
        Viewport::Desktop,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_lists_the_automations_their_runs_and_outcomes_linking_each_run_on_a_phone() {
    automations_page(
        "ui_lists_the_automations_their_runs_and_outcomes_linking_each_run_on_a_phone",
        Viewport::Phone,
    )
    .await;
}

async fn automations_page(test: &str, viewport: Viewport) {
    let Some(browser) = launch(test, viewport).await else {
        return;
    };
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(fixing_script()).await.unwrap();
    let config = h.data.path().join("config/wright");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[automations.fix]\non = \"webhook\"\nforge = \"github\"\nsecret_env = \"UI_HOOK_SECRET\"\n\
             repository = \"{}\"\ntask = \"Fix issue {{issue.number}}: {{issue.title}}\"\n\
             label = \"wright\"\nmax_steps = 20\n\n[automations.fix.result]\npush = false\npull_request = false\n",
            h.repo().display()
        ),
    )
    .unwrap();
    let served = Served::start(
        &h,
        &["--base-url", &model.url(), "--model", "test-model"],
        &[("UI_HOOK_SECRET", SECRET)],
    )
    .await;

    // One delivery it does not fire for (another label, hostile), then one it does.
    let (status, answer) = deliver(&served, labeled(PLANT), "ui-1").await;
    assert_eq!(
        (status, answer["outcome"].as_str()),
        (200, Some("ignored")),
        "{answer}"
    );
    let (status, answer) = deliver(&served, labeled("wright"), "ui-2").await;
    assert_eq!(status, 202, "{answer}");
    let mut conversation = None;
    for _ in 0..1200 {
        let (status, listed) = served.get("/api/automations").await;
        assert_eq!(status, 200, "{listed}");
        let firings = listed["automations"][0]["firings"]
            .as_array()
            .unwrap()
            .clone();
        if let Some(ended) = firings.iter().find(|f| f["outcome"] == "ended") {
            conversation = ended["conversation"].as_str().map(str::to_string);
            break;
        }
        assert!(
            !firings.iter().any(|f| f["outcome"] == "failed"),
            "{listed:#}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let conversation = conversation.expect("the firing never ended");

    browser.goto(&served.browser).await;
    browser.find("#conversations").await;
    browser.click("#nav-automations").await;
    browser.find("#automations[data-loaded=\"1\"]").await;
    browser
        .until_text("section.automation[data-name=\"fix\"] h2", "fix")
        .await;
    browser
        .until_text(
            "section.automation[data-name=\"fix\"]",
            "on a webhook from github: POST /hooks/fix, issues labelled wright",
        )
        .await;
    browser
        .until_text("li.firing[data-outcome=\"ended\"]", "issue #1347")
        .await;
    browser
        .until_text("li.firing[data-outcome=\"ignored\"]", "no conversation")
        .await;
    let linked = browser
        .js("return [...document.querySelectorAll('li.firing a.conversation-link')].map(a => a.getAttribute('href'));")
        .await;
    assert_eq!(linked, json!([format!("#/c/{conversation}")]));
    check(&browser.js(PROBE).await, "the automations", &[]);
    // Nothing wider than the screen (a phone's too): the page scrolls down only.
    let wide = browser
        .js("return document.documentElement.scrollWidth - window.innerWidth;")
        .await;
    assert!(
        wide.as_f64().unwrap() <= 0.0,
        "{wide} px wider than the screen"
    );
    browser.screenshot("automations").await;
    browser
        .click("li.firing[data-outcome=\"ended\"] a.conversation-link")
        .await;
    browser
        .until(
            "the firing's conversation",
            &format!("return location.hash === '#/c/{conversation}';"),
        )
        .await;
    browser.until_text("#task-title", "Fix issue 1347").await;
    browser.quit().await;
}
