//! Failures read for the model and nudges that name the next step: a failing command's
//! output starts with where it failed in the workspace (the line quoted), the lines naming
//! workspace files are marked, a long one shows its end first; a loop over such a failure
//! is met with the file and line, quoted, as the next step.

use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

const SOURCE: &str =
    "def total(rows):\n    s = 0\n    for r in rows:\n        s += r['amount']\n    return s\n";

/// A workspace whose "test" prints a traceback through one of its own files and fails
/// (no interpreter needed: the traceback is printed as it is).
fn failing_project(h: &Harness, noise_lines: usize) {
    std::fs::create_dir_all(h.repo().join("pkg")).unwrap();
    std::fs::write(h.repo().join("pkg/report.py"), SOURCE).unwrap();
    let trace = "Traceback (most recent call last):\n  File \"/usr/lib/python3/unittest/case.py\", line 58, in testPartExecutor\n  File \"pkg/report.py\", line 4, in total\n    s += r['amount']\nKeyError: 'amount'\n";
    let noise: String = (0..noise_lines)
        .map(|n| format!("collecting case {n}\n"))
        .collect();
    std::fs::write(h.repo().join("out.txt"), format!("{noise}{trace}")).unwrap();
}

fn run_test() -> Reply {
    reply().call("terminal", json!({"command": "cat out.txt; false"}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_test_is_shown_with_its_source_line_first() {
    let h = Harness::new();
    failing_project(&h, 3000);
    // The first finish right after the failure is asked about once (see outcomes.rs).
    let server = ScriptedServer::start(vec![
        run_test(),
        reply().call("finish", json!({"message": "read it"})),
        reply().call("finish", json!({"message": "read it"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "the totals fail", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let seen = observations(&h.events());
    let text = seen[0]["output"].as_str().unwrap();
    assert!(
        text.starts_with("[It failed at pkg/report.py:4 (in the workspace):\n>4 |         s += r['amount']]\n[The end of the output first:]\n"),
        "{text}"
    );
    assert!(
        text.contains(">>   File \"pkg/report.py\", line 4, in total"),
        "{text}"
    );
    // Not the interpreter's own frame: it is not in the workspace.
    assert!(!text.contains(">>   File \"/usr/lib"), "{text}");
    // The end (the error) comes before the beginning (the noise).
    let error = text.find("KeyError: 'amount'").unwrap();
    let beginning = text.find("collecting case 0\n").unwrap();
    assert!(error < beginning, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_over_a_failure_is_told_the_file_and_line_to_open() {
    let h = Harness::new();
    failing_project(&h, 0);
    let server = ScriptedServer::start(vec![
        run_test(),
        run_test(),
        run_test(),
        reply().call(
            "file_editor",
            json!({"command": "view", "path": "pkg/report.py"}),
        ),
        reply().call("finish", json!({"message": "looked"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "the totals fail", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let nudge = server.chat_requests()[3].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find_map(|m| {
            m["content"]
                .as_str()
                .filter(|c| c.contains("going in circles"))
                .map(str::to_string)
        })
        .expect("no nudge in the fourth request");
    assert!(
        nudge.contains(
            "The last failure points at pkg/report.py line 4:\n 2 |     s = 0\n 3 |     for r in rows:\n>4 |         s += r['amount']\n 5 |     return s\nNext: view pkg/report.py around line 4"
        ),
        "{nudge}"
    );
}

/// A test's failing assertion calls the code under test: the output says where that is
/// defined, and a loop's nudge sends the model there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_code_a_failing_test_calls_is_named_where_it_is_defined() {
    let h = Harness::new();
    wright_testkit::failing_python_repo(h.repo());
    let test = json!({"command": "python3 -m unittest"});
    let server = ScriptedServer::start(vec![
        reply().call("terminal", test.clone()),
        reply().call("terminal", test.clone()),
        reply().call("terminal", test.clone()),
        reply().call("finish", json!({"message": "gave up"})),
    ])
    .await
    .unwrap();
    let _ = h.run(&server.url(), "fix the test", &[]).await;
    let seen = observations(&h.events());
    let first = seen[0]["output"].as_str().unwrap();
    assert!(
        first.contains("[export_csv is defined at export.py:8: def export_csv(rows):]"),
        "{first}"
    );
    // The code under test is short: it is shown whole, where the call is defined marked.
    assert!(
        first.contains("\n[export_csv in export.py, whole:\n 1 | \"\"\"CSV export.\"\"\"\n")
            && first.contains("\n 5 |     return \",\".join(str(v) for v in row[:-1])\n")
            && first.contains("\n>8 | def export_csv(rows):\n"),
        "{first}"
    );
    let nudged = server
        .chat_requests()
        .iter()
        .map(|r| r.json()["messages"].to_string())
        .find(|m| m.contains("It calls code defined in export.py at line 8"))
        .is_some();
    assert!(nudged, "no request carried the nudge to export.py");
}
