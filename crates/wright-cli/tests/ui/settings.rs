//! The settings page in the browser: the model server and its models with
//! the doctor's findings, each profile with its values and the doctor's report on it,
//! the configuration's values with where each came from (the user's file and line, a
//! flag, a default) and whether a repository's file may set it, and the consent
//! record's decisions — from `/api/settings` (a user's key may not read it: see
//! `server::database`).

use super::browser::launch;
use super::browser::Viewport;
use crate::common::Harness;
use crate::server::Served;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::ScriptedServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_shows_the_settings_with_their_origins_profiles_and_consent() {
    settings_page(
        "ui_shows_the_settings_with_their_origins_profiles_and_consent",
        Viewport::Desktop,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_shows_the_settings_with_their_origins_profiles_and_consent_on_a_phone() {
    settings_page(
        "ui_shows_the_settings_with_their_origins_profiles_and_consent_on_a_phone",
        Viewport::Phone,
    )
    .await;
}

async fn settings_page(test: &str, viewport: Viewport) {
    let Some(browser) = launch(test, viewport).await else {
        return;
    };
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(vec![]).await.unwrap();
    let config = h.data.path().join("config/wright");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "tool_calling = \"native\"\n\n[profiles.small]\nmodel = \"test-model\"\nbase_url = \"{}\"\n",
            model.url()
        ),
    )
    .unwrap();
    let consent = h.data.path().join("wright");
    std::fs::create_dir_all(&consent).unwrap();
    std::fs::write(
        consent.join("consent.json"),
        json!({"grants": [{"kind": "egress", "repo": h.repo(), "subject": "models.example.com:443"}]})
            .to_string(),
    )
    .unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;

    let (status, settings) = served.get("/api/settings").await;
    assert_eq!(status, 200, "{settings}");
    let value = |key: &str| {
        settings["values"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["key"] == key)
            .cloned()
            .unwrap_or_else(|| panic!("no {key}: {settings:#}"))
    };
    let tool_calling = value("tool_calling");
    assert_eq!(tool_calling["value"], "\"native\"");
    assert!(
        tool_calling["origin"]
            .as_str()
            .unwrap()
            .ends_with("config.toml:1"),
        "{tool_calling}"
    );
    assert_eq!(tool_calling["repository"], "allowed");
    assert_eq!(
        value("profiles.small.model")["repository"],
        "needs_approval"
    );
    assert!(
        value("base_url")["origin"]
            .as_str()
            .unwrap()
            .contains("flag"),
        "{settings:#}"
    );
    assert_eq!(settings["consent"][0]["kind"], "egress", "{settings:#}");

    browser.goto(&served.browser).await;
    browser.find("#conversations").await;
    browser.click("#nav-settings").await;
    browser.find("#settings-values[data-loaded=\"1\"]").await;
    let rows = browser
        .js("return [...document.querySelectorAll('#config-values tbody tr')].map(r => [...r.cells].map(c => c.textContent));")
        .await;
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[0] == "tool_calling")
        .cloned()
        .unwrap_or_else(|| panic!("{rows:#}"));
    assert_eq!(row[1], "\"native\"");
    assert!(row[2].as_str().unwrap().ends_with("config.toml:1"), "{row}");
    assert_eq!(row[3], "a repository may set it");
    browser
        .until_text("#consent-decisions", "models.example.com:443")
        .await;
    browser.until_text("#model-names", "test-model").await;
    browser.until_text("#doctor h2", "Model server").await;
    browser
        .until_text("section.profile[data-profile=\"small\"] h3", "small")
        .await;
    browser
        .click("section.profile[data-profile=\"small\"] button.check-profile")
        .await;
    browser
        .until_text(
            "section.profile[data-profile=\"small\"] .doctor h2",
            "Model server",
        )
        .await;
    // Nothing wider than the screen (a phone's too): the page scrolls down only.
    let wide = browser
        .js("return document.documentElement.scrollWidth - window.innerWidth;")
        .await;
    assert!(
        wide.as_f64().unwrap() <= 0.0,
        "{wide} px wider than the screen"
    );
    browser.screenshot("settings").await;
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_changes_a_value_in_the_users_file_and_shows_its_origin() {
    change_a_value(
        "ui_changes_a_value_in_the_users_file_and_shows_its_origin",
        Viewport::Desktop,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_changes_a_value_in_the_users_file_and_shows_its_origin_on_a_phone() {
    change_a_value(
        "ui_changes_a_value_in_the_users_file_and_shows_its_origin_on_a_phone",
        Viewport::Phone,
    )
    .await;
}

/// The settings page's form changes `run.max_steps` in the user's file (its comment
/// kept); after a reload the table shows the new value from that file's line; a value
/// the loader refuses is said on the page and changes nothing.
async fn change_a_value(test: &str, viewport: Viewport) {
    let Some(browser) = launch(test, viewport).await else {
        return;
    };
    let h = Harness::new();
    let model = ScriptedServer::start(vec![]).await.unwrap();
    let config = h.data.path().join("config/wright/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let mine = "# my limits\n[run]\nmax_steps = 30 # a long task\n";
    std::fs::write(&config, mine).unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    browser.goto(&served.browser).await;
    browser.find("#conversations").await;
    browser.click("#nav-settings").await;
    browser.find("#settings-values[data-loaded=\"1\"]").await;
    let choose = "const k = document.getElementById('change-key'); k.value = 'run.max_steps'; k.dispatchEvent(new Event('change')); return k.value;";
    assert_eq!(browser.js(choose).await, "run.max_steps");
    browser
        .until(
            "the form shows the value now",
            "return document.getElementById('change-value').value === '30';",
        )
        .await;
    // Refused: said on the page, the file unchanged.
    browser.type_into("#change-value", "0").await;
    browser.click("#change-save").await;
    browser.until_text("#change-error", "run.max_steps").await;
    assert_eq!(std::fs::read_to_string(&config).unwrap(), mine);
    browser.type_into("#change-value", "45").await;
    browser.click("#change-save").await;
    browser.until_text("#change-done", "run.max_steps").await;
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        mine.replace("30", "45")
    );

    // A fresh page reads it from the server: the value with its file and line.
    browser.js("location.reload(); return true;").await;
    browser.find("#settings-values[data-loaded=\"1\"]").await;
    let rows = browser
        .js("return [...document.querySelectorAll('#config-values tbody tr')].map(r => [...r.cells].map(c => c.textContent));")
        .await;
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[0] == "run.max_steps")
        .cloned()
        .unwrap_or_else(|| panic!("{rows:#}"));
    assert_eq!(row[1], "45");
    assert!(row[2].as_str().unwrap().ends_with("config.toml:3"), "{row}");
    let wide = browser
        .js("return document.documentElement.scrollWidth - window.innerWidth;")
        .await;
    assert!(
        wide.as_f64().unwrap() <= 0.0,
        "{wide} px wider than the screen"
    );
    browser.screenshot("settings-changed").await;
    browser.quit().await;
}
