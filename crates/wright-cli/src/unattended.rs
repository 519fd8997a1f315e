//! Sessions prepared for programs rather than a person at a terminal — the server's
//! conversations, an editor's over ACP: the settings resolved as `wright run` and
//! `wright resume` resolve them (flags, environment, the configuration files, the
//! repository's own file read at the start commit), and nobody asked anything (a
//! question is answered no by the program's `Front`).

use crate::settings::CommonArgs;
use crate::settings::SessionSettings;
use anyhow::Result;
use std::path::Path;
use wright_core::Conversation;
use wright_core::ResumeNotes;
use wright_protocol::ConfirmMode;
use wright_session::Existing;
use wright_session::Front;
use wright_session::Session;

/// Refuses a workspace a conversation could not start in with `args`: not a directory,
/// one holding wright's own files, a configuration that does not resolve, a secret that
/// is not stored.
pub fn check(args: &CommonArgs, workspace: &Path, front: &dyn Front) -> Result<()> {
    let start = Session::locate(workspace, front)?;
    let settings = SessionSettings::resolve(args, Some(&start.config_source()))?;
    settings.sandbox_choice()?;
    Ok(())
}

/// A new conversation's session on `workspace` under `id`, in a clone on a new branch
/// when it is a git repository (your uncommitted changes left out).
/// `confirm`: the mode when neither the flags nor the configuration choose one.
pub async fn prepare(
    args: &CommonArgs,
    id: String,
    workspace: &Path,
    confirm: Option<ConfirmMode>,
    front: &dyn Front,
) -> Result<Session> {
    let start = Session::locate(workspace, front)?;
    let mut settings = SessionSettings::resolve(args, Some(&start.config_source()))?;
    default_confirm(&mut settings, confirm);
    // First: a secret that is not stored stops the run before the server is asked.
    let sandbox = settings.sandbox_choice()?;
    let client = settings
        .client(None, crate::hints::Front::CommandLine)
        .await?;
    let request = wright_session::Request {
        client,
        settings: settings.values.clone(),
        place: wright_session::Place {
            in_place: false,
            force: false,
            uncommitted: wright_session::UncommittedChoice::Leave,
            snapshot: true,
        },
        sandbox,
        replies: wright_session::Replies::AlwaysCalls,
    };
    Session::prepare_as(id, start, request, front)
        .await
        .map_err(crate::drive::with_remedy)
}

/// The session of the conversation in `dir`, locked, and the conversation read back.
pub async fn reopen(
    args: &CommonArgs,
    dir: &Path,
    confirm: Option<ConfirmMode>,
    front: &dyn Front,
) -> Result<(Session, Conversation, ResumeNotes)> {
    let existing = Existing::open(dir, front)?;
    let mut settings =
        SessionSettings::resolve(args, Some(&existing.working_copy.config_source()))?;
    default_confirm(&mut settings, confirm);
    let start = existing.start.clone();
    let sandbox = settings.sandbox_choice()?;
    let client = settings
        .client(
            Some((&start.base_url, &start.model)),
            crate::hints::Front::CommandLine,
        )
        .await?;
    Session::reopen(existing, client, settings.values.clone(), &sandbox, front).await
}

/// The program's own default for confirmation (the server asks before risky actions),
/// when neither the flags nor the configuration chose one.
fn default_confirm(settings: &mut SessionSettings, confirm: Option<ConfirmMode>) {
    if let Some(mode) = confirm {
        settings.values.confirm.get_or_insert(mode);
    }
}
