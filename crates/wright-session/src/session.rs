//! A session: one conversation's model (connected, its window, how it calls tools), its
//! working copy and its sandboxed tools, prepared in one call that every front end makes
//! (`Session::locate`, then `Session::prepare`). Driving and finishing it are in `end`.
//!
//! Why a crate of its own between wright-core and the front ends: preparing a session
//! needs the concrete sandbox (Landlock, Docker, the hardened git runner), the
//! configuration and the working copy; wright-core knows tools, models and the sandbox
//! only by traits, and must stay that way to be tested and embedded without them.

use crate::front::Front;
use crate::launcher::Launcher;
use crate::sandbox_setup::SandboxOptions;
use crate::tools::Readiness;
use crate::tools::Tools;
use crate::working_copy::StartPoint;
use crate::working_copy::UncommittedChoice;
use crate::working_copy::WorkingCopy;
use anyhow::Result;
use wright_config::assist::Piece;
use wright_config::Settings;
use wright_core::Conversation;
use wright_llm::Client;
use wright_sandbox::SandboxMode;
use wright_strategies::Help;
use wright_tools::ToolName;
use wright_tools::ToolSet;

/// How a session's commands are confined.
#[derive(Debug, Clone)]
pub struct SandboxChoice {
    pub mode: SandboxMode,
    pub options: SandboxOptions,
    /// The program confined commands start through.
    pub launcher: Launcher,
    /// The secrets the terminal's shell is given.
    pub secrets: crate::secrets::Grants,
    /// Whether the repository's hooks run when the user has not allowed them for good.
    pub repo_hooks: crate::hooks::RepoHooksChoice,
    /// Whether the repository's MCP servers start when the user has not allowed them for
    /// good.
    pub repo_mcp: crate::hooks::RepoHooksChoice,
}

/// Where a new conversation works, and how.
#[derive(Debug, Clone)]
pub struct Place {
    /// Work in the checkout itself instead of a clone on a new branch.
    pub in_place: bool,
    /// In place: work even if the tree has uncommitted changes.
    pub force: bool,
    /// Whether the agent gets the user's uncommitted changes (on its branch only).
    pub uncommitted: UncommittedChoice,
    /// Outside git: keep a snapshot of the directory (the diff at the end, the undo).
    pub snapshot: bool,
}

/// What a front end decided before a session is prepared: the model server it connected
/// to (its consent checks done), the settings, where and how the agent works.
pub struct Request {
    pub client: Client,
    pub settings: Settings,
    pub place: Place,
    pub sandbox: SandboxChoice,
    pub replies: Replies,
    /// The profile in use and those to go on with (none: `Profiles::default()`).
    pub profiles: crate::Profiles,
}

/// Everything a conversation on a workspace needs before its log is created: the model
/// (and how it calls tools, and its window), the working copy and the tools.
pub struct Session {
    pub settings: Settings,
    /// Whether the conversation is a run (every reply a call) or a chat.
    pub replies: Replies,
    pub client: Client,
    pub tool_calling: wright_protocol::ToolCalling,
    pub tool_calling_why: String,
    /// Which constraint holds the model's replies to tool calls, and why.
    pub constraint_why: String,
    /// The model's tools, and why those.
    pub tools_why: String,
    pub window: crate::connect::Window,
    pub id: String,
    pub conversation_dir: std::path::PathBuf,
    pub working_copy: WorkingCopy,
    pub tools: Tools,
    /// Held until the conversation's run ends: one writer per conversation (and per
    /// checkout worked in place).
    pub locks: Vec<wright_core::RunLock>,
    /// The repository's instructions and the skills (for a resumed conversation, those
    /// its log started with).
    pub teaching: crate::teach::Teaching,
    /// The user's and the repository's hooks.
    pub hooks: crate::hooks::SessionHooks,
    /// The group of conversations started together on one task (`--parallel`), logged
    /// on the start event; the front end sets it before the conversation starts.
    pub group: Option<String>,
    /// The profiles its conversations use and go on with (given to each one made).
    pub profiles: crate::Profiles,
    /// The reviewer its new conversation gets (`--review`, `review.profile`), chosen by
    /// the front end once the session is prepared.
    pub review: Option<crate::settings::review::Review>,
    /// The external agent (`[agents.NAME]`) that takes its conversation's steps instead
    /// of the model, named on the start event; the front end sets it before the
    /// conversation starts.
    pub agent: Option<String>,
}

