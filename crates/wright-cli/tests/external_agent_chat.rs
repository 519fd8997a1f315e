//! `wright chat --agent NAME`: the chat's turns taken by an external agent — here `wright
//! acp` itself, driven by the scripted model server — in one session of the agent's:
//! each line typed is a prompt that goes on from the last (the agent's model sees the
//! first task when it answers the second), each turn is a run of one conversation in
//! wright's log, and the chat's end hands the clone's changes over on the branch
//! `wright apply` takes; `wright resume` goes on in that session afterwards.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use crate::external_agent::configure;
use crate::external_agent::fix_script;
use crate::external_agent::no_namespace;
use crate::external_agent::port;
use serde_json::json;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_with_an_external_agent_goes_on_in_its_session_and_hands_the_change_over() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let mut script = fix_script();
    script.push(reply().call(
        "finish",
        json!({"message": "I changed row_to_csv to join the whole row."}),
    ));
    // After the chat, `wright resume` goes on in the same session of the agent's.
    script.push(reply().call("finish", json!({"message": "the tests pass."})));
    let server = ScriptedServer::start(script).await.unwrap();
    // The inner agent asks nothing (a question would be asked at this chat's terminal).
    configure(&h, port(&server), &["--confirm", "never"]);
    let url = server.url();
    let output = h
        .wright_with_input_env(
            &[
                "chat",
                "--agent",
                "inner",
                "--base-url",
                &url,
                "--model",
                "test-model",
            ],
            b"the test test_export_csv fails, fix it\n/undo\nwhat did you change?\n/exit\n",
            &[("WRIGHT_PROXY_RESOLVE", "model.test=127.0.0.1")],
        )
        .await;
    if no_namespace(&output) {
        return;
    }
    let events = h.events();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}\n{}\n{events:#?}",
        stdout(&output),
        stderr(&output)
    );
    // wright's own commands that need its model are refused, the chat goes on.
    assert!(
        stdout(&output).contains("/undo is not for an external agent's chat"),
        "{}",
        stdout(&output)
    );
    // One conversation, two turns: both prompts the user's, each turn ended finished.
    let said: Vec<String> = events
        .iter()
        .filter(|e| e.source == Source::User)
        .filter_map(|e| match &e.body {
            EventBody::Message { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        said,
        [
            "the test test_export_csv fails, fix it",
            "what did you change?"
        ],
        "{events:#?}"
    );
    let finished = events
        .iter()
        .filter(|e| {
            matches!(
                &e.body,
                EventBody::State {
                    state: AgentState::Finished,
                    ..
                }
            )
        })
        .count();
    assert_eq!(finished, 2, "{events:#?}");
    let start = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::Start(start) => Some(start.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(start.agent.as_deref(), Some("inner"));
    // The agent's second prompt went on in its own session: its model saw the first.
    let last = server.chat_requests().last().unwrap().json();
    let messages = last["messages"].to_string();
    assert!(
        messages.contains("test_export_csv fails") && messages.contains("what did you change?"),
        "{messages}"
    );
    // The change, handed over at the chat's end, is the branch apply takes.
    let diff = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::Changes(changes) => changes.diff.clone(),
            _ => None,
        })
        .unwrap_or_default();
    assert!(
        diff.contains("+    return \",\".join(str(v) for v in row)"),
        "{diff}"
    );
    let text = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(text.contains(BUG));
    let id = h.conversation_id();
    let applied = h.wright(&["apply", id.as_str()], &[]).await;
    assert_eq!(applied.status.code(), Some(0), "{}", stderr(&applied));
    let text = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(text.contains(FIX), "{text}");
    // The chat's session of the agent's was recorded: a resume loads it, and the agent's
    // model sees both turns of the chat before the new prompt.
    let resumed = h
        .wright(
            &[
                "resume",
                id.as_str(),
                "do the tests pass?",
                "--base-url",
                &url,
                "--model",
                "test-model",
            ],
            &[("WRIGHT_PROXY_RESOLVE", "model.test=127.0.0.1")],
        )
        .await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let last = server.chat_requests().last().unwrap().json();
    let messages = last["messages"].to_string();
    assert!(
        messages.contains("what did you change?") && messages.contains("do the tests pass?"),
        "{messages}"
    );
}
