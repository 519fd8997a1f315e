//! The sandboxed tools of one conversation: its terminal, file editor and the others,
//! built on its working copy inside its sandbox, with what they need to be cleaned up.
//! `Tools::build` starts the sandbox's check without waiting for it; `Tools::settle`
//! starts the shell, which waits for the check's yes — nothing starts in the sandbox
//! before it (the sandbox waits for it), and the first model request does not wait.

use crate::sandbox_setup::SandboxSetup;
use crate::session::SandboxChoice;
use crate::working_copy::WorkingCopy;
use anyhow::Result;
use std::sync::Arc;
use wright_config::Settings;
use wright_tools::FileEditorTool;
use wright_tools::FinishTool;
use wright_tools::GlobTool;
use wright_tools::GrepTool;
use wright_tools::TaskTrackerTool;
use wright_tools::TerminalTool;
use wright_tools::ThinkTool;
use wright_tools::Tool;
use wright_tools::ToolName;
use wright_tools::Toolbox;
use wright_tools::Workspace;

/// The sandboxed tools of one conversation, with what they need to be cleaned up.
pub struct Tools {
    pub toolbox: Toolbox,
    pub terminal: Arc<TerminalTool>,
    pub editor: Arc<FileEditorTool>,
    pub workspace: Workspace,
    /// The clone's checkout under way (before `setup`: dropped, it waits for the
    /// checkout, which runs in `setup`'s sandbox).
    pub checkout: Option<crate::checkout::CheckingOut>,
    pub setup: SandboxSetup,
    /// The shell coming up (started by `settle`).
    pub warm_up: Option<tokio::task::JoinHandle<()>>,
    /// The secrets the shell was given, and their masker.
    pub secrets: crate::secrets::Grants,
    /// The MCP servers whose tools are in the toolbox.
    pub mcp: crate::mcp::McpServers,
}

/// When the working copy is made ready: a new conversation checks its clone out once
/// the sandbox exists; a resumed one finds it as it was.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    Start,
    Reopen,
}

impl Tools {
    pub fn build(
        sandbox: &SandboxChoice,
        working_copy: &WorkingCopy,
        id: &str,
        readiness: Readiness,
        names: &[ToolName],
        skills: &[wright_protocol::SkillEntry],
    ) -> Result<Self> {
        if readiness == Readiness::Reopen {
            working_copy.begin_resumed_run()?;
        }
        let placement = working_copy.placement();
        let mut options = sandbox.options.clone();
        // The dev servers the browser opens listen on the sandbox's own loopback.
        options.local_servers = names.contains(&ToolName::Browser);
        // The sandbox's check runs while the rest is made ready (and, for a new
        // conversation, while the model server is asked what it is): `settle` waits for it.
        let mut setup = SandboxSetup::start(
            sandbox.mode,
            options,
            &placement,
            id,
            &sandbox.launcher,
            &sandbox.secrets,
        )?;
        let checkout = match readiness {
            Readiness::Start => working_copy.start(&mut setup)?,
            Readiness::Reopen => None,
        };
        // Opened once it exists, and never through a link the agent made; what the sandbox
        // keeps read-only, wright's own tools leave alone too (the same list).
        let workspace = working_copy
            .open_workspace()?
            .protecting(&placement.protected)
            .map_err(|err| anyhow::anyhow!("{err}"))?;
        let mut terminal = TerminalTool::new(
            workspace.clone(),
            setup.shell_env().to_vec(),
            setup.sandbox.clone(),
            setup.scratch()?,
        )
        .with_masker(sandbox.secrets.masker());
        if let Some(journal) = setup.network_journal() {
            terminal = terminal.with_network_journal(journal);
        }
        let terminal = Arc::new(terminal);
        let editor = Arc::new(FileEditorTool::new(workspace.clone()));
        let web = setup.web_allow_list();
        let mut tools: Vec<Arc<dyn Tool>> = names
            .iter()
            .filter_map(|name| -> Option<Arc<dyn Tool>> {
                Some(match name {
                    ToolName::Terminal => terminal.clone(),
                    ToolName::FileEditor => editor.clone(),
                    ToolName::Grep => Arc::new(GrepTool::new(workspace.clone())),
                    ToolName::Glob => Arc::new(GlobTool::new(workspace.clone())),
                    ToolName::TaskTracker => Arc::new(TaskTrackerTool::new()),
                    ToolName::Think => Arc::new(ThinkTool),
                    ToolName::Finish => Arc::new(FinishTool),
                    // Only where the run has the network: else the model never sees it.
                    ToolName::Fetch => Arc::new(wright_tools::FetchTool::new(web.clone()?)),
                    ToolName::Browser => Arc::new(wright_tools::BrowserTool::new(
                        terminal.clone(),
                        setup.env.clone(),
                        workspace.root().to_path_buf(),
                        crate::screenshots::dir(&crate::stored::conversation_dir(id)),
                    )),
                })
            })
            .collect();
        // The skills listed for the model to read come with the tool that reads them.
        if let Some(skill) = wright_tools::SkillTool::over(skills) {
            tools.push(Arc::new(skill));
        }
        Ok(Self {
            toolbox: Toolbox::new(tools),
            terminal,
            editor,
            workspace,
            checkout,
            setup,
            warm_up: None,
            secrets: sandbox.secrets.clone(),
            mcp: crate::mcp::McpServers::default(),
        })
    }