/// What a session's replies are: in a run every reply is a tool call (`finish` included),
/// so it may be constrained to one; in a chat a reply may be words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replies {
    AlwaysCalls,
    MayBeWords,
}

impl Session {
    /// Where a conversation on `workspace` starts, once that is a directory the agent may
    /// work in; earlier runs there are settled first. The front end reads the
    /// repository's own configuration from it (`StartPoint::config_source`), then
    /// connects to the model and calls `prepare`.
    pub fn locate(workspace: &std::path::Path, front: &dyn Front) -> Result<StartPoint> {
        use anyhow::Context;
        // Not dumpable: the model's commands (no capabilities) cannot read this process's
        // memory or /proc/PID/environ, where the API key may be.
        let _ = nix::sys::prctl::set_dumpable(false);
        let requested = workspace.canonicalize().with_context(|| {
            format!(
                "the workspace {} must be an existing directory",
                workspace.display()
            )
        })?;
        refuse_workspace_holding_wright(&requested)?;
        Ok(StartPoint::find(&requested, front))
    }

    /// This session once its sandbox's check has said yes, for a front end about to say
    /// what the sandbox enforces; its refusal is the error, and the conversation, started
    /// by nothing yet, is removed as a failed `prepare` leaves it.
    pub fn checked(self) -> Result<Self> {
        if let Err(err) = self.tools.setup.settle_check() {
            let (dir, id) = (self.conversation_dir.clone(), self.id.clone());
            drop(self);
            crate::working_copy::remove_unstarted(&dir, &id);
            return Err(err);
        }
        Ok(self)
    }

    /// Prepares a new conversation at `start`: the model's window, tool-calling mode and
    /// constraint, the conversation's directory and lock, the working copy and the tools.
    /// Nothing is left behind when it fails.
    pub async fn prepare(start: StartPoint, request: Request, front: &dyn Front) -> Result<Self> {
        Self::prepare_as(wright_core::new_conversation_id(), start, request, front).await
    }

