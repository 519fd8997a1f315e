//! Sessions prepared for programs rather than a person at a terminal — the server's
//! conversations, an editor's over ACP: the settings resolved as `wright run` and
//! `wright resume` resolve them (flags, environment, the configuration files, the
//! repository's own file read at the start commit), and nobody asked anything (a
//! question is answered no by the program's `Front`).

use super::connect;
use super::going_on::Naming;
use super::going_on::Plan;
use super::model_at;
use super::review::Review;
use super::CommonArgs;
use super::Connected;
use super::SessionSettings;
use crate::Existing;
use crate::Front;
use crate::Reopened;
use crate::Running;
use crate::Session;
use crate::SessionError;
use std::path::Path;
use wright_protocol::ConfirmMode;

/// Refuses a workspace a conversation could not start in with `args`: not a directory,
/// one holding wright's own files, a configuration that does not resolve, a secret that
/// is not stored.
pub fn check(args: &CommonArgs, workspace: &Path, front: &dyn Front) -> Result<(), SessionError> {
    let start = Session::locate(workspace, front)?;
    let settings = SessionSettings::resolve(args, Some(&start.config_source()))?;
    settings.sandbox_choice()?;
    Ok(())
}

/// Where an unattended conversation works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WorkPlace {
    /// In a clone on a new branch when the workspace is a git repository (its
    /// uncommitted changes left out), as `wright run` works.
    #[default]
    Clone,
    /// In the workspace itself, uncommitted changes and all (`wright acp --in-place`):
    /// for a program that already isolated the work (another agent's clone, an editor's
    /// worktree).
    InPlace,
}

/// A new conversation's session on `workspace` under `id`, where `place` says.
/// `confirm`: the mode when neither the flags nor the configuration choose one.
pub async fn prepare(
    args: &CommonArgs,
    id: String,
    workspace: &Path,
    confirm: Option<ConfirmMode>,
    place: WorkPlace,
    front: &dyn Front,
) -> Result<Session, SessionError> {
    let start = Session::locate(workspace, front)?;
    // The routing rules of `wright run` choose the profile, as for a run.
    let settings = SessionSettings::resolve_routed(
        args,
        Some(&start.config_source()),
        Some(wright_config::RouteCommand::Run),
    )?;
    // First: a secret that is not stored stops the run before the server is asked.
    let sandbox = settings.sandbox_choice()?;
    // The first profile of the chain that answers, and the rest for the conversation to
    // go on with (the header's lines are a terminal's: the log has the switches).
    let Connected {
        mut settings,
        client,
        profiles,
        ..
    } = connect(settings, args, None).await?;
    default_confirm(&mut settings, confirm);
    let request = crate::Request {
        client,
        settings: settings.values.clone(),
        place: crate::Place {
            in_place: place == WorkPlace::InPlace,
            force: place == WorkPlace::InPlace,
            uncommitted: crate::UncommittedChoice::Leave,
            snapshot: true,
        },
        sandbox,
        replies: crate::Replies::AlwaysCalls,
        profiles,
    };
    let mut session = Session::prepare_as(id, start, request, front).await?;
    // The reviewer of the `review.profile` key, as `wright run` has it.
    session.review = Review::choose(&settings, None).await?;
    Ok(session)
}

/// The session of the conversation in `dir`, locked, and the conversation read back;
/// `naming`: who may name another model for it (see `going_on`); `takes`: whether an
/// external agent's conversation is taken (to go on in the agent's own session).
pub async fn reopen(
    args: &CommonArgs,
    dir: &Path,
    confirm: Option<ConfirmMode>,
    naming: Naming,
    takes: crate::Takes,
    front: &dyn Front,
) -> Result<Reopened, SessionError> {
    let existing = Existing::open_taking(dir, front, takes)?;
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
    } = connect(settings, &args, Some((&logged_url, &logged_model))).await?;
    let in_use = model_at(settings.values.profile.clone(), &client);
    plan.check_connected(&in_use, &mut profiles)?;
    default_confirm(&mut settings, confirm);
    let (session, conversation, notes) = Session::reopen(
        existing,
        client,
        settings.values.clone(),
        &sandbox,
        profiles,
        front,
    )
    .await?;
    Ok(Reopened {
        session,
        conversation: Running { conversation },
        torn_line: notes.torn.map(|torn| torn.line),
    })
}

/// The program's own default for confirmation (the server asks before risky actions),
/// when neither the flags nor the configuration chose one.
fn default_confirm(settings: &mut SessionSettings, confirm: Option<ConfirmMode>) {
    if let Some(mode) = confirm {
        settings.values.confirm.get_or_insert(mode);
    }
}

/// The model server `args` name (else the local one that answers) and its models: the
/// egress policy is checked before it is asked anything.
pub async fn models(args: &CommonArgs) -> Result<(String, Vec<String>), SessionError> {
    let settings = SessionSettings::resolve(args, None)?;
    let choice = settings.server_choice();
    match &choice.base_url {
        Some(url) => {
            let url = wright_llm::normalize_base_url(url)?;
            // Nothing is asked of a server the code may not go to, not even its models.
            settings.check_egress(&url)?;
            let mut config = settings.client_config();
            config.base_url = url.clone();
            config.api_key = choice.api_key.clone();
            let client = wright_llm::Client::new(config)?;
            Ok((url, client.list_models().await?))
        }
        None => {
            let found = wright_llm::discover_local_server("127.0.0.1").await?;
            Ok((found.base_url, found.models))
        }
    }
}

/// The sandbox a conversation with `args` gets on a repository whose own configuration
/// is read from `source`.
pub fn sandbox(
    args: &CommonArgs,
    source: &crate::repo_config::RepoConfigSource,
) -> Result<crate::SandboxChoice, SessionError> {
    Ok(SessionSettings::resolve(args, Some(source))?.sandbox_choice()?)
}
