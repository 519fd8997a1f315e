//! `/resume ID` for a conversation that worked in a clone of its own (the usual case: an
//! earlier run or chat on the same repository): the chat moves into that conversation's
//! clone. The conversation it leaves is handed over first as at the chat's end (its
//! changes on its branch, said in its report), so nothing of it is lost; the one it goes
//! to is reopened as `wright resume` would, its sandbox and locks its own.

use super::Chat;
use crate::drive::Terminal;
use crate::progress::Progress;
use anyhow::Result;
use std::path::Path;
use wright_protocol::AgentState;
use wright_session::working_copy::Record;
use wright_session::Ending;
use wright_session::Existing;
use wright_session::Replies;
use wright_session::Session;
use wright_strategies::Help;

/// Whether `dir`'s conversation worked in a clone of the repository the chat works on
/// (`session`'s), other than the chat's own clone.
pub(super) fn other_clone_of_this_repository(dir: &Path, session: &Session) -> bool {
    let here = Record::read(&session.conversation_dir);
    let there = Record::read(dir);
    match (here, there) {
        (
            Ok(Record::Clone {
                repo_root: ours,
                clone_root: our_clone,
                ..
            }),
            Ok(Record::Clone {
                repo_root: theirs,
                clone_root: their_clone,
                ..
            }),
        ) => ours == theirs && our_clone != their_clone,
        _ => false,
    }
}

/// Reopens the conversation in `dir` in place of the chat's current one, whose session
/// (`session`) is finished and reported on (`last`: how its last turn ended).
pub(super) async fn switch(
    chat: &mut Chat,
    session: &mut Session,
    dir: &Path,
    observer: &mut Progress,
    last: Option<wright_core::Outcome>,
) -> Result<()> {
    let front = Terminal { json: false };
    let existing = Existing::open(dir, &front)?;
    let sandbox = chat.settings.sandbox_choice()?;
    let mut values = chat.settings.values.clone();
    // A chat's replies may be words: never constrained to calls.
    values.constrain = "off".into();
    let client = chat.conversation.client().clone();
    let (mut reopened, mut conversation, _) = Session::reopen(
        existing,
        client,
        values,
        &sandbox,
        session.profiles.clone(),
        &front,
    )
    .await?;
    // Reopened as `wright resume` would, where only `finish` ends the task; here it is a
    // chat again, whose turn ends on words (this conversation's and the next `/new`'s).
    reopened.replies = Replies::MayBeWords;
    conversation.set_require_finish(false);
    chat.asks(&mut conversation);
    let left = std::mem::replace(session, reopened);
    let left_conversation = std::mem::replace(&mut chat.conversation, conversation);
    chat.inspector = session.tools.inspector(&session.working_copy);
    chat.window = session.window.tokens;
    chat.tool_calling = session.tool_calling;
    let summary = last
        .as_ref()
        .filter(|outcome| outcome.state == AgentState::Finished)
        .and_then(|outcome| outcome.summary.clone());
    let ending = Ending {
        title: "chat",
        summary: summary.as_deref(),
        locks: chat.lock.take().into_iter().collect(),
    };
    let finished = left.finish(left_conversation, ending, observer).await?;
    if let Some(outcome) = &last {
        crate::report::print_report(
            outcome,
            std::time::Duration::ZERO,
            &finished.changes,
            &finished.id,
            &finished.log_path,
        );
    }
    crate::drive::tell_failure(&finished.changes, &finished.id);
    Ok(())
}
