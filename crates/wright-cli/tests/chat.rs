//! `wright chat`: several turns in one conversation, with the slash commands, driven
//! through stdin as a person would type them.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::terminal::Terminal;
use crate::common::Harness;
use serde_json::json;
use std::process::Stdio;
use tokio::io::AsyncWriteExt;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_and_slash_commands() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call(
            "file_editor",
            json!({"command": "create", "path": "notes.txt", "file_text": "hello\n"}),
        ),
        reply().text("Created notes.txt."),
        reply().text("2 + 2 = 4."),
    ])
    .await
    .unwrap();
    let output = h
        .chat_with_input(
            &server.url(),
            b"write hello in notes.txt\n/diff\n/undo\n/cost\nwhat is 2+2?\n/resume nope\n/bogus\n/exit\n",
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    // /diff shows new files whole.
    assert!(
        out.contains("+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello"),
        "{out}"
    );
    assert!(out.contains("Undid the creation of notes.txt"), "{out}");
    assert!(out.contains("2 steps · "), "{out}");
    // A /resume that cannot be done is said, and the chat goes on.
    assert!(out.contains("no conversation 'nope'"), "{out}");
    assert!(out.contains("unknown command /bogus"), "{out}");
    let err = stderr(&output);
    assert!(
        err.contains("Created notes.txt.") && err.contains("2 + 2 = 4."),
        "{err}"
    );
    // One conversation: the second question sees the first turn and the undo.
    let last = server.chat_requests().last().unwrap().json();
    let messages = last["messages"].to_string();
    assert!(
        messages.contains("write hello in notes.txt")
            && messages.contains("I reverted your last edit of notes.txt")
    );
    assert!(!h.repo().join("notes.txt").exists());
}

