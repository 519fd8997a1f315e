//! `wright mcp list`: the MCP servers a conversation on this repository would start —
//! yours and, once allowed, the repository's — each started as a run starts it (stdio
//! servers in the sandbox, here with the repository readable and nothing of it
//! writable), its state, and its tools as the model would see them. It exits 1 when a
//! server failed to start, and never needs the model's key (it talks to no model).

use crate::settings::CommonArgs;
use crate::settings::SessionSettings;
use anyhow::Result;
use clap::Subcommand;
use std::path::PathBuf;
use wright_session::mcp::McpConfig;
use wright_session::mcp::McpServers;
use wright_session::mcp::Origin;
use wright_session::mcp::ServerState;
use wright_session::sandbox_setup::Placement;
use wright_session::sandbox_setup::SandboxSetup;

#[derive(Subcommand)]
pub enum McpCommand {
    /// Start the MCP servers a conversation here would have and list them: each one's
    /// state and its tools.
    List {
        /// The repository (or directory) whose servers to list with yours.
        #[arg(short = 'C', long, default_value = ".")]
        workspace: PathBuf,
        #[command(flatten)]
        common: Box<CommonArgs>,
    },
}

pub async fn mcp(command: McpCommand) -> Result<u8> {
    let McpCommand::List { workspace, common } = command;
    let source = crate::config_cmds::source_of(&workspace)?;
    // Listed, never asked about here. No model is talked to: a key given here keeps a
    // profile's key variable, unset in this shell, from failing the listing.
    let quiet = CommonArgs {
        json: true,
        api_key: Some(String::new()),
        ..(*common).clone()
    };
    let settings = SessionSettings::resolve(&quiet, Some(&source))?;
    let files =
        wright_session::repo_config::RepoFiles::list(&source, &wright_session::mcp::paths());
    let choice = match common.allow_repo_mcp {
        true => wright_session::RepoHooksChoice::AllowOnce,
        false => wright_session::RepoHooksChoice::Ask,
    };
    let config = McpConfig::load(&files, choice, &wright_session::Unattended)?;
    if config.servers.is_empty() && config.refused.is_empty() {
        say!("no MCP servers: put them in {} (the `mcpServers` shape), or in the repository's .wright/mcp.json or .mcp.json",
            wright_session::mcp::user_file().map_or_else(|| "~/.config/wright/mcp.json".into(), |p| p.display().to_string()));
        for skipped in &config.skipped {
            say!("not read: {skipped}");
        }
        return Ok(0);
    }
    let scratch = tempfile::tempdir()?;
    let repo = source.key().to_path_buf();
    let placement = Placement {
        writable: scratch.path().to_path_buf(),
        read_only: vec![repo.clone()],
        protected: wright_sandbox::Protected::new(),
        needs_git: false,
        users_tree: false,
    };
    let setup = SandboxSetup::new(
        settings.sandbox_mode()?,
        settings.sandbox_options(),
        &placement,
        &format!("mcp-list-{}", std::process::id()),
        &wright_session::Launcher::this_program()?,
        &wright_session::Grants::none(),
    )?;
    let place = wright_session::mcp::Place {
        sandbox: &setup.sandbox,
        env: &setup.env,
        cwd: &repo,
        settings: &settings.values,
        repo: &repo,
    };
    let servers = McpServers::start(
        &config,
        &place,
        None,
        &crate::drive::Terminal { json: false },
    )
    .await;
    print(&servers);
    servers.stop().await;
    let _ = setup.stop_leftovers();
    let failed = servers
        .status
        .iter()
        .any(|status| matches!(status.state, ServerState::Failed(_)));
    Ok(u8::from(failed))
}

fn print(servers: &McpServers) {
    for status in &servers.status {
        let whose = match status.origin {
            Origin::User => "yours",
            Origin::Repository => "the repository's",
        };
        let state = match &status.state {
            ServerState::Ready(tools) => {
                format!(
                    "ready, {}",
                    wright_protocol::count(tools.len() as u64, "tool")
                )
            }
            ServerState::Failed(why) => format!("failed: {why}"),
            ServerState::NotAllowed => {
                "not allowed: `wright allow repo-mcp` shows and allows the repository's servers"
                    .into()
            }
            ServerState::Refused(why) => format!("not reached: {why}"),
        };
        say!("{} ({whose}, {}): {state}", status.name, status.target);
        for line in status.preparation() {
            say!("  {line}");
        }
        if let ServerState::Ready(names) = &status.state {
            for name in names {
                let description = servers
                    .tools
                    .iter()
                    .find(|tool| tool.name() == name)
                    .map(|tool| {
                        tool.schema()["function"]["description"]
                            .as_str()
                            .unwrap_or("")
                            .to_string()
                    })
                    .unwrap_or_else(|| "(not offered: another tool has this name)".into());
                say!("  {name}  {description}");
            }
        }
    }
    for skipped in &servers.skipped {
        say!("not read: {skipped}");
    }
}
