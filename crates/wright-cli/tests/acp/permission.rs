//! Permission requests: a risky call asked about in the editor (`session/request_permission`
//! with the call, its risk and three options); rejected, it is not run and the model is
//! told; a prompt cancelled while the editor is asked leaves the call waiting, never run;
//! the next prompt asks about it again, and allowed, it runs.

use super::editor::Editor;
use super::editor::Permission;
use crate::common::Harness;
use pretty_assertions::assert_eq;
use serde_json::json;
use wright_protocol::Decision;
use wright_protocol::EventBody;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

const REFUSED: &str = "chmod +x export.py && touch refused.txt";
const ALLOWED: &str = "chmod +x export.py && touch allowed.txt";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_asks_the_editor_before_a_risky_call_and_runs_only_what_it_allows() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": REFUSED})),
        reply().call("terminal", json!({"command": ALLOWED})),
        // After the second prompt: the waiting call ran.
        reply().call("terminal", json!({"command": "ls"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let mut editor = Editor::start(&h, &server.url());
    editor.initialize().await;
    let session = editor.new_session(h.repo()).await;
    editor.permissions.extend([
        Permission::Choose("reject"),
        Permission::CancelPrompt,
        Permission::Choose("allow"),
    ]);

    let first = editor.prompt(&session, "make export.py executable").await;
    assert_eq!(
        first.response["result"]["stopReason"], "cancelled",
        "{}",
        first.response
    );
    // Each request names the session, the call (pending, with its arguments and risk) and
    // the three answers.
    let asked = &editor.permission_requests;
    assert_eq!(asked.len(), 2, "{asked:#?}");
    let call = &asked[0]["params"]["toolCall"];
    assert_eq!(asked[0]["params"]["sessionId"], session);
    assert_eq!(call["status"], "pending");
    assert_eq!(call["rawInput"]["command"], REFUSED);
    let title = call["title"].as_str().unwrap();
    assert!(
        title.starts_with(REFUSED) && title.contains("risk high"),
        "{title}"
    );
    let options: Vec<&str> = asked[0]["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["allow_once", "allow_always", "reject_once"]);
    // The call waits as pending in the editor while it is asked.
    let pending = first
        .of_kind("tool_call_update")
        .into_iter()
        .filter(|u| u["status"] == "pending")
        .count();
    assert_eq!(pending, 2, "{:#?}", first.updates);

    // Rejected: not run, and the model was told; cancelled while asked: not run either.
    let events = h.events();
    assert_eq!(decisions(&events), [Decision::Rejected]);
    let told = server.chat_requests()[1].json();
    assert!(
        told.to_string().contains("rejected"),
        "the model was not told of the rejection: {told}"
    );
    assert!(
        !ran(&events, "refused.txt") && !ran(&events, "allowed.txt"),
        "{events:#?}"
    );

    // The next prompt asks again about the call left waiting; allowed, it runs.
    let next = editor.prompt(&session, "go on").await;
    assert_eq!(
        next.response["result"]["stopReason"], "end_turn",
        "{}",
        next.response
    );
    assert_eq!(editor.permission_requests.len(), 3);
    assert_eq!(
        editor.permission_requests[2]["params"]["toolCall"]["rawInput"]["command"],
        ALLOWED
    );
    let events = h.events();
    assert!(ran(&events, "allowed.txt"), "{events:#?}");
    assert_eq!(decisions(&events), [Decision::Rejected, Decision::Approved]);
    editor.close().await;
}

/// Whether the call whose command holds `name` ran: its observation is not an error
/// (a rejected call's is).
fn ran(events: &[wright_protocol::Event], name: &str) -> bool {
    events.iter().enumerate().any(|(at, action)| match &action.body {
        EventBody::Action {
            call_id, arguments, ..
        } if arguments["command"]
            .as_str()
            .is_some_and(|c| c.contains(name)) =>
        {
            events[at..].iter().any(|e| {
                matches!(&e.body, EventBody::Observation { call_id: id, is_error: false, .. } if id == call_id)
            })
        }
        _ => false,
    })
}

/// The answers logged, in order.
fn decisions(events: &[wright_protocol::Event]) -> Vec<Decision> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Confirmation { decision, .. } => Some(*decision),
            _ => None,
        })
        .collect()
}
