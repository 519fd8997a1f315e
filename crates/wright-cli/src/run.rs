//! `wright run TASK`: a new conversation on the workspace (in a clone on a new branch when
//! it is a git repository), run to its end.

use crate::drive::drive;
use crate::drive::print_header;
use crate::drive::CommonArgs;
use crate::drive::WorkspaceArgs;
use anyhow::Result;
use clap::Args;
use wright_session::settings::review::Review;

#[derive(Args)]
pub struct RunArgs {
    /// What to do, in plain words, in any language.
    task: String,
    /// Before `finish` is taken, a second agent on this profile reviews the change in a
    /// clone of its own, seeing only the task, the repository and the diff; its findings
    /// go back to the agent (`review.rounds` times, default once).
    #[arg(long, value_name = "PROFILE")]
    review: Option<String>,
    /// Run the external agent `[agents.NAME]` of your configuration (one that speaks the
    /// Agent Client Protocol) instead of wright's own loop: in the sandbox, on the
    /// clone, its requests served by wright's tools, its updates in the log.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["review", "parallel"])]
    agent: Option<String>,
    #[command(flatten)]
    place: WorkspaceArgs,
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    parallel: crate::parallel::ParallelArgs,
    #[command(flatten)]
    net: crate::settings::NetArgs,
}

pub async fn run(mut args: RunArgs) -> Result<u8> {
    args.common.allow_hosts = std::mem::take(&mut args.net.allow_hosts);
    let common = &args.common;
    common.check()?;
    crate::settings::check_text(
        &args.task,
        "task",
        "wright run \"the test test_x fails, fix it\"",
    )?;
    if let Some(n) = args.parallel.parallel {
        let mut run_words = Vec::new();
        if let Some(review) = &args.review {
            run_words.extend(["--review".to_string(), review.clone()]);
        }
        let asked = crate::parallel::Asked {
            task: &args.task,
            place: &args.place,
            common,
            run_words,
        };
        return crate::parallel::run(n, &args.parallel, asked).await;
    }
    if let Some(name) = &args.agent {
        return crate::drive::run_external(name, &args.task, &args.place, args.common).await;
    }
    let (settings, mut session, profile_lines) =
        crate::drive::prepare(common, &args.place, wright_session::Replies::AlwaysCalls).await?;
    session.group = args.parallel.group.clone();
    // The reviewer, if one is asked for: given to the conversation the session starts.
    session.review = Review::choose(&settings, args.review.as_deref()).await?;
    // The map is made before the agent's first step, from what the user gave it; the
    // session gives the conversation its fallback profiles.
    let mut conversation = session.start_conversation(session.workspace_map())?;
    session.begin_with_first_look(&mut conversation);
    let review = session.review.as_ref().map(|review| review.line.clone());
    if !settings.json {
        print_header(
            &session.id,
            &session.client,
            session.tools.workspace.root(),
            &session.working_copy,
            &[crate::drive::model_lines(&session), profile_lines].concat(),
            &session.tools.setup,
        )?;
        if let Some(line) = &review {
            tell!("  {line}");
        }
        if let Some(warning) = &session.window.warning {
            tell!("warning: {warning}\n");
        }
        if let Some(warning) = session.teaching.budget_warning(session.window.tokens) {
            tell!("warning: {warning}\n");
        }
    }
    drive(
        session,
        conversation,
        Some(&args.task),
        &settings,
        &args.task,
    )
    .await
}
