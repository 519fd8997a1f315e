//! What the user types is checked before anything runs: every numeric flag of run, chat,
//! resume and fork against its configuration key's range (the error names the flag, the
//! value and the range; exit 2), a blank task or message, `--force` without
//! `--in-place`, and a negative number read as a value, not a flag.

use crate::common::stderr;
use crate::common::Harness;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// Each command refuses each bad value with one sentence, exit 2, and no model request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_range_flags_are_refused_by_every_command() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let url = server.url();
    let bad: &[(&[&str], &str)] = &[
        (
            &["--max-steps", "0"],
            "--max-steps 0 is out of range: it must be a whole number of at least 1",
        ),
        (
            &["--condense-at", "1.5"],
            "--condense-at 1.5 is out of range: it must be a number from 0.3 to 0.95",
        ),
        (
            &["--condense-at", "-1"],
            "--condense-at -1.0 is out of range: it must be a number from 0.3 to 0.95",
        ),
        (
            &["--temperature", "9"],
            "--temperature 9.0 is out of range: it must be a number from 0 to 2",
        ),
        (
            &["--context-window", "10"],
            "--context-window 10 is out of range: it must be a whole number of at least 256",
        ),
        (
            &["--idle-timeout", "-3"],
            "--idle-timeout -3 is out of range: it must be a whole number of at least 1",
        ),
    ];
    let commands: &[&[&str]] = &[
        &["run", "a task"],
        &["chat"],
        &["resume", "0000"],
        &["fork", "0000"],
    ];
    for command in commands {
        for (flags, said) in bad {
            let mut args: Vec<&str> = command.to_vec();
            args.extend_from_slice(&["--base-url", &url, "--model", "test-model"]);
            args.extend_from_slice(flags);
            let output = h.wright(&args, &[]).await;
            assert_eq!(
                output.status.code(),
                Some(2),
                "{args:?}: {}",
                stderr(&output)
            );
            assert_eq!(stderr(&output), format!("wright: {said}\n"), "{args:?}");
        }
    }
    // Checked before anything: no model request, not even the model list.
    assert!(
        server.requests().is_empty(),
        "{:?}",
        server.requests().len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blank_task_or_message_is_refused() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![reply().text("never")])
        .await
        .unwrap();
    let url = server.url();
    for task in ["", "   ", "\n\t"] {
        let output = h.run(&url, task, &["--sandbox", "none"]).await;
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).starts_with("wright: the task is empty: say what the agent should do"),
            "{}",
            stderr(&output)
        );
    }
    for command in [["resume", "0000", " "], ["fork", "0000", ""]] {
        let output = h.wright(&command, &[]).await;
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).starts_with("wright: the message is empty"),
            "{}",
            stderr(&output)
        );
    }
    assert!(server.requests().is_empty());
    assert!(!h.data.path().join("wright/conversations").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_needs_in_place() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![]).await.unwrap();
    for command in [&["run", "a task", "--force"][..], &["chat", "--force"][..]] {
        let mut args = command.to_vec();
        let url = server.url();
        args.extend_from_slice(&["--base-url", &url]);
        let output = h.wright(&args, &[]).await;
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("--in-place") && stderr(&output).contains("--force"),
            "{}",
            stderr(&output)
        );
    }
    assert!(server.requests().is_empty());
}
