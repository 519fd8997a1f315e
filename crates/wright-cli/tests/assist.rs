//! The one setting for the help a model gets (`--assist`, `--assist-piece`, `[assist]`):
//! the level and a piece apart, from a flag or the user's file, the old flags and keys as
//! aliases with a warning, bad values refused with the choices, and `auto` turning the
//! first look on during a run once the model shows it needs it (unreadable calls, a
//! loop), with its `assist` event and one line for the user.

use crate::common::first_user_message;
use crate::common::stderr;
use crate::common::Harness;
use crate::first_look::failing_python_repo;
use crate::first_look::server;
use crate::first_look::FIXED;
use serde_json::json;
use wright_protocol::EventBody;
use wright_protocol::Need;
use wright_protocol::Source;
use wright_testkit::git;
use wright_testkit::reply;

/// `wright run` on the failing repository as `model`, with `extra` flags.
async fn run(h: &Harness, url: &str, model: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", "--base-url", url, "--model", model];
    args.extend_from_slice(extra);
    args.push("the test fails, fix it");
    h.wright(&args, &[]).await
}

/// Whether the first request began with the tests run.
fn looked_first(server: &wright_testkit::ScriptedServer) -> bool {
    first_user_message(&server.chat_requests()[0].json()).contains("wright ran the tests")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_flag_or_one_key_sets_the_help_and_a_piece_may_differ() {
    for (model, extra, config, expected) in [
        // auto: by the name; a name without a size is not known to be small.
        ("test-model", &[][..], None, false),
        ("qwen2.5-coder-1.5b", &[][..], None, true),
        // on and off hold whatever the model.
        ("test-model", &["--assist", "on"][..], None, true),
        ("qwen2.5-coder-1.5b", &["--assist", "off"][..], None, false),
        // A piece apart wins over the level.
        (
            "qwen2.5-coder-1.5b",
            &["--assist", "on", "--assist-piece", "first-look=off"][..],
            None,
            false,
        ),
        (
            "test-model",
            &["--assist", "off", "--assist-piece", "first-look=on"][..],
            None,
            true,
        ),
        // The same from the user's file; a flag wins over it.
        (
            "test-model",
            &[][..],
            Some("[assist]\nlevel = \"on\"\n"),
            true,
        ),
        (
            "test-model",
            &["--assist-piece", "first-look=off"][..],
            Some("[assist]\nlevel = \"on\"\n"),
            false,
        ),
    ] {
        let h = Harness::new();
        failing_python_repo(&h);
        if let Some(text) = config {
            let path = h.data.path().join("config/wright/config.toml");
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let server = server(vec![
            reply().call("terminal", json!({"command": "true"})),
            reply().call("finish", json!({"message": "looked"})),
        ])
        .await;
        // The model "finishes" with the tests failing, and is asked nothing apart: not
        // what is looked at here.
        let extra = [
            extra,
            &["--assist-piece", "retest=off,candidates=off,reading=off"][..],
        ]
        .concat();
        let output = run(&h, &server.url(), model, &extra).await;
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(
            looked_first(&server),
            expected,
            "{model} {extra:?} {config:?}"
        );
        assert!(
            !stderr(&output).contains("deprecated"),
            "{}",
            stderr(&output)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_old_flags_and_keys_still_work_and_name_their_replacement() {
    for (extra, config, expected, warning) in [
        (
            &["--first-look", "on"][..],
            None,
            true,
            "warning: --first-look is deprecated: use --assist-piece first-look=on",
        ),
        (
            &[][..],
            Some("[run]\nfirst_look = \"on\"\n"),
            true,
            "run.first_look is deprecated: use first_look = \"on\" in [assist]",
        ),
        (
            &["--map", "off"][..],
            None,
            false,
            "warning: --map is deprecated: use --assist-piece map=off",
        ),
    ] {
        let h = Harness::new();
        failing_python_repo(&h);
        if let Some(text) = config {
            let path = h.data.path().join("config/wright/config.toml");
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let server = server(vec![
            reply().call("terminal", json!({"command": "true"})),
            reply().call("finish", json!({"message": "looked"})),
        ])
        .await;
        let extra = [extra, &["--assist-piece", "retest=off,candidates=off"][..]].concat();
        let output = run(&h, &server.url(), "test-model", &extra).await;
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(0), "{said}");
        assert_eq!(looked_first(&server), expected, "{extra:?} {config:?}");
        assert_eq!(said.matches(warning).count(), 1, "{said}");
        if extra.contains(&"--map") {
            let first = first_user_message(&server.chat_requests()[0].json());
            assert!(!first.contains("wright ran the tests"), "{first}");
            assert!(
                !first.contains("# Workspace map"),
                "the map is off: {first}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_level_or_piece_is_refused_with_the_choices() {
    let h = Harness::new();
    for (args, named) in [
        (
            &["--assist", "sometimes"][..],
            &["--assist", "auto, on, off"][..],
        ),
        (
            &["--assist-piece", "tests=on"][..],
            &["--assist-piece", "'tests' is not a piece", "first-look"][..],
        ),
        (
            &["--assist-piece", "retest=maybe"][..],
            &["retest='maybe'", "auto, on, off"][..],
        ),
    ] {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.push("fix it");
        let output = h.wright(&all, &[]).await;
        assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));
        let said = stderr(&output);
        assert!(named.iter().all(|word| said.contains(word)), "{said}");
    }
}

/// The events of wright's own first look: (step, the decision that turned it on).
fn late_looks(
    events: &[wright_protocol::Event],
) -> (Vec<u32>, Vec<wright_protocol::AssistDecision>) {
    let steps = events
        .iter()
        .filter(|e| e.source == Source::Environment)
        .filter_map(|e| match &e.body {
            EventBody::Action { step, call_id, .. } if call_id == "first-look" => Some(*step),
            _ => None,
        })
        .collect();
    let decisions = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Assist(decision) => Some(decision.clone()),
            _ => None,
        })
        .collect();
    (steps, decisions)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_that_cannot_be_read_turn_the_tests_on_during_the_run() {
    let h = Harness::new();
    failing_python_repo(&h);
    let call = |name: &str, arguments: serde_json::Value| {
        reply().text(&format!(
            "<tool_call>{}</tool_call>",
            json!({"name": name, "arguments": arguments})
        ))
    };
    let server = server(vec![
        // Two calls that cannot be read: the model needs help.
        reply().text("<tool_call>{\"name\": \"terminal\", \"arguments\": {\"command\": \"say \"hi\", \"path\": \"x\"}}</tool_call>"),
        reply().text("<tool_call>{\"name\": \"terminal\", \"arguments\": {\"command\": \"echo hel"),
        // After this call ran, wright runs the tests.
        call("terminal", json!({"command": "ls"})),
        call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": "r[:-1]", "new_str": "r"}),
        ),
        call("finish", json!({"message": "fixed"})),
    ])
    .await;
    let output = run(
        &h,
        &server.url(),
        "test-model",
        &["--tool-calling", "text", "--assist-piece", "candidates=off"],
    )
    .await;
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let requests = server.chat_requests();
    assert!(
        !looked_first(&server),
        "not at the start: the name says nothing"
    );

    let events = h.events();
    let (steps, decisions) = late_looks(&events);
    assert_eq!(steps, vec![3], "once, after the step whose call ran");
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0].need, Need::UnreadableCalls { count: 2 });
    assert_eq!(decisions[0].pieces, ["first_look", "last_change", "retest"]);
    // One line for the user, then the tests as wright's own action.
    assert!(
        said.contains("→ the model needs help (2 calls could not be read): wright turns on first look, last change, retest"),
        "{said}"
    );
    assert!(
        said.contains("→ wright runs the tests now: terminal"),
        "{said}"
    );
    // The model sees them with that step's results, and the check follows its edit.
    let fourth = requests[3].json().to_string();
    assert!(
        fourth.contains("After that step, wright ran the tests with `python3 -m unittest`; it exited with code 1"),
        "{fourth}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.body, EventBody::Check(check) if check.exit_code == Some(0))),
        "the check after the edit ran and passed"
    );
    // Each request extends the one before: the decision rewrote nothing sent.
    let id = h.conversation_id();
    assert_eq!(
        git(h.repo(), &["show", &format!("wright/{id}:export.py")]),
        FIXED
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_turns_the_tests_on_and_auto_off_or_a_small_name_does_not_wait() {
    let ls = json!({"command": "ls"});
    let script = || {
        vec![
            // The same action with the same result three times: told it goes in circles.
            reply().call("terminal", ls.clone()),
            reply().call("terminal", ls.clone()),
            reply().call("terminal", ls.clone()),
            reply().call("terminal", json!({"command": "pwd"})),
            reply().call(
                "file_editor",
                json!({"command": "str_replace", "path": "export.py", "old_str": "r[:-1]", "new_str": "r"}),
            ),
            reply().call("finish", json!({"message": "fixed"})),
        ]
    };
    for (extra, expected_steps) in [
        (&[][..], vec![4]),
        // Off: never, whatever the model does.
        (&["--assist-piece", "first-look=off"][..], vec![]),
        (&["--assist", "off"][..], vec![]),
    ] {
        let h = Harness::new();
        failing_python_repo(&h);
        let server = server(script()).await;
        let extra = [extra, &["--assist-piece", "candidates=off"][..]].concat();
        let output = run(&h, &server.url(), "test-model", &extra).await;
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let events = h.events();
        let nudged = events.iter().any(|e| {
            matches!(&e.body, EventBody::Message { text, .. }
                if e.source == Source::Environment && text.starts_with("You are going in circles"))
        });
        assert!(nudged, "{extra:?}: the script loops");
        let (steps, decisions) = late_looks(&events);
        assert_eq!(steps, expected_steps, "{extra:?}");
        if !expected_steps.is_empty() {
            assert!(
                matches!(&decisions[0].need, Need::Loop { pattern } if pattern.contains("ls")),
                "{decisions:?}"
            );
            assert!(
                stderr(&output).contains("the model needs help (it went in circles)"),
                "{}",
                stderr(&output)
            );
        } else {
            assert!(decisions.is_empty(), "{decisions:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_the_probe_found_writing_its_calls_as_text_gets_the_tests_first() {
    let call = |name: &str, arguments: serde_json::Value| {
        reply().text(&format!(
            "<tool_call>{}</tool_call>",
            json!({"name": name, "arguments": arguments})
        ))
    };
    for (extra, expected) in [
        // Text mode found by the probe: the model needs help.
        (&[][..], true),
        // Text mode asked for: the user's choice, not the model's showing.
        (&["--tool-calling", "text"][..], false),
    ] {
        let h = Harness::new();
        failing_python_repo(&h);
        let server = wright_testkit::ScriptedServer::start_text_only(vec![
            call("terminal", json!({"command": "true"})),
            call("finish", json!({"message": "looked"})),
        ])
        .await
        .unwrap();
        let extra = [
            extra,
            &["--assist-piece", "retest=off,candidates=off,reading=off"][..],
        ]
        .concat();
        let output = run(&h, &server.url(), "test-model", &extra).await;
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(looked_first(&server), expected, "{extra:?}");
    }
}