/// In a real terminal (tmux), Ctrl-C stops the step in flight and the chat goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_in_a_terminal_stops_the_step_not_the_chat() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "sleep 60"})),
        reply().text("Stopped, as you asked."),
    ])
    .await
    .unwrap();
    // Under bash whatever the user's login shell: dash, not waiting cooperatively, would
    // die of the Ctrl-C meant for wright once wright exits.
    let command = h.terminal_command(
        &format!("chat --base-url {} --model test-model", server.url()),
        "CHAT",
        30,
    );
    let Some(terminal) = Terminal::start("chat-ctrl-c", &command) else {
        return;
    };
    terminal.wait_for("wright>");
    terminal.send(&["wait a minute", "Enter"]);
    terminal.wait_for("→ terminal sleep 60");
    std::thread::sleep(std::time::Duration::from_millis(500));
    terminal.send(&["C-c"]);
    terminal.wait_for("[stopped: interrupted by the user]");
    terminal.send(&["/exit", "Enter"]);
    let text = terminal.wait_for("CHAT-EXIT-");
    assert!(text.contains("CHAT-EXIT-0"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profile_switches_server_and_model_mid_chat() {
    let h = Harness::new();
    let one = ScriptedServer::start(vec![reply().text("From one.")])
        .await
        .unwrap();
    let two = ScriptedServer::start_with_models(
        vec![reply().text("From two.")],
        vec!["other-model".into()],
    )
    .await
    .unwrap();
    h.user_config(&format!(
        "profile = \"one\"\n[profiles.one]\nbase_url = \"{}\"\nmodel = \"test-model\"\n[profiles.two]\nbase_url = \"{}\"\nmodel = \"other-model\"\n",
        one.url(),
        two.url()
    ));
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args(["chat"])
        .current_dir(h.repo())
        .env("XDG_DATA_HOME", h.data.path())
        .env("XDG_CACHE_HOME", h.data.path().join("cache"))
        .env("XDG_CONFIG_HOME", h.data.path().join("config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"hello\n/profile nope\n/profile two\nand you?\n/exit\n")
        .await
        .unwrap();
    drop(stdin);
    let output = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(
        out.contains("there is no profile 'nope'; defined: one, two"),
        "{out}"
    );
    assert!(
        out.contains("now using profile two: other-model on "),
        "{out}"
    );
    assert_eq!(one.chat_requests().len(), 1);
    let second = two.chat_requests();
    assert_eq!(second.len(), 1);
    // The same conversation goes on with the other model.
    assert_eq!(second[0].json()["model"], "other-model");
    assert!(second[0].json()["messages"]
        .to_string()
        .contains("From one."));
    // The log says so: `wright ls` and `wright show` name the model it is on now.
    let switches: Vec<wright_protocol::ModelSwitch> = h
        .events()
        .into_iter()
        .filter_map(|e| match e.body {
            wright_protocol::EventBody::ModelSwitch(switch) => Some(switch),
            _ => None,
        })
        .collect();
    assert_eq!(switches.len(), 1, "{switches:?}");
    assert_eq!(
        (
            switches[0].reason,
            switches[0].from.model.as_str(),
            switches[0].to.model.as_str(),
            switches[0].to.profile.as_deref()
        ),
        (
            wright_protocol::SwitchReason::Chosen,
            "test-model",
            "other-model",
            Some("two")
        )
    );
}

/// `/cost` after `/resume` counts what the conversation used before: its steps and its
/// model time, as the log has them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cost_after_resume_counts_the_earlier_steps() {
    let h = Harness::new();
    // A plain directory: the run and the chat work in the same place.
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo one"})),
        reply().call("terminal", json!({"command": "echo two"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let url = server.url();
    let run = h.run(&url, "echo twice", &[]).await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let id = h.conversation_id();
    let (mut prompt, mut cached, mut generated, mut model_ms) = (0, 0, 0, 0.0);
    for event in h.events() {
        if let wright_protocol::EventBody::Usage(usage) = event.body {
            prompt += usage.prompt_tokens;
            cached += usage.cached_tokens.unwrap_or(0);
            generated += usage.completion_tokens;
            model_ms += usage.prefill_ms.unwrap() + usage.generation_ms.unwrap();
        }
    }
    let output = h
        .chat_with_input(&url, format!("/resume {id}\n/cost\n/exit\n").as_bytes())
        .await;
    let out = stdout(&output);
    assert!(out.contains(&format!("back in conversation {id}")), "{out}");
    assert!(
        out.contains(&format!(
            "3 steps · {prompt} prompt tokens ({cached} cached) · {generated} generated · model time {:.1} s",
            model_ms / 1000.0
        )),
        "{out}"
    );
}

/// `/resume ID` of a conversation that worked in its own clone of this repository (the
/// usual case): the chat goes on there, with that conversation's files and history.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_goes_to_another_clone_of_this_repository() {
    let h = Harness::new();
    std::fs::write(h.repo().join("a.txt"), "a\n").unwrap();
    wright_testkit::git(h.repo(), &["init", "-q"]);
    wright_testkit::git(h.repo(), &["add", "-A"]);
    wright_testkit::git(h.repo(), &["commit", "-qm", "a"]);
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo from-the-run > b.txt"})),
        reply().call("finish", json!({"message": "wrote b"})),
        // In the chat, after /resume: the run's file is there.
        reply().call("terminal", json!({"command": "cat b.txt"})),
        reply().text("It says from-the-run."),
    ])
    .await
    .unwrap();
    let url = server.url();
    let run = h.run(&url, "write b", &[]).await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let id = h.conversation_id();
    let output = h
        .chat_with_input(
            &url,
            format!("/resume {id}\nwhat does b.txt say?\n/exit\n").as_bytes(),
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.contains(&format!("back in conversation {id}")), "{out}");
    assert!(!out.contains("use `wright resume"), "{out}");
    // The question went to that conversation, which read its own clone's file.
    let last = server.chat_requests().last().unwrap().json();
    let messages = last["messages"].to_string();
    assert!(
        messages.contains("write b") && messages.contains("what does b.txt say?"),
        "{messages}"
    );
    assert!(messages.contains("from-the-run"), "{messages}");
    // A chat's turn ends on words, in a resumed run's conversation too: the answer is not
    // sent back to the model as a run's would be.
    assert_eq!(server.chat_requests().len(), 4, "{messages}");
    assert!(!messages.contains(wright_strategies::NUDGE), "{messages}");
}

/// After `/undo` takes back the change the review was about, the end of the chat does
/// not show that review any more; without the undo it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_takes_the_review_back_too() {
    for undo in [false, true] {
        let h = Harness::new();
        failing_python_repo(h.repo());
        let server = ScriptedServer::start(vec![
            reply().call(
                "file_editor",
                json!({"command": "create", "path": "test_more.py", "file_text": "import unittest\n"}),
            ),
            reply().call("finish", json!({"message": "added a test file"})),
            reply().call("finish", json!({"message": "the test file is wanted"})),
        ])
        .await
        .unwrap();
        let input: &[u8] = if undo {
            b"add test_more.py\n/undo\n/exit\n"
        } else {
            b"add test_more.py\n/exit\n"
        };
        let output = h.chat_with_input(&server.url(), input).await;
        assert!(output.status.success(), "{}", stderr(&output));
        let out = stdout(&output);
        assert!(out.contains("the test file is wanted"), "{out}");
        assert_eq!(
            out.contains("look before you take this: the agent changed tests"),
            !undo,
            "undo {undo}: {out}"
        );
    }
}
