//! `wright run TASK`: a new conversation on the workspace (in a clone on a new branch when
//! it is a git repository), run to its end.

use crate::session::configure;
use crate::session::drive;
use crate::session::print_header;
use crate::session::CommonArgs;
use crate::session::NewSession;
use crate::session::WorkspaceArgs;
use anyhow::Result;
use clap::Args;
use wright_core::system_prompt;
use wright_core::Conversation;
use wright_core::Opening;

#[derive(Args)]
pub struct RunArgs {
    /// What to do, in plain words, in any language.
    task: String,
    /// Before the first step, run the test command the workspace map found (in the
    /// sandbox, at most 60 s) and show the model its result: auto (for models whose name
    /// says 8B or less), on, off.
    #[arg(long, value_name = "auto|on|off", value_parser = ["auto", "on", "off"])]
    first_look: Option<String>,
    #[command(flatten)]
    place: WorkspaceArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub async fn run(args: RunArgs) -> Result<u8> {
    let common = &args.common;
    common.check()?;
    crate::settings::check_text(
        &args.task,
        "task",
        "wright run \"the test test_x fails, fix it\"",
    )?;
    let session =
        NewSession::prepare(common, &args.place, crate::session::Replies::AlwaysCalls).await?;
    let NewSession {
        settings,
        client,
        tool_calling,
        window,
        id,
        conversation_dir,
        working_copy,
        tools,
        ..
    } = &session;
    let root = tools.workspace.root().display().to_string();
    // Before the agent's first step, from what the user gave it.
    let map = working_copy.workspace_map(settings.values.map, &tools.workspace);
    let mut conversation = Conversation::create(
        id,
        &conversation_dir.join("events.jsonl"),
        &root,
        client.clone(),
        tools.toolbox.clone(),
        Opening {
            system_prompt: system_prompt(&root),
            workspace_map: map,
        },
        *tool_calling,
    )?;
    configure(
        &mut conversation,
        window.tokens,
        settings,
        &tools.inspector(working_copy),
    );
    conversation.add_step_guard(tools.disk_guard(settings.values.max_disk));
    conversation.set_workspace(tools.workspace.clone());
    // The files of each step, for `wright fork --at`.
    if let Some(keeper) =
        crate::working_copy::steps::keeper(working_copy, &tools.setup, conversation_dir)
    {
        conversation.set_step_snapshot(keeper);
    }
    let first_look = args
        .first_look
        .as_deref()
        .unwrap_or(&settings.values.first_look);
    if let Some(command) = crate::first_look::command(
        first_look,
        &client.config().model,
        working_copy,
        &tools.workspace,
    ) {
        conversation.look_first(command);
    }
    // Not a chat: only `finish` says the task is done.
    conversation.set_require_finish(true);
    if !settings.json {
        print_header(
            id,
            client,
            tools.workspace.root(),
            working_copy,
            &session.model_lines(),
            &tools.setup,
        );
        if let Some(warning) = &window.warning {
            tell!("warning: {warning}\n");
        }
    }
    let NewSession {
        settings,
        working_copy,
        tools,
        locks,
        ..
    } = session;
    drive(
        conversation,
        Some(&args.task),
        &settings,
        tools,
        &working_copy,
        &args.task,
        locks,
    )
    .await
}
