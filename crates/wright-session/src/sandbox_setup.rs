//! Turning the sandbox setting into a working sandbox for one conversation: its policy, its
//! private directory (removed at the end; wright's scratch files live there, out of the
//! agent's reach), the environment its commands get (the terminal's shell alone gets the
//! granted secrets besides), and the words that say what is enforced. With `--sandbox docker`, the conversation's container
//! (removed when this is dropped, with every process in it).

use crate::launcher::Launcher;
use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use wright_sandbox::confine::Cgroup;
use wright_sandbox::confine::Policy;
use wright_sandbox::confine::Report;
use wright_sandbox::confined_environment;
use wright_sandbox::container_environment;
use wright_sandbox::docker::DockerSettings;
use wright_sandbox::egress::AllowList;
use wright_sandbox::egress::Journal;
use wright_sandbox::egress::Proxy;
use wright_sandbox::shell_environment;
use wright_sandbox::PrivateDir;
use wright_sandbox::Protected;
use wright_sandbox::Sandbox;
use wright_sandbox::SandboxMode;

pub struct SandboxSetup {
    pub sandbox: Sandbox,
    /// The scrubbed environment of wright's own commands in the sandbox (git, the review).
    pub env: Vec<(String, String)>,
    /// The terminal shell's: `env` and the granted secrets (with Docker, the secrets are
    /// the container's own, set when it is created).
    shell_env: Vec<(String, String)>,
    /// What the check said the sandbox enforces, once it has said it (`settle_check`).
    report: std::sync::OnceLock<Report>,
    /// The check of a confined sandbox while it runs, on a thread of its own: nothing
    /// starts in the sandbox before its yes (see `wright_sandbox::Verdict`).
    checking: std::sync::Mutex<Option<wright_sandbox::BackgroundCheck>>,
    private: PrivateDir,
    cgroup: Option<Cgroup>,
    max_file_bytes: u64,
    /// The directory the agent may write (its clone, or the workspace).
    writable: PathBuf,
    verbose: bool,
    /// Counts this run among the process's live ones (a server's), so that another's end
    /// does not kill its commands (see `wright_sandbox::kill_leftovers`).
    _live: wright_sandbox::LiveRun,
    /// wright's proxy for the allowed hosts, when there are some (and no `--network`).
    proxy: Option<Proxy>,
    /// What `fetch` may reach: every public host with `--network`, the allowed hosts, or
    /// nothing (no `fetch`).
    web: Option<AllowList>,
}

/// Where a conversation's commands may act, as the working copy decides it.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The one directory the agent may write (its clone, or the workspace).
    pub writable: PathBuf,
    /// Readable besides the system (a clone's shared objects, a repository's git dirs).
    pub read_only: Vec<PathBuf>,
    /// Inside `writable`, kept read-only (an in-place run's `.git`, the user's
    /// repositories in a plain directory, work-tree files the user's git config runs): by
    /// the sandbox's mounts and by wright's own in-process tools alike.
    pub protected: Protected,
    /// git must run in the sandbox (the image of `--sandbox docker` must have it).
    pub needs_git: bool,
    /// `writable` is the user's own tree (in place, or worked directly), where their
    /// programs make Unix sockets: the sandbox refuses the agent Unix sockets there.
    pub users_tree: bool,
}

impl Placement {
    pub fn writable(root: &Path) -> Self {
        Self {
            writable: root.to_path_buf(),
            read_only: Vec::new(),
            protected: Protected::new(),
            needs_git: false,
            users_tree: false,
        }
    }
}

/// The limits and permissions of the sandbox, as the settings give them.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    pub network: bool,
    /// Hosts reachable through wright's proxy with the network otherwise off.
    pub allow_hosts: Vec<String>,
    pub max_processes: u64,
    pub max_memory_mb: Option<u64>,
    pub max_file_mb: u64,
    /// `--docker-image` (default: `$WRIGHT_DOCKER_IMAGE`, else Debian's slim image).
    pub docker_image: Option<String>,
    /// `--docker-host`: the engine (default: `$DOCKER_HOST`, else this machine's socket).
    pub docker_host: Option<String>,
    /// `--docker-workspace`: bind or copy (default: by the engine's address).
    pub docker_workspace: Option<String>,
    /// The header gives the sandbox's whole description, not one short line.
    pub verbose: bool,
    /// TCP on the sandbox's own loopback (where it has a network namespace of its own),
    /// for the dev servers the `browser` tool opens: set when the tool set has it.
    pub local_servers: bool,
}

