//! `wright acp` driven as an editor drives it: a scripted client speaking JSON-RPC lines
//! to the real binary's stdin and stdout (written here by hand, not with the protocol
//! crate, so the wire is checked as an editor reads it), against the scripted model
//! server, real sandboxes, clones and branches. A session fixes a failing test — the
//! model's words streamed, each tool call reported and its output, the edit with its
//! diff, the stop reason — then goes on with a second prompt, and is loaded again from
//! its log; a prompt cancelled mid-run stops after its step and answers `cancelled`; bad
//! input is answered with JSON-RPC errors and the process goes on serving; closing the
//! connection, or SIGTERM, stops a run after its step, its changes handed over.

mod editor;
mod permission;
mod review;
mod stops;

use crate::common::Harness;
use editor::Answer;
use editor::Editor;
use pretty_assertions::assert_eq;
use serde_json::json;
use serde_json::Value;
use std::time::Duration;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

/// Waits until the model was asked for its second step (and so is being waited on).
async fn asked_twice(server: &ScriptedServer) {
    for _ in 0..600 {
        if server.chat_requests().len() == 2 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the model was not asked a second time");
}

fn fix_script() -> Vec<Reply> {
    vec![
        reply()
            .text("Je lance les tests pour voir l'échec.")
            .call("terminal", json!({"command": "python3 -m unittest 2>&1 | tail -n 20"})),
        reply().text("row_to_csv drops the last column.").call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
        ),
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call(
            "finish",
            json!({"message": "row_to_csv dropped the last value of each row; it now joins the whole row."}),
        ),
        // The second prompt.
        reply()
            .text("Je relance les tests.")
            .call("terminal", json!({"command": "python3 -m unittest 2>&1 | tail -n 3"})),
        reply().call("finish", json!({"message": "They still pass."})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_session_fixes_a_failing_test_goes_on_and_loads_again() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(fix_script()).await.unwrap();
    let mut editor = Editor::start(&h, &server.url());

    let init = editor.initialize().await;
    assert_eq!(init["protocolVersion"], 1, "{init}");
    assert_eq!(init["agentCapabilities"]["loadSession"], true, "{init}");
    assert_eq!(init["agentInfo"]["name"], "wright", "{init}");
    let session = editor.new_session(h.repo()).await;

    let first = editor
        .prompt(&session, "Le test test_export_csv échoue, corrige-le.")
        .await;
    assert_eq!(
        first.response["result"]["stopReason"], "end_turn",
        "{}",
        first.response
    );
    // Every update is the session's.
    assert!(first
        .updates
        .iter()
        .all(|u| u["params"]["sessionId"] == session));
    // The model's words, streamed (in pieces, as they came, before its first call), and
    // its closing summary; then where the changes are.
    let pieces = first
        .updates
        .iter()
        .map(|u| &u["params"]["update"]["sessionUpdate"])
        .take_while(|kind| *kind != "tool_call")
        .filter(|kind| *kind == "agent_message_chunk")
        .count();
    assert!(
        pieces > 2,
        "the words came in {pieces} piece(s), not streamed"
    );
    let said = first.text("agent_message_chunk");
    assert!(
        said.starts_with("Je lance les tests pour voir l'échec."),
        "{said}"
    );
    assert!(said.contains("row_to_csv drops the last column."), "{said}");
    assert!(said.contains("it now joins the whole row."), "{said}");
    assert!(
        said.contains(&format!("on branch wright/{session}"))
            && said.contains(&format!("`wright apply {session}`")),
        "{said}"
    );
    // Each call as it started (before it ran), then its end with its output.
    let calls = first.tool_calls();
    let started: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|c| {
            (
                c["title"].as_str().unwrap(),
                // `other` is the default, left out.
                c["kind"].as_str().unwrap_or("other"),
                c["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        started,
        vec![
            (
                "python3 -m unittest 2>&1 | tail -n 20",
                "execute",
                "in_progress"
            ),
            ("Edit export.py", "edit", "in_progress"),
            ("python3 -m unittest", "execute", "in_progress"),
            ("Finish", "other", "in_progress"),
        ]
    );
    let failing = first.ended(&calls[0]["toolCallId"]);
    assert_eq!(failing["status"], "completed", "{failing}");
    let output = failing["content"][0]["content"]["text"].as_str().unwrap();
    assert!(
        output.starts_with("```\n") && output.contains("FAIL: test_export_csv"),
        "{output}"
    );
    assert_eq!(failing["rawOutput"]["exit_code"], 0, "{failing}");
    // The edit: where, and its diff — the whole file before and after.
    let edit = calls[1];
    let path = edit["locations"][0]["path"].as_str().unwrap();
    assert!(path.ends_with("/export.py"), "{edit}");
    assert!(
        !path.starts_with(h.repo().to_str().unwrap()),
        "the edit was made in the agent's clone, not the checkout: {path}"
    );
    let edited = first.ended(&edit["toolCallId"]);
    let diff = &edited["content"][0];
    assert_eq!(diff["type"], "diff", "{edited}");
    assert_eq!(diff["path"], path);
    let (old, new) = (
        diff["oldText"].as_str().unwrap(),
        diff["newText"].as_str().unwrap(),
    );
    assert!(old.contains(BUG) && !old.contains(FIX), "{old}");
    assert_eq!(new, old.replace(BUG, FIX));
    // A call's update never comes before the call.
    let position = |kind: &str, id: &Value| {
        first
            .updates
            .iter()
            .position(|u| {
                u["params"]["update"]["sessionUpdate"] == kind
                    && u["params"]["update"]["toolCallId"] == *id
            })
            .unwrap()
    };
    for call in &calls {
        let id = &call["toolCallId"];
        assert!(position("tool_call", id) < position("tool_call_update", id));
    }
    // The fix is on the session's branch; the checkout is untouched.
    let on_branch = git(h.repo(), &["show", &format!("wright/{session}:export.py")]);
    assert!(
        on_branch.contains(FIX) && !on_branch.contains(BUG),
        "{on_branch}"
    );
    let checkout = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(checkout.contains(BUG));

    // A second prompt goes on with the same conversation (as `wright resume ID MSG`).
    let second = editor.prompt(&session, "Relance les tests.").await;
    assert_eq!(
        second.response["result"]["stopReason"], "end_turn",
        "{}",
        second.response
    );
    let said = second.text("agent_message_chunk");
    assert!(
        said.starts_with("Je relance les tests.") && said.contains("They still pass."),
        "{said}"
    );
    assert_eq!(second.tool_calls().len(), 2, "{:#?}", second.updates);
    assert_eq!(server.remaining(), 0);
    assert_eq!(
        h.conversation_id(),
        session,
        "one conversation, the session's"
    );
    let tasks: Vec<String> = h
        .events()
        .iter()
        .filter_map(|e| match &e.body {
            wright_protocol::EventBody::Message { text, .. }
                if e.source == wright_protocol::Source::User =>
            {
                Some(text.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        tasks,
        vec![
            "Le test test_export_csv échoue, corrige-le.",
            "Relance les tests."
        ]
    );
    // The second request extends the first run's last one: the same history, going on.
    let requests = server.chat_requests();
    let (end_of_first, start_of_second) = (&requests[3].body, &requests[4].body);
    assert!(start_of_second.starts_with(&end_of_first[..end_of_first.len() - 2]));

    // The session loads again from its log, in a new process: replayed, then answered.
    let stderr = editor.close().await;
    let mut again = Editor::start(&h, &server.url());
    again.initialize().await;
    let loaded = again
        .call(
            "session/load",
            json!({"sessionId": session, "cwd": h.repo(), "mcpServers": []}),
        )
        .await;
    assert_eq!(loaded.response["result"], json!({}), "{}", loaded.response);
    assert_eq!(
        loaded.text("user_message_chunk"),
        "Le test test_export_csv échoue, corrige-le.Relance les tests."
    );
    assert_eq!(loaded.tool_calls().len(), 6);
    let replayed = loaded.text("agent_message_chunk");
    assert!(
        replayed.contains("row_to_csv drops the last column.")
            && replayed.contains("They still pass."),
        "{replayed}"
    );
    again.close().await;
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_cancel_stops_after_the_step_and_answers_cancelled() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo started"})),
        Reply::Delayed(
            Duration::from_secs(120),
            Box::new(reply().call("finish", json!({"message": "too late"}))),
        ),
        reply().call("finish", json!({"message": "done after the cancel"})),
    ])
    .await
    .unwrap();
    let mut editor = Editor::start(&h, &server.url());
    editor.initialize().await;
    let session = editor.new_session(h.repo()).await;
    let asked = editor
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "say started"}]}),
        )
        .await;
    // Once the command ran and the model was asked again (it is slow to answer), the
    // editor cancels.
    let before = editor
        .until(|m| m["params"]["update"]["sessionUpdate"] == "tool_call_update")
        .await;
    asked_twice(&server).await;
    editor
        .send(
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
        )
        .await;
    let answer = tokio::time::timeout(Duration::from_secs(30), editor.answer(json!(asked)))
        .await
        .expect("a cancelled prompt is answered at once, not after the slow model");
    assert_eq!(
        answer.response["result"]["stopReason"], "cancelled",
        "{}",
        answer.response
    );
    assert!(before.iter().all(|m| m.get("id").is_none()));
    // The log says why it stopped; the step before it is whole.
    let events = h.events();
    let stop = events
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            wright_protocol::EventBody::State { state, reason, .. } => {
                Some((*state, reason.clone()))
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(
        stop,
        (
            wright_protocol::AgentState::Stopped,
            Some("cancelled from the editor (session/cancel)".to_string())
        )
    );
    // The session goes on with the next prompt.
    let next = editor.prompt(&session, "go on").await;
    assert_eq!(
        next.response["result"]["stopReason"], "end_turn",
        "{}",
        next.response
    );
    assert!(next
        .text("agent_message_chunk")
        .contains("done after the cancel"));
    // A cancel with nothing running is nothing: the next request is still answered.
    editor
        .send(
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
        )
        .await;
    let init = editor.initialize().await;
    assert_eq!(init["protocolVersion"], 1);
    editor.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_answers_bad_input_with_errors_and_keeps_serving() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    // No model is ever asked: nothing here gets as far as a prompt's run.
    let server = ScriptedServer::start(Vec::new()).await.unwrap();
    let mut editor = Editor::start(&h, &server.url());
    editor.initialize().await;
    let error = |answer: &Answer| answer.response["error"].clone();

    // Not JSON: a parse error, with no id to answer.
    editor.write("{this is not json").await;
    let parse = editor.answer(Value::Null).await;
    assert_eq!(error(&parse)["code"], -32700, "{}", parse.response);

    // A prompt to a session nobody opened.
    let unknown = editor.prompt("20260101-000000-nosuch", "hello").await;
    assert_eq!(error(&unknown)["code"], -32002, "{}", unknown.response);
    assert_eq!(
        error(&unknown)["data"]["sessionId"],
        "20260101-000000-nosuch"
    );
    // Loading a conversation that does not exist, or an id that is not one.
    for id in ["20260101-000000-nosuch", "../../etc"] {
        let load = editor
            .call(
                "session/load",
                json!({"sessionId": id, "cwd": h.repo(), "mcpServers": []}),
            )
            .await;
        assert_eq!(error(&load)["code"], -32002, "{}", load.response);
    }
    // A session on a relative path, or on a directory that is not there.
    let relative = editor
        .call("session/new", json!({"cwd": "repo", "mcpServers": []}))
        .await;
    assert_eq!(error(&relative)["code"], -32602, "{}", relative.response);
    let missing = editor
        .call(
            "session/new",
            json!({"cwd": h.repo().join("nowhere"), "mcpServers": []}),
        )
        .await;
    assert_eq!(error(&missing)["code"], -32602, "{}", missing.response);
    let said = error(&missing)["message"].as_str().unwrap().to_string();
    assert!(said.contains("must be an existing directory"), "{said}");
    // A request without what it needs, and a method nobody serves.
    let session = editor.new_session(h.repo()).await;
    let no_prompt = editor
        .call("session/prompt", json!({"sessionId": session}))
        .await;
    assert_eq!(error(&no_prompt)["code"], -32602, "{}", no_prompt.response);
    let empty = editor.prompt(&session, "   ").await;
    assert_eq!(error(&empty)["code"], -32602, "{}", empty.response);
    let image = editor
        .call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]}),
        )
        .await;
    assert_eq!(error(&image)["code"], -32602, "{}", image.response);
    let unknown_method = editor.call("session/fly", json!({})).await;
    assert_eq!(
        error(&unknown_method)["code"],
        -32601,
        "{}",
        unknown_method.response
    );

    // Still serving: a new session is given.
    let other = editor.new_session(h.repo()).await;
    assert_ne!(other, session);
    // Nothing started: no conversation, no request to the model.
    assert!(
        !h.data.path().join("wright/conversations").exists()
            || std::fs::read_dir(h.data.path().join("wright/conversations"))
                .unwrap()
                .next()
                .is_none()
    );
    assert_eq!(server.chat_requests().len(), 0);
    editor.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_closing_or_a_signal_stops_the_run_after_its_step() {
    // The model answers the second step only after two minutes: each way of leaving
    // stops the run before that, with its reason logged and its changes handed over.
    let held = || {
        vec![
            reply().call("terminal", json!({"command": "echo started"})),
            Reply::Delayed(
                Duration::from_secs(120),
                Box::new(reply().call("finish", json!({"message": "too late"}))),
            ),
        ]
    };
    for (leave, reason, exit) in [
        ("close", "stopped: the editor closed the connection", 0),
        ("SIGTERM", "stopped by SIGTERM", 143),
    ] {
        let h = Harness::new();
        failing_python_repo(h.repo());
        let server = ScriptedServer::start(held()).await.unwrap();
        let mut editor = Editor::start(&h, &server.url());
        editor.initialize().await;
        let session = editor.new_session(h.repo()).await;
        editor
            .request(
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": "say started"}]}),
            )
            .await;
        editor
            .until(|m| m["params"]["update"]["sessionUpdate"] == "tool_call_update")
            .await;
        asked_twice(&server).await;
        match leave {
            "close" => drop(editor.stdin.take()),
            _ => {
                let pid = editor.child.id().unwrap().to_string();
                let killed = std::process::Command::new("kill")
                    .args(["-TERM", &pid])
                    .status()
                    .unwrap();
                assert!(killed.success());
            }
        }
        let status = tokio::time::timeout(Duration::from_secs(60), editor.child.wait())
            .await
            .unwrap_or_else(|_| panic!("{leave}: wright acp did not end within 60 s"))
            .unwrap();
        assert_eq!(status.code(), Some(exit), "{leave}: {}", editor.said());
        let shape = crate::common::shape(&h.events());
        assert_eq!(
            shape[shape.len() - 2..],
            ["state:stopped".to_string(), "changes".to_string()],
            "{leave}"
        );
        let stop = h
            .events()
            .iter()
            .rev()
            .find_map(|e| match &e.body {
                wright_protocol::EventBody::State { reason, .. } => reason.clone(),
                _ => None,
            })
            .unwrap();
        assert_eq!(stop, reason, "{leave}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_session_goes_on_with_the_fallback_profile_after_a_503_storm() {
    let h = Harness::new();
    crate::config::init_repo(h.repo());
    let (local, hosted) = crate::fallback::busy_local_and_hosted().await;
    h.user_config(&format!(
        "[profiles.hosted]\nbase_url = \"{}\"\nmodel = \"big-model\"\n",
        hosted.url()
    ));
    let url = local.url();
    let mut editor = Editor::start_with(
        &h,
        &[
            "--base-url",
            &url,
            "--model",
            "test-model",
            "--fallback",
            "hosted",
        ],
    );
    editor.initialize().await;
    let session = editor.new_session(h.repo()).await;
    let answer = editor.prompt(&session, "say one then two").await;
    assert_eq!(
        answer.response["result"]["stopReason"],
        "end_turn",
        "{}\n{}",
        answer.response,
        editor.said()
    );
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
            switches[0].step,
            switches[0].reason,
            switches[0].to.profile.as_deref()
        ),
        (2, wright_protocol::SwitchReason::Overloaded, Some("hosted"))
    );
    assert_eq!(
        (local.chat_requests().len(), hosted.chat_requests().len()),
        (5, 2)
    );
    editor.close().await;
}