    /// Starts the shell, which comes up while the first request is prepared and sent, once
    /// the sandbox's check has said yes: the check is not awaited here (the sandbox itself
    /// waits for it before anything starts in it, and its refusal ends the run at the
    /// first command), so the first request does not wait for it. A check that has
    /// already refused is the error at once.
    pub fn settle(&mut self) -> Result<()> {
        if let Some(Err(err)) = self.setup.sandbox.verdict_if_in() {
            self.setup.settle_check()?;
            return Err(err.into());
        }
        if self.warm_up.is_none() && self.toolbox.names().contains(&"terminal") {
            let warm = self.terminal.clone();
            self.warm_up = Some(tokio::spawn(async move {
                let _ = warm.warm_up().await;
            }));
        }
        Ok(())
    }

    /// Starts the MCP servers of `config` (stdio ones in this sandbox, in the working
    /// copy) and adds their tools after the others; `logged`: a resumed conversation's
    /// schemas, which fix the tools.
    pub async fn add_mcp(
        &mut self,
        config: &crate::mcp::McpConfig,
        settings: &Settings,
        repo: &std::path::Path,
        logged: Option<&[serde_json::Value]>,
        front: &dyn crate::Front,
    ) {
        if config.servers.is_empty() && config.refused.is_empty() && config.skipped.is_empty() {
            return;
        }
        let place = crate::mcp::Place {
            sandbox: &self.setup.sandbox,
            env: &self.setup.env,
            cwd: self.workspace.root(),
            settings,
            repo,
        };
        let servers = crate::mcp::McpServers::start(config, &place, logged, front).await;
        self.toolbox = self.toolbox.with(servers.tools.clone());
        self.mcp = servers;
    }
}

/// Stops the run when the agent's files outgrow the disk limit.
struct DiskGuard(wright_sandbox::DiskUse);

impl wright_core::StepGuard for DiskGuard {
    fn stop_reason(&self) -> Option<wright_protocol::StopReason> {
        self.0
            .exceeded()
            .map(|grew| wright_protocol::StopReason::MaxDisk {
                grew_mib: grew >> 20,
                limit_mib: self.0.limit() >> 20,
            })
    }
}

impl Tools {
    /// The guard on the disk the agent's commands fill, for one conversation; the saved
    /// outputs of its commands are bounded by the same limit.
    pub fn disk_guard(&self, max_disk_mb: Option<u64>) -> Box<dyn wright_core::StepGuard> {
        let paths = self.setup.written_paths();
        let limit = max_disk_mb.map(|mb| mb << 20).unwrap_or_else(|| {
            paths
                .first()
                .and_then(|path| wright_sandbox::DiskUse::half_the_free_space(path))
                .unwrap_or(u64::MAX)
        });
        // What wright saves of the commands' outputs counts against the same limit.
        self.terminal.scratch().bound_outputs(limit);
        // The clone's checkout is not the agent's growth: measured from after it.
        let ready = self.checkout.as_ref().map(|checkout| checkout.ready());
        Box::new(DiskGuard(wright_sandbox::DiskUse::start_after(
            paths, limit, ready,
        )))
    }

    /// What a conversation of these tools waits for before anything of its first reply
    /// runs: the clone's checkout, when it is under way (see `crate::checkout`).
    pub fn workspace_ready(&self) -> Option<wright_sandbox::Verdict> {
        self.checkout.as_ref().map(|checkout| checkout.ready())
    }

    /// The reviewer of the working copy's changes, when it is a git repository.
    pub fn inspector(&self, working_copy: &WorkingCopy) -> Option<crate::inspect::GitInspector> {
        let (root, base) = working_copy.changes_base()?;
        Some(crate::inspect::GitInspector {
            root,
            base,
            sandbox: self.setup.sandbox.clone(),
            env: self.setup.env.clone(),
        })
    }
}
