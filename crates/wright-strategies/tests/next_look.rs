//! A look made again gets what comes next, in process (see `harness`): a view of lines
//! already viewed is told the lines not viewed yet; a command run again is told the file
//! the task names that was not viewed; off, nothing is added.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::reply;
use harness::Harness;
use serde_json::json;
use wright_strategies::Help;
use wright_testkit::Reply;

fn view(path: &str, from: u64, to: u64) -> Reply {
    reply().call(
        "file_editor",
        json!({"command": "view", "path": path, "view_range": [from, to]}),
    )
}

fn ls() -> Reply {
    reply().call("terminal", json!({"command": "ls"}))
}

fn finish() -> Reply {
    reply().call("finish", json!({"message": "done"}))
}

fn ten_lines() -> String {
    (1..=10).map(|n| format!("x{n} = {n}\n")).collect()
}

#[tokio::test]
async fn a_view_made_again_is_told_the_lines_not_viewed_and_a_command_the_file_the_task_names() {
    let script = vec![view("a.py", 1, 4), view("a.py", 1, 4), ls(), ls(), finish()];
    let mut h = Harness::run_mode(script).await;
    h.write("a.py", &ten_lines());
    h.write("b.py", "y = 1\n");
    h.conversation.next_look(true);
    h.run("set y to 2 in b.py").await;

    let views = h.results_of("file_editor");
    assert!(
        !views[0].contains("You made this same call before"),
        "{views:?}"
    );
    assert!(
        views[1].contains("[You made this same call before in this run, and it shows the same. You have not viewed lines 5-10 of a.py yet: view those (view_range [5, 10]), or make the change.]"),
        "{views:?}"
    );
    let commands = h.results_of("terminal");
    assert!(!commands[0].contains("same call"), "{commands:?}");
    assert!(
        commands[1].contains(
            "The task names b.py, which you have not viewed: view it, then make the change."
        ),
        "{commands:?}"
    );
}

#[tokio::test]
async fn off_a_view_made_again_reads_as_before() {
    let script = vec![view("a.py", 1, 4), view("a.py", 1, 4), finish()];
    let mut h = Harness::run_mode(script).await;
    h.write("a.py", &ten_lines());
    h.run("set y to 2 in b.py").await;
    let views = h.results_of("file_editor");
    assert!(views.iter().all(|v| !v.contains("same call")), "{views:?}");
}
