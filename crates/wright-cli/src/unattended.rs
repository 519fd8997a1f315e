//! Sessions prepared for programs rather than a person at a terminal — the server's
//! conversations, an editor's over ACP: the settings resolved as `wright run` and
//! `wright resume` resolve them (flags, environment, the configuration files, the
//! repository's own file read at the start commit), and nobody asked anything (a
//! question is answered no by the program's `Front`).

use crate::answering::connect;
use crate::answering::Connected;
use crate::going_on::Naming;
use crate::going_on::Plan;
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
    let settings = SessionSettings::resolve(args, Some(&start.config_source()))?;
    // First: a secret that is not stored stops the run before the server is asked.
    let sandbox = settings.sandbox_choice()?;
    // The first profile of the chain that answers, and the rest for the conversation to
    // go on with (the header's lines are a terminal's: the log has the switches).
    let Connected {
        mut settings,
        client,
        profiles,
        ..
    } = connect(settings, args, None, crate::hints::Front::CommandLine).await?;
    default_confirm(&mut settings, confirm);
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
        profiles,
    };
    Session::prepare_as(id, start, request, front)
        .await
        .map_err(crate::drive::with_remedy)
}

/// The session of the conversation in `dir`, locked, and the conversation read back;
/// `naming`: who may name another model for it (see `going_on`).
pub async fn reopen(
    args: &CommonArgs,
    dir: &Path,
    confirm: Option<ConfirmMode>,
    naming: Naming,
    front: &dyn Front,
) -> Result<(Session, Conversation, ResumeNotes)> {
    let existing = Existing::open(dir, front)?;
    // The model it is on unless another is named (logged as a switch), as `wright
    // resume` does.
    let plan = Plan::new(args, &existing, naming)?;
    let args = plan.args.clone();
    let (logged_url, logged_model) = plan.logged();
    let settings = SessionSettings::resolve(&args, Some(&existing.working_copy.config_source()))?;
    plan.check_settings(&settings)?;
    let sandbox = settings.sandbox_choice()?;
    let Connected {
        mut settings,
        client,
        mut profiles,
        ..
    } = connect(
        settings,
        &args,
        Some((&logged_url, &logged_model)),
        crate::hints::Front::CommandLine,
    )
    .await?;
    let in_use = crate::answering::model_at(settings.values.profile.clone(), &client);
    plan.check_connected(&in_use, &mut profiles)?;
    default_confirm(&mut settings, confirm);
    Session::reopen(
        existing,
        client,
        settings.values.clone(),
        &sandbox,
        profiles,
        front,
    )
    .await
}

/// The program's own default for confirmation (the server asks before risky actions),
/// when neither the flags nor the configuration chose one.
fn default_confirm(settings: &mut SessionSettings, confirm: Option<ConfirmMode>) {
    if let Some(mode) = confirm {
        settings.values.confirm.get_or_insert(mode);
    }
}
