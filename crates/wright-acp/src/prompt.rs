//! `session/prompt`: a session's first prompt is its conversation's task — the session
//! prepared as `wright run` prepares one (a clone on a new branch in a git repository,
//! the sandbox, the first look) — and every later one is a message going on with it, as
//! `wright resume ID MESSAGE`, the conversation reopened from its log. Either way the
//! run goes to its end (the model's `finish`, a limit, a cancel) and hands its changes
//! over before the prompt is answered, with the stop reason mapped from wright's.

use crate::front::Editor;
use crate::notify::Notifier;
use crate::stop::Answer;
use crate::updates::Files;
use crate::updates::Updates;
use crate::Host;
use agent_client_protocol::v1::schema::ContentBlock;
use agent_client_protocol::v1::schema::PromptRequest;
use agent_client_protocol::v1::schema::PromptResponse;
use agent_client_protocol::v1::schema::StopReason;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use agent_client_protocol::Error;
use agent_client_protocol::ErrorCode;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_core::Conversation;
use wright_protocol::ToolCalling;
use wright_session::Session;

pub(crate) async fn prompt(
    host: Arc<Host>,
    request: PromptRequest,
    connection: ConnectionTo<Client>,
) -> Result<PromptResponse, Error> {
    let id = request.session_id.to_string();
    let (workspace, cancel) = host
        .sessions
        .begin(&id)
        .map_err(|refusal| crate::refused(&refusal))?;
    let text = match prompt_text(&request.prompt, &workspace) {
        Ok(text) => text,
        Err(err) => {
            host.sessions.end(&id);
            return Err(err);
        }
    };
    let result = run(host.clone(), &id, &workspace, &text, &cancel, connection).await;
    // The protocol's rule: a cancelled prompt answers `cancelled`, whatever broke.
    if host.sessions.end(&id) {
        return Ok(PromptResponse::new(StopReason::Cancelled));
    }
    match result {
        Ok(Answer::Stop(stop)) => Ok(PromptResponse::new(stop)),
        Ok(Answer::Failed(why)) => Err(Error::new(ErrorCode::INTERNAL_ERROR, why)),
        Err(err) => Err(Error::new(ErrorCode::INTERNAL_ERROR, format!("{err:#}"))),
    }
}

/// Runs the prompt's conversation to its end; how its run ended.
async fn run(
    host: Arc<Host>,
    id: &str,
    workspace: &Path,
    text: &str,
    cancel: &CancellationToken,
    connection: ConnectionTo<Client>,
) -> anyhow::Result<Answer> {
    let notifier = Notifier::new(connection.clone(), id);
    let front = Editor {
        notifier: notifier.clone(),
    };
    let (session, mut conversation) = open(&host, id, workspace, &front).await?;
    // Risky calls are asked about in the editor (the mode is the session's: `risky`
    // unless the flags or the configuration say otherwise).
    conversation.set_confirmer(Arc::new(crate::permission::EditorConfirmer {
        connection,
        host: host.clone(),
        session: id.to_string(),
    }));
    host.sessions.attach(id, conversation.interrupt_reason());
    let files = Files {
        workspace: session.tools.workspace.clone(),
        masker: session.tools.secrets.masker(),
    };
    let from = conversation.events().len() as u64;
    let stream_text = session.tool_calling == ToolCalling::Native;
    let mut updates = Updates::live(notifier, id, files, from, stream_text);
    let limits = wright_session::limits(&session.settings);
    let (outcome, _) = session
        .run_to_end(conversation, Some(text), limits, cancel, &mut updates, text)
        .await?;
    Ok(crate::stop::answer(&outcome.stop))
}

/// The session and conversation of `id`: made on its first prompt, reopened from its log
/// on every later one.
async fn open(
    host: &Host,
    id: &str,
    workspace: &Path,
    front: &Editor,
) -> anyhow::Result<(Session, Conversation)> {
    let dir = wright_session::stored::conversation_dir(id);
    if dir.join("events.jsonl").is_file() {
        let (session, conversation, notes) = host.starter.reopen(&dir, front).await?;
        if let Some(torn) = &notes.torn {
            front.notifier.say(format!(
                "wright: the log ended in a torn line (line {}): cut off, the events before it are intact\n\n",
                torn.line
            ));
        }
        return Ok((session, conversation));
    }
    let session = host
        .starter
        .prepare(id.to_string(), workspace, front)
        .await?;
    let mut conversation = session.start_conversation(session.workspace_map())?;
    session.begin_with_first_look(&mut conversation);
    Ok((session, conversation))
}

/// The prompt's words: its text, with each link to a file of the workspace as its path
/// in the workspace (the agent works in a clone of it, where the same path holds the
/// same file). wright takes no images or sounds; it says so rather than drop them.
fn prompt_text(blocks: &[ContentBlock], workspace: &Path) -> Result<String, Error> {
    let mut text = String::new();
    for block in blocks {
        let piece = match block {
            ContentBlock::Text(content) => content.text.clone(),
            ContentBlock::ResourceLink(link) => {
                let path = link.uri.strip_prefix("file://").map(Path::new);
                let inside = path.and_then(|path| path.strip_prefix(workspace).ok());
                let shown = match inside {
                    Some(relative) => relative.display().to_string(),
                    None => link.uri.clone(),
                };
                if text.ends_with(|c: char| !c.is_whitespace()) {
                    format!(" {shown}")
                } else {
                    shown
                }
            }
            ContentBlock::Image(_) | ContentBlock::Audio(_) | ContentBlock::Resource(_) => {
                return Err(Error::new(
                    ErrorCode::INVALID_PARAMS,
                    "wright takes a prompt's text and links to files, not images, sounds or embedded resources",
                ))
            }
            // A kind of block this wright does not know.
            _ => {
                return Err(Error::new(
                    ErrorCode::INVALID_PARAMS,
                    "a prompt block wright does not know",
                ))
            }
        };
        text.push_str(&piece);
    }
    if text.trim().is_empty() {
        return Err(Error::new(
            ErrorCode::INVALID_PARAMS,
            "the prompt is empty: say what the agent should do",
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::ResourceLink;
    use pretty_assertions::assert_eq;

    #[test]
    fn links_to_the_workspace_become_its_paths() {
        let blocks = vec![
            ContentBlock::from("fix the test in"),
            ContentBlock::ResourceLink(ResourceLink::new(
                "export.py",
                "file:///home/me/proj/src/export.py",
            )),
            ContentBlock::from(" and read"),
            ContentBlock::ResourceLink(ResourceLink::new("x", "https://example.org/x")),
        ];
        let text = prompt_text(&blocks, Path::new("/home/me/proj")).unwrap();
        assert_eq!(
            text,
            "fix the test in src/export.py and read https://example.org/x"
        );
        let blank = prompt_text(&[ContentBlock::from("  ")], Path::new("/w")).unwrap_err();
        assert_eq!(blank.code, ErrorCode::INVALID_PARAMS);
    }
}
