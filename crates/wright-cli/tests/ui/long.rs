//! A long conversation opened in the page: its log read in pages over HTTP (not a socket
//! frame per event), its last rows shown and the older ones behind "Show earlier", which
//! brings them back in order, a window at a time.

use super::browser::launch;
use super::browser::Viewport;
use super::kinds::log_of;
use crate::common::Harness;
use crate::server::Served;
use serde_json::json;

const ID: &str = "20260101-000000-long";
/// Messages after the start event and the task: more than one page of the log (1,000).
const MESSAGES: usize = 1_200;

fn long_log() -> String {
    let mut bodies = vec![
        (
            "environment",
            json!({"kind": "start", "version": 13, "conversation": ID, "workspace": "/tmp/long",
            "model": "test-model", "base_url": "http://127.0.0.1:9/v1", "system_prompt": "You are wright.",
            "tools": [], "tool_calling": "native"}),
        ),
        (
            "user",
            json!({"kind": "message", "text": "Say each number."}),
        ),
    ];
    for n in 0..MESSAGES {
        bodies.push((
            "agent",
            json!({"kind": "message", "step": n + 1, "text": format!("number {n}")}),
        ));
    }
    log_of(bodies)
        .iter()
        .map(|event| event.to_line().unwrap())
        .collect()
}

/// The numbers the agent's rows on the page say, in page order.
const SHOWN: &str = r#"
return [...document.querySelectorAll('#events li.ev')]
  .map(li => (li.textContent.match(/number (\d+)/) || [])[1])
  .filter(n => n !== undefined)
  .map(Number);
"#;

fn numbers(value: serde_json::Value) -> Vec<u64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_reads_a_long_log_in_pages_and_shows_earlier_rows_in_order() {
    let test = "ui_reads_a_long_log_in_pages_and_shows_earlier_rows_in_order";
    let Some(browser) = launch(test, Viewport::Desktop).await else {
        return;
    };
    let h = Harness::new();
    let dir = h.data.path().join("wright/conversations").join(ID);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("events.jsonl"), long_log()).unwrap();
    let served = Served::start(&h, &["--base-url", "http://127.0.0.1:9/v1"], &[]).await;

    browser.goto(&served.browser).await;
    browser.find("#conversations").await;
    browser.goto(&served.url(&format!("/#/c/{ID}"))).await;
    let last = MESSAGES + 1;
    browser
        .until(
            "every event is taken",
            &format!("const l = document.querySelector('#events'); return !!l && l.dataset.last === '{last}' && l.dataset.idle === '1';"),
        )
        .await;

    // Read over HTTP, a page of 1,000 at a time.
    let pages = browser
        .js("return performance.getEntriesByType('resource').filter(e => e.name.includes('/events?')).length;")
        .await;
    assert_eq!(pages, json!(2), "the log is read in two pages over HTTP");

    // The last rows are on the page, in order, up to the window; the rest wait.
    let shown = numbers(browser.js(SHOWN).await);
    assert!(
        (200..=225).contains(&shown.len()),
        "{} rows shown",
        shown.len()
    );
    assert_eq!(*shown.last().unwrap(), MESSAGES as u64 - 1);
    assert!(shown.windows(2).all(|w| w[1] == w[0] + 1), "{shown:?}");
    let waiting = MESSAGES + 2 - shown.len();
    browser
        .until_text(
            "#earlier",
            &format!("Show 200 earlier of {waiting} events not shown"),
        )
        .await;

    // Brought back in order, just before the first row shown.
    browser.click("#earlier").await;
    let more = numbers(browser.js(SHOWN).await);
    assert_eq!(more.len(), shown.len() + 200, "{more:?}");
    assert_eq!(more[200..], shown[..]);
    assert!(more.windows(2).all(|w| w[1] == w[0] + 1), "{more:?}");
    browser
        .until_text(
            "#earlier",
            &format!("Show 200 earlier of {} events not shown", waiting - 200),
        )
        .await;
    browser.screenshot("long-log").await;
    browser.quit().await;
}
