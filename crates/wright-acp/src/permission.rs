//! Risky actions asked about in the editor: when a session's confirmation mode asks
//! before a call (`--confirm`, `risky` by default here), the call waits as `pending` and
//! the editor is sent `session/request_permission` with it — its title, kind, arguments,
//! and why it is risky — and the person there answers: allow once, always allow this tool
//! in this conversation, or reject (the model is told). Nothing runs without an answer:
//! an editor that cancels the prompt, fails the request or goes away leaves the call
//! waiting in the log, and the session's next prompt asks about it again.

use crate::tool_calls::describe;
use crate::Host;
use agent_client_protocol::v1::schema::PermissionOption;
use agent_client_protocol::v1::schema::PermissionOptionId;
use agent_client_protocol::v1::schema::PermissionOptionKind;
use agent_client_protocol::v1::schema::RequestPermissionOutcome;
use agent_client_protocol::v1::schema::RequestPermissionRequest;
use agent_client_protocol::v1::schema::SessionId;
use agent_client_protocol::v1::schema::ToolCallStatus;
use agent_client_protocol::v1::schema::ToolCallUpdate;
use agent_client_protocol::v1::schema::ToolCallUpdateFields;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use std::sync::Arc;
use wright_protocol::Answer;
use wright_protocol::Decision;
use wright_protocol::Pending;
use wright_protocol::Source;
use wright_session::Confirmer;

/// The options' ids, as the editor answers with them.
const ALLOW: &str = "allow";
const ALWAYS: &str = "always";
const REJECT: &str = "reject";

/// The reason a prompt logs when the editor could not be asked.
pub(crate) const UNANSWERED: &str =
    "stopped: the editor did not answer the permission request; the action still waits";

/// Asks the person in the editor about one session's risky calls.
pub(crate) struct EditorConfirmer {
    pub(crate) connection: ConnectionTo<Client>,
    pub(crate) host: Arc<Host>,
    pub(crate) session: String,
}

#[async_trait::async_trait]
impl Confirmer for EditorConfirmer {
    fn can_answer(&self) -> bool {
        true
    }

    async fn ask(&self, pending: &Pending) -> Answer {
        let request = request(&self.session, pending);
        let answered = self.connection.send_request(request).block_task().await;
        match answered.map(|response| response.outcome) {
            Ok(RequestPermissionOutcome::Selected(selected)) => {
                match decision(&selected.option_id) {
                    Some(decision) => {
                        return Answer {
                            decision,
                            reason: None,
                        }
                    }
                    None => self.host.starter.diagnostic(&format!(
                        "wright acp: the editor chose an option it was not offered ({}): {}",
                        selected.option_id, UNANSWERED
                    )),
                }
            }
            // The prompt was cancelled (the editor says so before it answers this way):
            // the run stops with the call waiting.
            Ok(RequestPermissionOutcome::Cancelled) => {}
            // A kind of outcome this wright does not know: not a yes.
            Ok(_) => {}
            Err(err) => self.host.starter.diagnostic(&format!(
                "wright acp: the permission request failed ({err}): {UNANSWERED}"
            )),
        }
        // Stop the prompt: the loop ends the run with the call still waiting, and stops
        // waiting on this answer, which never comes.
        self.host.sessions.stop(&self.session, UNANSWERED);
        std::future::pending().await
    }
}

/// What the editor is asked about `pending`.
fn request(session: &str, pending: &Pending) -> RequestPermissionRequest {
    let described = describe(&pending.tool, &pending.arguments, Source::Agent);
    let mut title = format!("{} — risk {}", described.title, pending.risk);
    if !pending.reason.is_empty() {
        title.push_str(&format!(": {}", pending.reason));
    }
    if let Some(flag) = &pending.flag {
        title.push_str(&format!(" (warning: {flag})"));
    }
    let call = ToolCallUpdate::new(
        pending.call_id.clone(),
        ToolCallUpdateFields::new()
            .title(title)
            .kind(described.kind)
            .status(ToolCallStatus::Pending)
            .raw_input(pending.arguments.clone()),
    );
    let options = vec![
        PermissionOption::new(ALLOW, "Allow", PermissionOptionKind::AllowOnce),
        PermissionOption::new(
            ALWAYS,
            format!("Always allow {} in this conversation", pending.tool),
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
    ];
    RequestPermissionRequest::new(SessionId::new(session), call, options)
}

/// The decision an option stands for; `None` for one that was not offered.
fn decision(option: &PermissionOptionId) -> Option<Decision> {
    match &*option.0 {
        ALLOW => Some(Decision::Approved),
        ALWAYS => Some(Decision::Always),
        REJECT => Some(Decision::Rejected),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use wright_protocol::Risk;

    #[test]
    fn the_request_names_the_call_its_risk_and_three_answers() {
        let pending = Pending {
            call_id: "call_7".into(),
            tool: "terminal".into(),
            arguments: json!({"command": "git push origin main"}),
            risk: Risk::High,
            reason: "pushes to a remote".into(),
            flag: None,
            action_event: 12,
        };
        let sent = serde_json::to_value(request("s1", &pending)).unwrap();
        assert_eq!(sent["sessionId"], "s1");
        assert_eq!(sent["toolCall"]["toolCallId"], "call_7");
        assert_eq!(sent["toolCall"]["status"], "pending");
        assert_eq!(sent["toolCall"]["kind"], "execute");
        assert_eq!(
            sent["toolCall"]["title"],
            "git push origin main — risk high: pushes to a remote"
        );
        assert_eq!(sent["toolCall"]["rawInput"], pending.arguments);
        let kinds: Vec<(&str, &str)> = sent["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| (o["optionId"].as_str().unwrap(), o["kind"].as_str().unwrap()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("allow", "allow_once"),
                ("always", "allow_always"),
                ("reject", "reject_once")
            ]
        );
    }

    #[test]
    fn only_the_options_offered_decide() {
        assert_eq!(
            decision(&PermissionOptionId::new("allow")),
            Some(Decision::Approved)
        );
        assert_eq!(
            decision(&PermissionOptionId::new("always")),
            Some(Decision::Always)
        );
        assert_eq!(
            decision(&PermissionOptionId::new("reject")),
            Some(Decision::Rejected)
        );
        assert_eq!(decision(&PermissionOptionId::new("yes please")), None);
    }
}
