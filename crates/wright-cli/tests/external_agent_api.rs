//! An external agent through the server's API: a conversation created with
//! `"settings": {"agent": NAME}` runs it (its steps, diff and refusals of fork, `/ask`
//! and messages as for the CLI), and its permission requests wait for the API's confirm
//! route.

use super::external_agent::configure_scripted;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::ScriptedServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_runs_an_external_agent_named_in_its_settings() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(vec![]).await.unwrap();
    configure_scripted(&h);
    let served = crate::server::Served::start(&h, &[], &[]).await;
    // A name the configuration does not define is refused at once, naming those it does.
    let (status, body) = served
        .post(
            "/api/conversations",
            json!({"workspace": h.repo(), "task": "fix the test",
                   "settings": {"base_url": model.url(), "model": "test-model", "agent": "nobody"}}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("it defines scripted"), "{body}");
    let id = served
        .accepted(json!({"workspace": h.repo(), "task": "fix the test",
                         "settings": {"base_url": model.url(), "model": "test-model", "agent": "scripted"}}))
        .await;
    served.wait_for(&id, &["finished"]).await;
    let events = served.events(&id, 200).await;
    assert_eq!(events[0]["kind"], "start");
    assert_eq!(events[0]["agent"], "scripted", "{:#?}", events[0]);
    let tools: Vec<&str> = events
        .iter()
        .filter(|e| e["kind"] == "action")
        .filter_map(|e| e["tool"].as_str())
        .collect();
    assert_eq!(
        tools,
        ["file_editor", "file_editor", "terminal"],
        "{events:#?}"
    );
    let changes = events.iter().find(|e| e["kind"] == "changes").unwrap();
    assert_eq!(changes["outcome"], "branch", "{changes}");
    // Forking and a side question are refused through the API too, the reason said:
    // wright holds no model and no history of its own for it; going on is refused for
    // this agent, which does not load sessions (session/load).
    let refusal = "run by the external agent scripted";
    let (status, body) = served
        .post(&format!("/api/conversations/{id}/fork"), json!({}))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains(refusal),
        "{body}"
    );
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/ask"),
            json!({"question": "what did you change?"}),
        )
        .await;
    assert!(body.to_string().contains(refusal), "{status}: {body}");
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/messages"),
            json!({"text": "go on", "settings": {"base_url": model.url(), "model": "test-model"}}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    // The message's run is refused once it opens the conversation: its error says why.
    let mut said = serde_json::Value::Null;
    for _ in 0..600 {
        let (_, now) = served.get(&format!("/api/conversations/{id}")).await;
        said = now;
        if said["error"].is_string() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        said["error"]
            .as_str()
            .unwrap_or_default()
            .contains("session/load"),
        "{said:#}"
    );
}

/// A scripted ACP agent that reports a tool call of its own and asks permission for it,
/// then says which option it was given.
const ASKING_AGENT: &str = r#"
import json, sys
def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n"); sys.stdout.flush()
def update(u):
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": u}})
for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "rm -rf build",
                "kind": "execute", "status": "pending", "rawInput": {"command": "rm -rf build"}})
        send({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {
            "sessionId": "s1", "toolCall": {"toolCallId": "t1"},
            "options": [{"optionId": "once", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "never", "name": "Reject", "kind": "reject_once"}]}})
        while True:
            answer = json.loads(sys.stdin.readline())
            if answer.get("id") == 7 and "method" not in answer:
                break
        outcome = answer["result"]["outcome"]
        chosen = outcome.get("optionId", outcome.get("outcome"))
        update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "removed"}}]})
        update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "given " + chosen}})
        send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_permission_request_is_answered_through_the_apis_confirm_route() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(vec![]).await.unwrap();
    let dir = h.data.path().join("config/wright");
    std::fs::create_dir_all(&dir).unwrap();
    let command = serde_json::to_string(&["python3", "-c", ASKING_AGENT]).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!("[agents.asker]\ncommand = {command}\n"),
    )
    .unwrap();
    let served = crate::server::Served::start(&h, &[], &[]).await;
    let id = served
        .accepted(json!({"workspace": h.repo(), "task": "clean up",
                         "settings": {"base_url": model.url(), "model": "test-model", "agent": "asker"}}))
        .await;
    // The server asks before unknown-risk actions: the agent's own call waits, as ours do.
    let body = served.wait_for(&id, &["awaiting_confirmation"]).await;
    assert_eq!(body["pending"]["tool"], "reported", "{body}");
    assert_eq!(body["pending"]["call_id"], "t1", "{body}");
    assert_eq!(body["pending"]["risk"], "unknown", "{body}");
    let route = format!("/api/conversations/{id}/confirm");
    let (status, answer) = served.post(&route, json!({"approve": true})).await;
    assert_eq!(status, 202, "{answer}");
    served.wait_for(&id, &["finished"]).await;
    let events = served.events(&id, 200).await;
    let kinds: Vec<String> = events
        .iter()
        .filter(|e| e["kind"] != "usage")
        .map(|e| match e["kind"].as_str().unwrap() {
            "state" => format!("state:{}", e["state"].as_str().unwrap()),
            "action" | "observation" => format!(
                "{}:{}",
                e["kind"].as_str().unwrap(),
                e["tool"].as_str().unwrap()
            ),
            "confirmation" => format!("confirmation:{}", e["decision"].as_str().unwrap()),
            kind => kind.to_string(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "start",
            "message",
            "state:running",
            "action:reported",
            "state:awaiting_confirmation",
            "confirmation:approved",
            "state:running",
            "observation:reported",
            "message",
            "state:finished",
            "changes"
        ],
        "{events:#?}"
    );
    let said = events
        .iter()
        .rev()
        .find(|e| e["kind"] == "message")
        .unwrap();
    assert_eq!(said["text"], "given once", "{said}");
}