    /// `prepare` with the conversation's id chosen by the caller (a server names a
    /// conversation when it is asked for, before it is prepared): an id already in use
    /// is refused.
    pub async fn prepare_as(
        id: String,
        start: StartPoint,
        request: Request,
        front: &dyn Front,
    ) -> Result<Self> {
        use anyhow::Context;
        let Request {
            mut client,
            settings,
            place,
            sandbox,
            replies,
            profiles,
        } = request;
        let in_place = place.in_place;
        let mut locks = Vec::new();
        if in_place {
            if let Some(repo) = &start.repo {
                locks.push(wright_core::RunLock::checkout(repo.top())?);
            }
        }
        if !crate::stored::is_plain_id(&id) {
            anyhow::bail!("a conversation's id is letters, digits and dashes, not {id:?}");
        }
        // Refused before anything is made: nothing to leave behind.
        let (tool_names, tools_why) = choose_tools(&settings.tools, &client.config().model)?;
        let conversation_dir = wright_core::conversations_dir().join(&id);
        if conversation_dir.symlink_metadata().is_ok() {
            anyhow::bail!("a conversation {id} exists already");
        }
        std::fs::create_dir_all(&conversation_dir)
            .with_context(|| format!("cannot create {}", conversation_dir.display()))?;
        locks.push(wright_core::RunLock::conversation(&conversation_dir, &id)?);
        let options = crate::working_copy::Options {
            in_place,
            force: place.force,
            uncommitted: place.uncommitted,
            snapshot: place.snapshot,
        };
        // The model server is asked what it is while the working copy is made and the
        // sandbox checked (a clone checked out in the sandbox takes tens of
        // milliseconds): on a task of its own, which takes the client and gives it back.
        let asked = settings.clone();
        let mut probing = tokio::spawn(async move {
            let probed = crate::connect::ask_the_server(&mut client, &asked, replies).await;
            (client, probed)
        });
        // Blocking work (git, the file system): the probe goes on meanwhile.
        let prepared = blocking(|| {
            // What dead runs left goes before this run's sandbox is made.
            crate::sandbox_setup::reap_dead_runs(&id);
            WorkingCopy::prepare(start, &conversation_dir, &id, options, front).and_then(
                |working_copy| {
                    // Read from the user's repository at the start commit, before the agent
                    // has a shell.
                    let source = working_copy.config_source();
                    let sub = working_copy.sub_directory();
                    let (tool_names, tools_why) = crate::web_work::with_browser(
                        (tool_names, tools_why),
                        &settings.tools,
                        &source,
                        &sub,
                        &sandbox,
                        working_copy.placement().users_tree,
                    );
                    let files = crate::repo_config::RepoFiles::list(
                        &source,
                        &[
                            crate::teach::Teaching::paths(&sub),
                            crate::hooks::paths(),
                            crate::mcp::paths(),
                        ]
                        .concat(),
                    );
                    let teaching =
                        crate::teach::Teaching::read(&files, &sub, user_skills_dir().as_deref());
                    let hooks =
                        crate::hooks::SessionHooks::load(&files, sandbox.repo_hooks, front)?;
                    let mcp = crate::mcp::McpConfig::load(&files, sandbox.repo_mcp, front)?;
                    let key = source.key().to_path_buf();
                    let tools = Tools::build(
                        &sandbox,
                        &working_copy,
                        &id,
                        Readiness::Start,
                        &tool_names,
                        &teaching.skills,
                    )?;
                    Ok((working_copy, tools, teaching, hooks, (mcp, key), tools_why))
                },
            )
        });
        let (working_copy, mut tools, teaching, hooks, (mcp, key), tools_why) = match prepared {
            Ok(prepared) => prepared,
            Err(err) => {
                probing.abort();
                // Nothing ran: leave no half-made conversation (or clone) behind.
                crate::working_copy::remove_unstarted(&conversation_dir, &id);
                return Err(err);
            }
        };
        let (mut client, probed) = match (&mut probing).await {
            Ok(done) => done,
            Err(err) => {
                drop((tools, working_copy, locks));
                crate::working_copy::remove_unstarted(&conversation_dir, &id);
                return Err(anyhow::anyhow!(
                    "asking the model server what it is stopped: {err}"
                ));
            }
        };
        // The sandbox's check may still run: nothing starts in the sandbox before its yes,
        // and the first request does not wait for it.
        let probed = probed.and_then(|probed| tools.settle().map(|()| probed));
        let crate::connect::Probed {
            window,
            tool_calling,
            tool_calling_why,
            constraint,
        } = match probed {
            Ok(probed) => probed,
            Err(err) => {
                // Nothing ran in the sandbox: leave nothing behind.
                drop((tools, working_copy, locks));
                crate::working_copy::remove_unstarted(&conversation_dir, &id);
                return Err(err);
            }
        };
        // An embedded engine keeps this conversation's cache beside its log, for resume.
        client.keep_state_in(&conversation_dir);
        tools.add_mcp(&mcp, &settings, &key, None, front).await;
        // The model may state a risk where the user is asked before risky actions.
        if settings
            .confirm
            .is_some_and(|mode| mode != wright_protocol::ConfirmMode::Never)
        {
            tools.toolbox = tools.toolbox.with_stated_risk();
        }
        let fitted = crate::constrain_mode::fit_tools(
            &tools.toolbox,
            constraint.constraint,
            &client.config().model,
        );
        let tools_why = if fitted.names().len() < tools.toolbox.names().len() {
            format!(
                "{} ({tools_why}; think left out: the constraint's reasoning field is its room to think)",
                fitted.names().join(", ")
            )
        } else {
            format!("{} ({tools_why})", fitted.names().join(", "))
        };
        tools.toolbox = fitted;
        // The schema covers every tool the model may call; built once, it is the same
        // bytes in every request of the conversation.
        crate::constrain_mode::apply(&mut client, constraint.constraint, &tools.toolbox);
        Ok(Self {
            settings,
            replies,
            client,
            tool_calling,
            tool_calling_why,
            constraint_why: constraint.why,
            tools_why,
            window,
            id,
            conversation_dir,
            working_copy,
            tools,
            locks,
            teaching,
            hooks,
            group: None,
            agent: None,
            profiles,
            review: None,
        })
    }
}

/// The user's own skills: `skills/` beside their configuration file.
pub fn user_skills_dir() -> Option<std::path::PathBuf> {
    wright_config::Config::user_file().and_then(|file| file.parent().map(|dir| dir.join("skills")))
}

/// The tools a new conversation gets from the `tools` setting, and why those (for the
/// header's `tools LIST (WHY)`): `auto` is the small set for a model whose name says 8B or less (every schema
/// is prefilled at each uncached step), the full set otherwise.
pub fn choose_tools(setting: &str, model: &str) -> Result<(Vec<ToolName>, String)> {
    let set = ToolSet::parse(setting)
        .map_err(|err| anyhow::anyhow!("the tools setting (--tools, or the `tools` key): {err}"))?;
    let small = wright_llm::constrain::size_says_small(model) == Some(true);
    let names = set.resolve(small);
    let why = match (&set, small) {
        (ToolSet::Auto, true) => {
            "the small set: the model's name says 8B or less; --tools full for all"
        }
        (ToolSet::Auto, false) => "all",
        (ToolSet::Named(_), _) => "as asked",
    };
    Ok((names, why.to_string()))
}