impl SandboxOptions {
    /// What the settings say (`verbose`: the header's whole description of the sandbox).
    pub fn of(settings: &wright_config::Settings, verbose: bool) -> Self {
        Self {
            network: settings.network,
            allow_hosts: settings.allow_hosts.clone(),
            max_processes: settings.max_processes,
            max_memory_mb: settings.max_memory,
            max_file_mb: settings.max_file_size,
            docker_image: settings.docker_image.clone(),
            docker_host: settings.docker_host.clone(),
            docker_workspace: settings.docker_workspace.clone(),
            verbose,
            local_servers: false,
        }
    }

    /// Whether the agent has the web (and so the `fetch` tool): `--network`, or hosts
    /// allowed through wright's proxy.
    pub fn has_web(&self) -> bool {
        self.network || !self.allow_hosts.is_empty()
    }
}

impl SandboxSetup {
    /// A sandbox for wright's own git work between clones (a fork's files, a clone made
    /// again from the git store): `writable` the clone written, `read_only` where its
    /// objects come from, no secrets, git allowed.
    pub(crate) fn for_git(
        choice: &crate::SandboxChoice,
        writable: std::path::PathBuf,
        read_only: Vec<std::path::PathBuf>,
        name: &str,
    ) -> Result<Self> {
        let placement = Placement {
            writable,
            read_only,
            protected: wright_sandbox::Protected::new(),
            needs_git: true,
            users_tree: false,
        };
        Self::new(
            choice.mode,
            choice.options.clone(),
            &placement,
            name,
            &choice.launcher,
            &crate::Grants::none(),
        )
    }

    /// The sandbox, checked: it works here, or this is the error saying why (fail closed).
    pub fn new(
        mode: SandboxMode,
        options: SandboxOptions,
        placement: &Placement,
        conversation: &str,
        launcher: &Launcher,
        secrets: &crate::secrets::Grants,
    ) -> Result<Self> {
        let setup = Self::start(mode, options, placement, conversation, launcher, secrets)?;
        setup.settle_check()?;
        Ok(setup)
    }

    /// Waits for the verdict of the sandbox's check, started by `start`: the report of
    /// what it enforces, or the error saying why it cannot work here (the cgroup made for
    /// it is then removed). Nothing starts in the sandbox before the check has said yes
    /// (the sandbox itself waits for it), so this is needed only where its words are (the
    /// header) or where a refusal must end things at once.
    pub fn settle_check(&self) -> Result<()> {
        let checking = self
            .checking
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        let Some(checking) = checking else {
            return Ok(());
        };
        match checking.finish() {
            Ok(report) => {
                let _ = self.report.set(report);
                Ok(())
            }
            Err(err) => {
                if let Some(cgroup) = &self.cgroup {
                    cgroup.remove();
                }
                Err(err.into())
            }
        }
    }

