//! `wright resume ID [MESSAGE]`: continues a stopped or crashed conversation where its log
//! ends, in the same workspace (its clone, when it has one), with the same model unless
//! told otherwise.

use crate::connect::context_window;
use crate::history_cmds::conversation_dir;
use crate::session::configure;
use crate::session::drive;
use crate::session::print_header;
use crate::session::CommonArgs;
use crate::session::Tools;
use crate::settings::SessionSettings;
use crate::working_copy::WorkingCopy;
use anyhow::bail;
use anyhow::Result;
use clap::Args;
use wright_core::Conversation;
use wright_protocol::count;
use wright_protocol::read_log;
use wright_protocol::AgentState;
use wright_protocol::EventBody;

#[derive(Args)]
pub struct ResumeArgs {
    /// The conversation (an id, or a unique prefix of one).
    pub id: String,
    /// What to tell the agent; needed to go on after it finished.
    pub message: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

pub async fn resume(args: ResumeArgs) -> Result<u8> {
    args.common.check()?;
    if let Some(message) = &args.message {
        crate::settings::check_text(
            message,
            "message",
            &format!("wright resume {} \"now run the tests\"", args.id),
        )?;
    }
    let _ = nix::sys::prctl::set_dumpable(false);
    let dir = conversation_dir(&args.id)?;
    let id = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Before the log is read: another process may be writing it.
    let mut locks = vec![wright_core::RunLock::conversation(&dir, &id)?];
    crate::sandbox_setup::reap_dead_runs(&id);
    let log_path = dir.join("events.jsonl");
    let logged = read_log(&log_path)?;
    let Some(start) = logged.events.iter().find_map(|e| match &e.body {
        EventBody::Start(start) => Some(start.clone()),
        _ => None,
    }) else {
        bail!(
            "{} has no start event; it cannot be resumed",
            log_path.display()
        );
    };
    // The record, not the log, says where the conversation works; checked before any
    // server is asked anything.
    let working_copy = WorkingCopy::reopen(&dir, std::path::Path::new(&start.workspace))?;
    if let WorkingCopy::InPlace(in_place) = &working_copy {
        locks.push(wright_core::RunLock::checkout(in_place.repo.top())?);
    }
    let settings = SessionSettings::resolve(&args.common, Some(&working_copy.config_source()))?;
    let mut client = settings
        .client(
            Some((&start.base_url, &start.model)),
            crate::hints::Front::CommandLine,
        )
        .await?;
    let window = context_window(&mut client, settings.values.context_window).await;
    let tools = Tools::build(
        &settings,
        &working_copy,
        &start.conversation,
        crate::session::Readiness::Reopen,
        &crate::session::logged_tools(&start),
    )?;
    // A resumed conversation is a run: its replies are calls, held to them as at its start.
    let asking = crate::constrain_mode::Asking {
        client: &client,
        server: &window.server,
        kind: window.kind,
        tool_calling: start.tool_calling,
    };
    let constraint = crate::constrain_mode::decide(&settings.values.constrain, &asking).await?;
    crate::constrain_mode::apply(&mut client, constraint.constraint, &tools.toolbox.schemas());
    let (mut conversation, notes) =
        Conversation::resume(&log_path, client.clone(), tools.toolbox.clone())?;
    if notes.last_state == Some(AgentState::Finished) && args.message.is_none() {
        bail!(
            "conversation {} has finished; give a message to go on: wright resume {} \"what next\"",
            start.conversation,
            args.id
        );
    }
    configure(
        &mut conversation,
        window.tokens,
        &settings,
        &tools.inspector(&working_copy),
    );
    conversation.add_step_guard(tools.disk_guard(settings.values.max_disk));
    conversation.set_workspace(tools.workspace.clone());
    // The files of each step, for `wright fork --at`.
    if let Some(keeper) = crate::working_copy::steps::keeper(&working_copy, &tools.setup, &dir) {
        conversation.set_step_snapshot(keeper);
    }
    // Not a chat: only `finish` says the task is done.
    conversation.set_require_finish(true);
    if !settings.json {
        let names = crate::session::logged_tools(&start);
        let list = names
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let mut lines = vec![
            format!("constraint {}", constraint.why),
            format!("context {}", window.description),
            format!("tools {list} (as the conversation started; --tools applies to new ones)"),
        ];
        if let Some(torn) = &notes.torn {
            lines.push(format!(
                "the log ended in a torn line ({} at line {}): cut off, the events before it are intact",
                count(torn.bytes as u64, "byte"),
                torn.line
            ));
        }
        for tool in &notes.interrupted {
            lines.push(format!(
                "a {tool} call was cut off by the stop: the model is told, it is not run again"
            ));
        }
        print_header(
            &start.conversation,
            &client,
            tools.workspace.root(),
            &working_copy,
            &lines,
            &tools.setup,
        );
    }
    let title = args
        .message
        .clone()
        .unwrap_or_else(|| "resumed".to_string());
    drive(
        conversation,
        args.message.as_deref(),
        &settings,
        tools,
        &working_copy,
        &title,
        locks,
    )
    .await
}
