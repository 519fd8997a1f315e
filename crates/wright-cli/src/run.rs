//! `wright run TASK`: a new conversation on the workspace (in a clone on a new branch when
//! it is a git repository), run to its end.

use crate::connect::context_window;
use crate::inspect::GitInspector;
use crate::session::drive;
use crate::session::print_header;
use crate::session::CommonArgs;
use crate::session::Tools;
use crate::tool_mode;
use crate::working_copy::WorkingCopy;
use anyhow::Context;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use wright_core::conversations_dir;
use wright_core::new_conversation_id;
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
    // Not dumpable: the model's commands (no capabilities) cannot read this process's
    // memory or /proc/PID/environ, where the API key may be.
    let _ = nix::sys::prctl::set_dumpable(false);
    let common = &args.common;
    common.sandbox_mode()?;
    let requested = args.workspace.canonicalize().with_context(|| {
        format!(
            "the workspace {} must be an existing directory",
            args.workspace.display()
        )
    })?;
    let client = common.client(None).await?;
    let (tool_calling, tool_calling_why) = tool_mode::decide(&common.tool_calling, &client).await?;
    let window = context_window(&client, common.context_window).await;

    let id = new_conversation_id();
    let conversation_dir = conversations_dir().join(&id);
    std::fs::create_dir_all(&conversation_dir)
        .with_context(|| format!("cannot create {}", conversation_dir.display()))?;
    let working_copy = WorkingCopy::prepare(
        &requested,
        &conversation_dir,
        &id,
        args.in_place,
        args.force,
    )?;
    let tools = Tools::build(common, &working_copy, &id)?;
    let root = tools.workspace.root().display().to_string();
    let mut conversation = Conversation::create(
        &id,
        &conversation_dir.join("events.jsonl"),
        &root,
        client.clone(),
        tools.toolbox.clone(),
        system_prompt(&root),
        tool_calling,
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
        let lines = vec![
            format!("tool calls {tool_calling_why}"),
            format!("context {}", window.description),
        ];
        print_header(
            &id,
            &client,
            tools.workspace.root(),
            &working_copy,
            &lines,
            &tools.setup,
        );
        if let Some(warning) = &window.warning {
            eprintln!("warning: {warning}\n");
        }
    }
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