/// The tools of a conversation being resumed: those its log started with, whatever the
/// settings say now (the tool schemas are part of the prefix every request extends).
pub fn logged_tools(start: &wright_protocol::Start) -> Vec<ToolName> {
    start
        .tools
        .iter()
        .filter_map(|schema| schema["function"]["name"].as_str())
        .filter_map(ToolName::parse)
        .collect()
}

/// A workspace the agent may write must not hold wright's own files, nor lie among them:
/// its data (conversations' logs and records, clones, what the user allowed), the user's
/// configuration, its cache, or the private directories of sandboxes (in the temp
/// directory). Otherwise the agent could write what wright later reads as its own.
fn refuse_workspace_holding_wright(workspace: &std::path::Path) -> Result<()> {
    let real = real_path;
    let data = wright_core::conversations_dir()
        .parent()
        .map(std::path::Path::to_path_buf);
    let config =
        wright_config::Config::user_file().and_then(|f| f.parent().map(|d| d.to_path_buf()));
    let cache = crate::tool_mode::cache_dir();
    let mut wright_dirs: Vec<(&str, std::path::PathBuf)> = Vec::new();
    wright_dirs.extend(data.map(|d| ("wright's data (logs, clones, what you allowed)", real(d))));
    wright_dirs.extend(config.map(|d| ("your wright configuration", real(d))));
    wright_dirs.push(("wright's cache", real(cache)));
    for (what, dir) in &wright_dirs {
        if dir.starts_with(workspace) || workspace.starts_with(dir) {
            anyhow::bail!(
                "the workspace {} {} {what} ({}), which the agent must not reach; point -C at a project directory",
                workspace.display(),
                if dir.starts_with(workspace) { "contains" } else { "is inside" },
                dir.display()
            );
        }
    }
    let temp = real(std::env::temp_dir());
    if temp.starts_with(workspace) {
        anyhow::bail!(
            "the workspace {} contains the sandboxes' private directories ({}), which the agent must not reach; point -C at a project directory",
            workspace.display(),
            temp.display()
        );
    }
    Ok(())
}

/// `path` as the directory it will be: absolute, its deepest existing ancestor resolved
/// (links included), the rest appended — so a directory that does not exist yet, reached
/// through a link, still compares with the workspace it would be in.
fn real_path(path: std::path::PathBuf) -> std::path::PathBuf {
    let absolute = std::path::absolute(&path).unwrap_or(path);
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(resolved) = existing.canonicalize() {
            return rest
                .iter()
                .rev()
                .fold(resolved, |path, name| path.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

/// Gives a conversation the help (`wright_strategies::register`) and what the session
/// knows: the window, the condensing threshold, the prices, the inspector that reviews its
/// changes before `finish`, and the masker of the granted secrets.
pub fn configure(
    conversation: &mut Conversation,
    window: Option<u64>,
    settings: &Settings,
    inspector: &Option<crate::inspect::GitInspector>,
    secrets: &crate::secrets::Grants,
) {
    wright_strategies::register(conversation);
    conversation.set_masker(secrets.masker());
    if let Some(tokens) = window {
        conversation.set_context_window(tokens);
    }
    conversation.set_condense_at(settings.condense_at);
    conversation.set_price(settings.price);
    // `auto` is on for every model (see `wright_config::assist`): no policy to ask.
    let everyone = wright_config::assist::Policy::default();
    conversation.retest(settings.assist.at_start(Piece::Retest, &everyone));
    conversation.account(settings.assist.at_start(Piece::Account, &everyone));
    conversation.stop_when_done(settings.assist.at_start(Piece::StopWhenDone, &everyone));
    if let Some(inspector) = inspector {
        conversation.set_inspector(Box::new(inspector.clone()));
    }
}

/// Runs `work`, which blocks (git, the file system), so that the tasks spawned before it
/// go on meanwhile: on a runtime of several threads this one's tasks are handed to
/// another for the time (a task just spawned waits in this thread's own slot, which no
/// other thread takes from otherwise); on a one-thread runtime it simply runs.
fn blocking<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|handle| handle.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}