    /// The sandbox with its check started and not awaited, so that its launcher runs
    /// while the caller does other work; whatever starts in the sandbox waits for its yes
    /// (see `wright_sandbox::Verdict`), and `settle_check` waits for its words.
    pub fn start(
        mode: SandboxMode,
        options: SandboxOptions,
        placement: &Placement,
        conversation: &str,
        launcher: &Launcher,
        secrets: &crate::secrets::Grants,
    ) -> Result<Self> {
        if !placement.protected.is_empty() && mode == SandboxMode::Landlock {
            let listed: Vec<String> = placement
                .protected
                .paths()
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            anyhow::bail!(
                "the agent must not write {} (the repository's .git and what your git configuration runs with --in-place, or your own repositories in the workspace), and --sandbox landlock cannot keep them read-only (Landlock only adds rights; it takes a mount namespace or Docker), so the agent could plant hooks that run on your next git command; use --sandbox auto or docker, or work in a clone (drop --in-place)",
                listed.join(", ")
            );
        }
        let allow = allow_list(mode, &options)?;
        let web = if options.network {
            Some(AllowList::any_public())
        } else {
            allow.clone()
        };
        let private = PrivateDir::create(&std::env::temp_dir(), conversation)
            .context("cannot create the conversation's private directory")?;
        let max_file_bytes = options.max_file_mb << 20;
        if mode == SandboxMode::None {
            let env = shell_environment(std::env::vars());
            return Ok(Self {
                sandbox: Sandbox::unconfined(),
                shell_env: secrets.add_to(&env)?,
                env,
                report: std::sync::OnceLock::new(),
                checking: std::sync::Mutex::new(None),
                private,
                cgroup: None,
                max_file_bytes,
                writable: placement.writable.clone(),
                verbose: options.verbose,
                _live: wright_sandbox::LiveRun::start(),
                proxy: None,
                web,
            });
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let mut policy = Policy::for_workspace(&placement.writable, &private, home.as_deref());
        policy.read_only.extend(placement.read_only.iter().cloned());
        policy.protected = placement.protected.paths();
        policy.users_tree = placement.users_tree;
        policy.network = options.network;
        policy.local_tcp = options.local_servers;
        let proxy = match allow {
            Some(allow) => {
                // Beside tmp, home and out, never bound into the sandbox.
                let path = private.root().join("proxy.sock");
                let proxy = Proxy::start(&path, allow).with_context(|| {
                    format!("cannot start wright's network proxy at {}", path.display())
                })?;
                policy.proxy = Some(path);
                Some(proxy)
            }
            None => None,
        };
        policy.max_processes = options.max_processes;
        policy.max_file_bytes = max_file_bytes;
        let max_memory = options
            .max_memory_mb
            .map_or_else(wright_sandbox::confine::default_memory_limit, |mb| mb << 20);
        policy.max_memory_bytes = max_memory;
        // Docker puts the container in a cgroup of its own, with these limits.
        let cgroup = (mode != SandboxMode::Docker)
            .then(|| Cgroup::create(conversation, options.max_processes, max_memory))
            .flatten();
        if let Some(cgroup) = &cgroup {
            policy.cgroup_procs = cgroup.procs_files();
            policy.cgroup_description = cgroup.description.clone();
        }
        let setup = if mode == SandboxMode::Docker {
            let settings = DockerSettings {
                image: options
                    .docker_image
                    .clone()
                    .unwrap_or_else(DockerSettings::default_image),
                conversation: conversation.to_string(),
                workspace: placement.writable.clone(),
                read_only: placement
                    .read_only
                    .iter()
                    .cloned()
                    .chain([private.out()])
                    .collect(),
                needs_git: placement.needs_git,
                env: secrets.add_to(&container_environment(std::env::vars()))?,
                host: options.docker_host.clone(),
                workspace_mode: options
                    .docker_workspace
                    .as_deref()
                    .map(str::parse)
                    .transpose()?,
            };
            Sandbox::docker(&settings, &policy)
                .map(|(sandbox, report)| (sandbox, Some(wright_sandbox::Checking::Done(report))))
        } else {
            Sandbox::for_mode_checking(mode, launcher.path().to_path_buf(), &policy)
        };
        let (sandbox, checking) = match setup {
            // Awaited on a thread of its own; the sandbox waits for its yes.
            Ok((sandbox, Some(checking))) => {
                let (check, verdict) = wright_sandbox::BackgroundCheck::in_background(checking);
                (sandbox.awaiting(verdict), Some(check))
            }
            Ok((sandbox, None)) => (sandbox, None),
            Err(err) => {
                if let Some(cgroup) = &cgroup {
                    cgroup.remove();
                }
                return Err(err.into());
            }
        };
        let mut env = confined_environment(std::env::vars(), private.root(), home.as_deref());
        if proxy.is_some() {
            env.extend(wright_sandbox::egress::proxy_environment());
        }
        let shell_env = if mode == SandboxMode::Docker {
            // The container has them; the docker client the shell starts through needs
            // none.
            env.clone()
        } else {
            secrets.add_to(&env)?
        };
        Ok(Self {
            sandbox,
            shell_env,
            env,
            report: std::sync::OnceLock::new(),
            checking: std::sync::Mutex::new(checking),
            private,
            cgroup,
            max_file_bytes,
            writable: placement.writable.clone(),
            verbose: options.verbose,
            _live: wright_sandbox::LiveRun::start(),
            proxy,
            web,
        })
    }

    /// What the `fetch` tool may reach, if anything.
    pub fn web_allow_list(&self) -> Option<AllowList> {
        self.web.clone()
    }

    /// The connections of wright's proxy, when the run has allowed hosts.
    pub fn network_journal(&self) -> Option<Journal> {
        self.proxy.as_ref().map(|proxy| proxy.journal().clone())
    }

    /// The environment of the terminal's shell: the scrubbed one and the granted secrets.
    pub fn shell_env(&self) -> &[(String, String)] {
        &self.shell_env
    }

    /// Kills everything the agent left running (its cgroup's processes, the container's,
    /// orphans that came to wright), so nothing changes the work while wright reads,
    /// commits and reports it, and nothing goes on after the run.
    pub fn stop_leftovers(&self) -> Result<()> {
        if let Some(cgroup) = &self.cgroup {
            cgroup.kill_all();
        }
        self.sandbox
            .stop_leftovers()
            .context("cannot stop what the agent left running")
    }

    /// Where the agent's commands can put files on disk: its writable directory and its
    /// private tmp and home.
    pub fn written_paths(&self) -> Vec<PathBuf> {
        vec![
            self.writable.clone(),
            self.private.tmp(),
            self.private.home(),
        ]
    }

    /// wright's scratch files for this conversation: readable in the sandbox, not writable.
    pub fn scratch(&self) -> Result<wright_tools::Scratch> {
        wright_tools::Scratch::open(&self.private.out(), self.max_file_bytes)
            .map_err(|err| anyhow::anyhow!("{err}"))
    }

    /// Whether `describe` gave the short line of a confined sandbox, leaving out details
    /// a verbose description has.
    pub fn has_details(&self) -> bool {
        let _ = self.settle_check();
        self.report.get().is_some() && !self.verbose
    }

    /// What is enforced: one short line (level, network, what the agent may write), or
    /// verbose the launcher's whole report (which `wright doctor` also prints).
    /// Waits for the check's verdict if it is not in yet.
    pub fn describe(&self) -> String {
        if let Err(err) = self.settle_check() {
            return format!("refused: {err}");
        }
        let Some(report) = self.report.get() else {
            return "none: commands run as you, in the workspace, with a scrubbed environment"
                .into();
        };
        if self.verbose {
            return report.summary();
        }
        let level = report.level.map_or("confined", |level| level.words());
        let network = if report.network_allowed {
            "allowed".to_string()
        } else if self.proxy.is_some() {
            "allowed hosts only, through wright's proxy".to_string()
        } else {
            "off".to_string()
        };
        let writable: Vec<String> = report
            .writable
            .iter()
            .map(|path| {
                if *path == self.writable {
                    "the workspace".to_string()
                } else if *path == self.private.tmp() {
                    "a private tmp".to_string()
                } else if *path == self.private.home() {
                    "a private home".to_string()
                } else {
                    path.display().to_string()
                }
            })
            .collect();
        format!(
            "{level} · network: {network} · writable: {}",
            writable.join(", ")
        )
    }
}

impl Drop for SandboxSetup {
    fn drop(&mut self) {
        // A check still running ends first: its process is in the cgroup.
        self.checking
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        // Other clones of the sandbox (the terminal's) may still be alive: the container
        // goes now all the same.
        self.sandbox.shutdown();
        // Before the private directory (its socket is there): its thread ends with it.
        self.proxy.take();
        if let Some(cgroup) = &self.cgroup {
            cgroup.remove();
        }
        wright_sandbox::kill_leftovers();
        // The private directory goes with `self.private`.
    }
}

/// The allow-list to enforce: none with `--network` (everything) or without hosts; refused
/// where nothing could enforce it, rather than approximated.
fn allow_list(mode: SandboxMode, options: &SandboxOptions) -> Result<Option<AllowList>> {
    if options.allow_hosts.is_empty() || options.network {
        return Ok(None);
    }
    let allow = AllowList::parse(&options.allow_hosts)?;
    match mode {
        SandboxMode::Auto | SandboxMode::Namespaces => Ok(Some(allow)),
        SandboxMode::Landlock => anyhow::bail!(
            "--allow-host needs a network namespace of the sandbox's own, and --sandbox landlock has none (Landlock's network rules know ports, not hosts), so the allow-list cannot be enforced; use --sandbox auto or namespaces, or --network to allow everything"
        ),
        SandboxMode::Docker => anyhow::bail!(
            "--allow-host is not supported with --sandbox docker yet; use --sandbox auto or namespaces, or --network to allow everything"
        ),
        SandboxMode::None => anyhow::bail!(
            "--allow-host cannot be enforced with --sandbox none (commands run unconfined, with the whole network); use --sandbox auto or namespaces"
        ),
    }
}

/// Removes what runs of this data directory that died without cleaning up left behind
/// (private directories, cgroups and what still runs in them): a run is dead when its
/// conversation's lock is free — or when it is `own`, the conversation this process holds
/// the lock of and has not made a sandbox for yet.
pub fn reap_dead_runs(own: &str) {
    wright_sandbox::reap_dead_runs(&std::env::temp_dir(), &|run| is_dead(run, own));
}

/// The private directories (scratch outputs included) that dead runs of this data
/// directory left in the temp directory.
pub fn dead_private_dirs() -> Vec<std::path::PathBuf> {
    wright_sandbox::dead_private_dirs(&std::env::temp_dir(), &|run| is_dead(run, ""))
}

fn is_dead(run: &str, own: &str) -> bool {
    let id = run.strip_suffix("-fork").unwrap_or(run);
    let dir = wright_core::conversations_dir().join(id);
    run == own
        || !id.is_empty()
            && !id.contains('/')
            && dir.join("events.jsonl").is_file()
            && wright_core::lock_holder(&dir).is_none()
}
