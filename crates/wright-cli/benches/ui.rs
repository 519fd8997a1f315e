//! `cargo bench -p wright-cli --bench ui`: what the browser UI costs, in a real headless
//! Chromium (Debian's, through chromedriver) against a real `wright serve`.
//!
//! Prints: the first load's bytes over the wire (the page and its modules and sheet, from
//! the browser's own resource timing, a fresh profile so nothing is cached) and the time
//! until the first page shows its data and answers (`wright-interactive`, from the start
//! of the navigation), median of several loads; then, for a conversation of 2,000 logged
//! events (a log written for the benchmark: 500 steps of message, terminal call, 30-line
//! output and usage, with a nudge and a condensation), the time until all are shown and
//! the longest frame while they are, measured in the page by a requestAnimationFrame
//! loop, and Chromium's long animation frames (over 50 ms) when there are any.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_macros)]

#[allow(dead_code)]
#[path = "../tests/ui/browser.rs"]
mod browser;

use serde_json::json;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

const WRIGHT: &str = env!("CARGO_BIN_EXE_wright");
const EVENTS: u64 = 2000;
const ID: &str = "20260101-000000-b2k0";

/// Lines of a log; each event's id is its place.
struct Log(Vec<String>);

impl Log {
    fn next(&self) -> u64 {
        self.0.len() as u64
    }

    fn push(&mut self, source: &str, body: Value) {
        let mut event =
            json!({"id": self.next(), "ts": "2026-01-01T00:00:00.000Z", "source": source});
        for (k, v) in body.as_object().unwrap() {
            event[k] = v.clone();
        }
        self.0.push(event.to_string());
    }
}

/// A log of `EVENTS` events, as a long run writes it.
fn write_log(data: &Path) {
    let dir = data.join("wright/conversations").join(ID);
    std::fs::create_dir_all(&dir).unwrap();
    let mut log = Log(Vec::new());
    log.push("environment", json!({"kind": "start", "version": 4, "conversation": ID, "workspace": "/tmp/bench",
        "model": "bench-model", "base_url": "http://127.0.0.1:1/v1", "system_prompt": "You are wright.",
        "tools": [], "tool_calling": "native"}));
    log.push(
        "user",
        json!({"kind": "message", "text": "Make the whole suite pass."}),
    );
    let mut step = 1;
    while log.next() + 4 <= EVENTS - 2 {
        let call = format!("call_{step}");
        let here = log.next();
        match step {
            200 => log.push("environment", json!({"kind": "message", "step": step,
                "text": "You are going in circles: the same command three times. Do not repeat it."})),
            300 => log.push("environment", json!({"kind": "condensation", "keep_from": here - 40,
                "masked": [here - 30, here - 20], "summary": "The suite has 40 failures in parser/.",
                "tokens_before": 24000, "tokens_after": 9000})),
            _ => log.push("agent", json!({"kind": "message", "step": step,
                "text": format!("Step {step}: the failure points at parser/expr.rs, line {}. Reading it, then running the tests again.", step * 3)})),
        }
        log.push("agent", json!({"kind": "action", "step": step, "call_id": call, "tool": "terminal",
            "arguments": {"command": format!("cargo test -p parser expr_{step} 2>&1 | tail -n 30")}}));
        let output: Vec<String> = (0..30)
            .map(|n| {
                format!(
                    "test expr::case_{step}_{n} ... {}",
                    if n % 7 == 0 { "FAILED" } else { "ok" }
                )
            })
            .collect();
        log.push(
            "environment",
            json!({"kind": "observation", "call_id": call, "tool": "terminal",
            "output": output.join("\n"), "is_error": false, "exit_code": 101}),
        );
        log.push(
            "environment",
            json!({"kind": "usage", "step": step, "prompt_tokens": 4000 + step * 40,
            "completion_tokens": 60, "cached_tokens": 3900 + step * 40, "prefill_ms": 120.0,
            "generation_ms": 1500.0}),
        );
        step += 1;
    }
    while log.next() < EVENTS - 1 {
        log.push(
            "agent",
            json!({"kind": "message", "step": step, "text": "The whole suite passes."}),
        );
    }
    log.push(
        "environment",
        json!({"kind": "state", "state": "finished", "reason": "the model called finish"}),
    );
    let text = log.0.join("\n") + "\n";
    std::fs::write(dir.join("events.jsonl"), text).unwrap();
    let parsed = wright_protocol::read_log(&dir.join("events.jsonl")).unwrap();
    assert_eq!(parsed.events.len() as u64, EVENTS);
}

