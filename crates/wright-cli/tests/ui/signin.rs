//! Signing in from a browser: without a session (no cookie, or a stray one) the UI's
//! address shows how to sign in, not the API's JSON; a pasted key signs in and goes on to
//! the page that was opened; the one-time address takes a `next` (a path of this server
//! only, else refused before the token is spent) and opens that page directly.

use super::browser::launch;
use super::browser::Viewport;
use crate::common::Harness;
use crate::server::Served;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_without_a_session_says_how_to_sign_in_and_signs_in_by_key_or_address() {
    let test = "ui_without_a_session_says_how_to_sign_in_and_signs_in_by_key_or_address";
    let Some(browser) = launch(test, Viewport::Phone).await else {
        return;
    };
    let h = Harness::new();
    let served = Served::start(&h, &["--base-url", "http://127.0.0.1:9/v1"], &[]).await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();

    // Another site's address, a protocol-relative one, backslashes: refused, the token
    // not spent.
    for bad in [
        "//evil.example/",
        "https://evil.example/",
        "/%5Cevil.example",
        "/%5C%5Cevil.example",
        "%2F%2Fevil.example",
        "evil.example",
    ] {
        let answer = http
            .get(format!("{}&next={bad}", served.browser))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 400, "next={bad}");
        assert!(answer.headers().get("set-cookie").is_none(), "next={bad}");
    }
    // A program still gets the API's error; the key by JSON from another origin, nothing.
    let (status, body) = served.send(http.get(served.url("/"))).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("missing_key")));
    let (status, _) = served
        .send(
            http.post(served.url("/auth"))
                .header("Origin", "http://evil.example")
                .json(&json!({"key": served.key})),
        )
        .await;
    assert_eq!(status, 403);
    let (status, body) = served
        .send(
            http.post(served.url("/auth"))
                .json(&json!({"key": "k".repeat(64)})),
        )
        .await;
    assert_eq!((status, body["error"].as_str()), (401, Some("wrong_key")));

    // A fresh browser: the sign-in page.
    browser.goto(&served.url("/")).await;
    browser.find("#signin").await;
    let text = browser.page_text().await;
    assert!(text.contains("Sign in"), "{text}");
    assert!(text.contains("open once"), "{text}");
    assert!(!text.contains("missing_key"), "{text}");
    browser.screenshot("signin").await;

    // A stray cookie of the same name (another local program's) is no session either.
    browser
        .js("document.cookie = 'wright_session=set-by-another-port; path=/'; return true;")
        .await;
    browser.goto(&served.url("/#/new")).await;
    browser.find("#signin").await;

    // A wrong key is said to be wrong; the right one goes on to the page opened.
    browser.type_into("#key", &"0".repeat(64)).await;
    browser.click("#signin-submit").await;
    browser
        .until_text("#signin-error", "not this server's key")
        .await;
    browser.type_into("#key", &served.key).await;
    browser.click("#signin-submit").await;
    browser.find("#workspace").await;
    assert_eq!(browser.hash().await, "#/new");

    // Signed out again: the one-time address with a `next` opens that page directly.
    browser.client.delete_all_cookies().await.unwrap();
    browser.goto(&served.url("/")).await;
    browser.find("#signin").await;
    browser
        .goto(&format!("{}&next=/%23/new", served.browser))
        .await;
    browser.find("#workspace").await;
    assert_eq!(browser.hash().await, "#/new");
    // Spent: opened again, it says so on the sign-in page.
    browser.client.delete_all_cookies().await.unwrap();
    browser.goto(&served.browser).await;
    browser.until_text("#signin-why", "used already").await;
    browser.quit().await;
}
