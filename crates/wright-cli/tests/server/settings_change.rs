//! `PUT /api/settings`: one value of the user's own file changed from the server — the
//! file's comments and layout kept, the new value's origin its line; a value the loader
//! refuses, or a key that is not changed from there (the sandbox, the network, a secret's
//! variable, an agent's command), leaves the file byte for byte as it was; on the
//! browser's cookie alone, only from the server's own page.

use super::Served;
use crate::common::Harness;
use serde_json::json;
use serde_json::Value;

const MINE: &str = "# my own settings\ntool_calling = \"native\"  # my server needs it\n\n[run]\n# long tasks\nmax_steps = 30 # why\n";

/// `PUT /api/settings` with `body`, with the server key.
async fn put(served: &Served, body: Value) -> (u16, Value) {
    served
        .send(
            served
                .http
                .put(served.url("/api/settings"))
                .bearer_auth(&served.key)
                .json(&body),
        )
        .await
}

fn value<'a>(settings: &'a Value, key: &str) -> &'a Value {
    settings["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["key"] == key)
        .unwrap_or_else(|| panic!("no {key}: {settings:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_changes_in_the_users_file_with_its_comments_and_a_bad_one_changes_nothing() {
    let h = Harness::new();
    let config = h.data.path().join("config/wright/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, MINE).unwrap();
    let served = Served::start(&h, &[], &[]).await;

    let (status, settings) = served.get("/api/settings").await;
    assert_eq!(status, 200, "{settings}");
    assert_eq!(value(&settings, "run.max_steps")["editable"], true);
    assert_eq!(value(&settings, "tool_calling")["editable"], true);
    let offered: Vec<&str> = settings["changeable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert!(offered.contains(&"base_url"), "{offered:?}");
    assert!(
        !offered.iter().any(|k| k.starts_with("sandbox")),
        "{offered:?}"
    );

    let (status, now) = put(&served, json!({"key": "run.max_steps", "value": "45"})).await;
    assert_eq!(status, 200, "{now}");
    assert_eq!(value(&now, "run.max_steps")["value"], "45");
    assert!(
        value(&now, "run.max_steps")["origin"]
            .as_str()
            .unwrap()
            .ends_with("config.toml:6"),
        "{now:#}"
    );
    let changed = MINE.replace("max_steps = 30", "max_steps = 45");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), changed);
    // A key the file did not have goes in, the rest as it was.
    let (status, now) = put(&served, json!({"key": "run.max_time", "value": "900"})).await;
    assert_eq!(status, 200, "{now}");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with(&changed), "{text}");
    assert!(text.contains("max_time = 900"), "{text}");

    // Refused by the loader's own checks, or not changed from here: the file unchanged,
    // and no file left beside it.
    for (change, status, code) in [
        (
            json!({"key": "tool_calling", "value": "smoke"}),
            400,
            "bad_value",
        ),
        (
            json!({"key": "run.max_steps", "value": "0"}),
            400,
            "bad_value",
        ),
        (
            json!({"key": "run.max_steps", "value": "many"}),
            400,
            "bad_value",
        ),
        (json!({"key": "profile", "value": "nope"}), 400, "bad_value"),
        (
            json!({"key": "sandbox.level", "value": "none"}),
            403,
            "not_editable",
        ),
        (
            json!({"key": "sandbox.network", "value": "true"}),
            403,
            "not_editable",
        ),
        (
            json!({"key": "model_file", "value": "/tmp/x.gguf"}),
            403,
            "not_editable",
        ),
        (
            json!({"key": "api_key_env", "value": "HOME"}),
            403,
            "not_editable",
        ),
        (
            json!({"key": "agents.x.command", "value": "sh"}),
            403,
            "not_editable",
        ),
        (
            json!({"key": "server.users_may", "value": "sandbox"}),
            403,
            "not_editable",
        ),
    ] {
        let (got, body) = put(&served, change.clone()).await;
        assert_eq!(
            (got, body["error"].as_str()),
            (status, Some(code)),
            "{change}: {body}"
        );
        assert_eq!(std::fs::read_to_string(&config).unwrap(), text, "{change}");
    }
    let (_, refused) = put(&served, json!({"key": "profile", "value": "nope"})).await;
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("no profile 'nope'"),
        "{refused}"
    );
    let beside: Vec<_> = std::fs::read_dir(config.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(beside.len(), 1, "{beside:?}");

    // Removed: back to the default, the comments kept.
    let (status, now) = put(&served, json!({"key": "run.max_time", "value": null})).await;
    assert_eq!(status, 200, "{now}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), changed);

    // The browser's cookie alone changes nothing unless from the server's own page.
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let opened = browser.get(&served.browser).send().await.unwrap();
    assert_eq!(opened.status(), 303);
    let cookie = opened.headers()["set-cookie"].to_str().unwrap().to_string();
    let cookie = cookie.split(';').next().unwrap().to_string();
    let (status, body) = served
        .send(
            browser
                .put(served.url("/api/settings"))
                .header("Cookie", cookie.as_str())
                .json(&json!({"key": "run.max_steps", "value": "7"})),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (403, Some("not_same_origin")),
        "{body}"
    );
    let (status, body) = served
        .send(
            browser
                .put(served.url("/api/settings"))
                .header("Cookie", cookie.as_str())
                .header("Origin", "http://evil.test")
                .json(&json!({"key": "run.max_steps", "value": "7"})),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), changed);
}
