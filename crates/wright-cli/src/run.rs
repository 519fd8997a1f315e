//! `wright run TASK`: a new conversation on the workspace (in a clone on a new branch when
//! it is a git repository), run to its end.

use crate::inspect::GitInspector;
use crate::session::drive;
use crate::session::print_header;
use crate::session::CommonArgs;
use crate::session::NewSession;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use wright_core::system_prompt;
use wright_core::Conversation;

#[derive(Args)]
pub struct RunArgs {
    /// What to do, in plain words, in any language.
    task: String,
    /// The repository to work in.
    #[arg(short = 'C', long, default_value = ".")]
    workspace: PathBuf,
    /// Work directly in the workspace instead of a clone on a new branch.
    #[arg(long)]
    in_place: bool,
    /// With --in-place: work even if the tree has uncommitted changes.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    common: CommonArgs,
}

pub async fn run(args: RunArgs) -> Result<u8> {
    let common = &args.common;
    let session = NewSession::prepare(common, &args.workspace, args.in_place, args.force).await?;
    let NewSession {
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
    let mut conversation = Conversation::create(
        id,
        &conversation_dir.join("events.jsonl"),
        &root,
        client.clone(),
        tools.toolbox.clone(),
        system_prompt(&root),
        *tool_calling,
    )?;
    if let Some(tokens) = window.tokens {
        conversation.set_context_window(tokens);
    }
    conversation.set_condense_at(common.condense_at);
    if let Some(inspector) = GitInspector::new(
        tools.workspace.root().to_path_buf(),
        tools.setup.sandbox.clone(),
        tools.setup.env.clone(),
    ) {
        conversation.set_inspector(Box::new(inspector));
    }
    if !common.json {
        print_header(
            id,
            client,
            tools.workspace.root(),
            working_copy,
            &session.model_lines(),
            &tools.setup,
        );
        if let Some(warning) = &window.warning {
            eprintln!("warning: {warning}\n");
        }
    }
    let NewSession {
        working_copy,
        tools,
        ..
    } = session;
    drive(
        conversation,
        Some(&args.task),
        common,
        tools,
        &working_copy,
        &args.task,
    )
    .await
}