/// `wright serve` on the data home; the address a browser opens once.
async fn serve(data: &Path) -> (tokio::process::Child, String, String) {
    let mut child = tokio::process::Command::new(WRIGHT)
        .args([
            "serve",
            "--port",
            "0",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ])
        .env("XDG_DATA_HOME", data)
        .env("XDG_CACHE_HOME", data.join("cache"))
        .env("XDG_CONFIG_HOME", data.join("config"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut base, mut open) = (String::new(), String::new());
    while let Some(line) = lines.next_line().await.unwrap() {
        if let Some(rest) = line.strip_prefix("wright serve: listening on ") {
            base = rest.trim().to_string();
        }
        if let Some(rest) = line.trim().strip_prefix("in a browser, open once: ") {
            open = rest.to_string();
            break;
        }
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, base, open)
}

/// What the page downloaded and when it became interactive.
const LOAD: &str = r#"
const mark = performance.getEntriesByName('wright-interactive')[0];
if (!mark) return null;
const nav = performance.getEntriesByType('navigation')[0];
const assets = performance.getEntriesByType('resource').filter(r => r.name.includes('/ui/'));
const api = performance.getEntriesByType('resource').filter(r => r.name.includes('/api/'));
const sum = (list, key) => list.reduce((n, r) => n + (r[key] || 0), 0);
return {
  interactive_ms: mark.startTime,
  page_bytes: nav.transferSize, page_body: nav.encodedBodySize,
  asset_bytes: sum(assets, 'transferSize'), asset_body: sum(assets, 'encodedBodySize'), assets: assets.length,
  api_bytes: sum(api, 'transferSize'),
};
"#;

/// Starts recording frames, then opens the long conversation.
const OPEN_LONG: &str = r#"
window.__frames = {last: performance.now(), longest: 0, count: 0, loaf: 0, start: performance.now(), stop: false,
  messages: 0, delivered: 0};
const f = window.__frames;
// The socket's frames counted as they arrive: delivery apart from rendering.
if (!window.__counted) {
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', () => { const g = window.__frames; g.messages++; g.delivered = performance.now() - g.start; });
    }
  };
  window.__counted = true;
}
const tick = (now) => { const gap = now - f.last; if (gap > f.longest) f.longest = gap; f.last = now; f.count++; if (!f.stop) requestAnimationFrame(tick); };
requestAnimationFrame(tick);
try {
  new PerformanceObserver(list => { for (const e of list.getEntries()) if (e.duration > f.loaf) {
      f.loaf = e.duration;
      f.worst = {script_ms: (e.renderStart || e.startTime + e.duration) - e.startTime,
        layout_ms: e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0,
        scripts: (e.scripts || []).map(x => `${x.invoker} ${x.duration.toFixed(0)}ms (forced layout ${x.forcedStyleAndLayoutDuration.toFixed(0)}ms)`).join("; ")};
    } })
    .observe({type: 'long-animation-frame'});
} catch (e) { f.loaf = -1; }
location.hash = arguments[0];
"#;

const LONG_DONE: &str = r#"
const list = document.querySelector('#events');
const f = window.__frames;
if (!list || list.dataset.last !== String(arguments[0]) || list.dataset.idle !== '1') return null;
f.stop = true;
return {shown_ms: performance.now() - f.start, longest_frame_ms: f.longest, frames: f.count, loaf_ms: f.loaf,
  rows: list.children.length, messages: f.messages, delivered_ms: f.delivered, worst: f.worst || null};
"#;

async fn poll(browser: &browser::Browser, script: &str, args: Vec<Value>) -> Value {
    for _ in 0..1200 {
        let value = browser.client.execute(script, args.clone()).await.unwrap();
        if !value.is_null() {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the page never answered {script}");
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let data = tempfile::tempdir().unwrap();
    write_log(data.path());
    let (_server, base, open) = serve(data.path()).await;
    let Some(browser) = browser::launch("bench ui", browser::Viewport::Desktop).await else {
        return;
    };

    // First load, fresh profile: every byte over the wire.
    browser.goto(&open).await;
    let first = poll(&browser, LOAD, vec![]).await;
    println!("first load (fresh profile, the list page):");
    println!(
        "  page {} B + {} assets {} B over the wire (bodies {} B + {} B); its API calls {} B",
        first["page_bytes"],
        first["assets"],
        first["asset_bytes"],
        first["page_body"],
        first["asset_body"],
        first["api_bytes"]
    );
    let mut interactive = vec![first["interactive_ms"].as_f64().unwrap()];
    for _ in 0..6 {
        browser.goto(&format!("{base}/")).await;
        interactive.push(
            poll(&browser, LOAD, vec![]).await["interactive_ms"]
                .as_f64()
                .unwrap(),
        );
    }
    println!(
        "  time to interactive: first {:.0} ms, median of {} loads {:.0} ms, worst {:.0} ms",
        interactive[0],
        interactive.len(),
        median(interactive.clone()),
        interactive.iter().copied().fold(0.0, f64::max)
    );

    // The long conversation, opened from the list three times.
    println!("a conversation of {EVENTS} events, opened from the list:");
    let last = json!(EVENTS - 1);
    for round in 1..=3 {
        browser.goto(&format!("{base}/#/")).await;
        poll(&browser, LOAD, vec![]).await;
        browser
            .client
            .execute(OPEN_LONG, vec![json!(format!("#/c/{ID}"))])
            .await
            .unwrap();
        let done = poll(&browser, LONG_DONE, vec![last.clone()]).await;
        println!(
            "  round {round}: {} socket frames in {:.0} ms; all shown in {:.0} ms over {} frames, longest frame {:.1} ms, long animation frames (>50 ms): {}; {} rows",
            done["messages"],
            done["delivered_ms"].as_f64().unwrap(),
            done["shown_ms"].as_f64().unwrap(),
            done["frames"],
            done["longest_frame_ms"].as_f64().unwrap(),
            match done["loaf_ms"].as_f64().unwrap() {
                x if x < 0.0 => "not measured".to_string(),
                x if x > 0.0 => format!("longest {x:.0} ms"),
                _ => "none".to_string(),
            },
            done["rows"]
        );
        if !done["worst"].is_null() {
            println!("    the longest animation frame: {}", done["worst"]);
        }
    }
    browser.quit().await;
}
