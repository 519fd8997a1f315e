//! `cargo bench -p wright-tools --bench search`: four `grep` calls over a tree of 8,000
//! files, one after the other and at the same time (as the loop runs the read-only calls
//! of one reply), on the runtime wright uses; and `glob` over the same tree.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_macros)]

use serde_json::json;
use std::time::Duration;
use std::time::Instant;
use wright_tools::GlobTool;
use wright_tools::GrepTool;
use wright_tools::Tool;
use wright_tools::Workspace;

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let line = "fn parse(input: &str) -> Result<Value, Error> { todo!() } // lorem ipsum\n";
    for part in 0..4 {
        for n in 0..2000 {
            let sub = dir.path().join(format!("part{part}/d{}", n / 100));
            std::fs::create_dir_all(&sub).unwrap();
            std::fs::write(sub.join(format!("f{n}.rs")), line.repeat(50)).unwrap();
        }
    }
    let ws = Workspace::new(dir.path()).unwrap();
    let grep = GrepTool::new(ws.clone());
    let calls: Vec<_> = (0..4)
        .map(|part| json!({"pattern": "Result<Value", "path": format!("part{part}")}))
        .collect();
    // Warm the page cache.
    for call in &calls {
        grep.run(call).await.unwrap();
    }
    let (mut one_by_one, mut together) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        let started = Instant::now();
        for call in &calls {
            grep.run(call).await.unwrap();
        }
        one_by_one.push(started.elapsed());
        let started = Instant::now();
        let (a, b, c, d) = tokio::join!(
            grep.run(&calls[0]),
            grep.run(&calls[1]),
            grep.run(&calls[2]),
            grep.run(&calls[3])
        );
        for result in [a, b, c, d] {
            result.unwrap();
        }
        together.push(started.elapsed());
    }
    let glob = GlobTool::new(ws);
    let mut globs = Vec::new();
    for _ in 0..7 {
        let started = Instant::now();
        glob.run(&json!({"pattern": "**/f1*.rs"})).await.unwrap();
        globs.push(started.elapsed());
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (seq, par) = (median(one_by_one), median(together));
    println!("wright search benchmark (8,000 files of 3.7 KB, 2 runtime threads, 7 rounds)");
    println!(
        "  four grep calls over 2,000 files each: one after the other {:.1} ms, at the same time {:.1} ms (median; {:.0} % of the time saved)",
        ms(seq),
        ms(par),
        100.0 * (1.0 - par.as_secs_f64() / seq.as_secs_f64())
    );
    println!(
        "  glob over 8,000 files: {:.1} ms (median)",
        ms(median(globs))
    );
}
