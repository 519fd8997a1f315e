//! `cargo bench -p wright-cli --bench browser`: what the `browser` tool's first call costs
//! — Chromium started inside the sandbox of a running terminal shell (joined through the
//! launcher) and attached over its DevTools pipe, up to a first page read — measured five
//! times, each with a new shell and a new browser. Prints the median and the slowest.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_macros)]

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;
use wright_tools::BrowserTool;
use wright_tools::TerminalTool;
use wright_tools::Tool;
use wright_tools::Workspace;

const WRIGHT: &str = env!("CARGO_BIN_EXE_wright");

#[tokio::main]
async fn main() {
    let mut starts = Vec::new();
    for round in 0..5 {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(
            ws.path().join("index.html"),
            "<h1>Hi</h1><button>Go</button>",
        )
        .unwrap();
        let private = wright_sandbox::PrivateDir::create(
            &std::env::temp_dir(),
            &format!("bench-browser-{round}"),
        )
        .unwrap();
        let mut policy = wright_sandbox::confine::Policy::for_workspace(ws.path(), &private, None);
        policy.local_tcp = true;
        let sandbox = wright_sandbox::Sandbox::confined(WRIGHT.into(), &policy).unwrap();
        let env = wright_sandbox::confined_environment(std::env::vars(), private.root(), None);
        let scratch = wright_tools::Scratch::open(&private.out(), 1 << 30).unwrap();
        let terminal = Arc::new(TerminalTool::new(
            Workspace::new(ws.path()).unwrap(),
            env.clone(),
            sandbox,
            scratch,
        ));
        // The shell is warm, as it is once the agent has run a command.
        terminal.warm_up().await.unwrap();
        let browser = BrowserTool::new(
            terminal.clone(),
            env,
            ws.path().to_path_buf(),
            private.root().join("shots"),
        );
        let url = format!("file://{}/index.html", ws.path().display());
        let started = Instant::now();
        let read = browser.run(&json!({"action": "goto", "url": url})).await;
        let took = started.elapsed();
        match read {
            Ok(output) if output.text.contains("[1] button") => starts.push(took),
            other => panic!("the browser did not read the page: {other:?}"),
        }
        drop(browser);
        drop(terminal);
    }
    starts.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "browser start (in the sandbox, to the first page read): median {:.0} ms, slowest {:.0} ms ({} rounds)",
        ms(starts[starts.len() / 2]),
        ms(starts[starts.len() - 1]),
        starts.len()
    );
}
