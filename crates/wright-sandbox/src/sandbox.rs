//! The sandbox a conversation's commands run in: how to start a program under it, and a
//! check, before the first command, that the confinement really holds on this machine.

use crate::confine::Namespaces;
use crate::confine::Policy;
use crate::confine::Report;
use crate::confine::SANDBOX_EXEC_ARG;
use crate::container_environment;
use crate::docker::Container;
use crate::docker::DockerSettings;
use crate::mode::SandboxError;
use crate::mode::SandboxMode;
use crate::verdict::Verdict;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct Sandbox {
    level: Level,
    /// What every program started in it waits for: the check's yes (see `verdict`).
    verdict: Verdict,
}

#[derive(Debug, Clone)]
enum Level {
    /// Commands run unconfined (only with `--sandbox none`).
    Unconfined,
    /// Through wright's own launcher (Landlock, seccomp, namespaces).
    Launcher(Confined),
    /// In the conversation's container, shared by every clone of this sandbox.
    Docker(Arc<Container>),
}

#[derive(Debug, Clone)]
struct Confined {
    launcher: PathBuf,
    policy_json: String,
}

impl Sandbox {
    pub fn unconfined() -> Self {
        Self {
            level: Level::Unconfined,
            verdict: Verdict::yes(),
        }
    }

    /// Commands run through `launcher` (the `wright` binary) under `policy`.
    pub fn confined(launcher: PathBuf, policy: &Policy) -> Result<Self, SandboxError> {
        let policy_json = serde_json::to_string(policy)
            .map_err(|e| SandboxError::Spawn(format!("cannot encode the sandbox policy: {e}")))?;
        Ok(Self {
            level: Level::Launcher(Confined {
                launcher,
                policy_json,
            }),
            verdict: Verdict::yes(),
        })
    }

    /// Commands run in a new container made from `settings` under `policy` (network,
    /// memory and process limits), checked to confine before this returns. The container
    /// is removed by `shutdown`, or when the last clone of the sandbox is dropped.
    pub fn docker(
        settings: &DockerSettings,
        policy: &Policy,
    ) -> Result<(Self, Report), SandboxError> {
        let (container, report) = Container::start(settings, policy)?;
        let sandbox = Self {
            level: Level::Docker(Arc::new(container)),
            verdict: Verdict::yes(),
        };
        Ok((sandbox, report))
    }

    /// Kills whatever the agent left running, and keeps the sandbox usable: the
    /// container's processes (it is restarted), and every leftover child of wright's (see
    /// `reap`); a cgroup's processes are its owner's to kill.
    pub fn stop_leftovers(&self) -> Result<(), SandboxError> {
        if let Level::Docker(container) = &self.level {
            container.stop_processes()?;
            // A copied workspace: what the stopped processes wrote last comes back.
            container.pull()?;
        }
        crate::reap::kill_leftovers();
        Ok(())
    }

    /// Whether the workspace is a copy kept in step around commands (a Docker engine
    /// that does not see this machine's files): then `before_command` and
    /// `after_command` must bracket every program run in the sandbox.
    pub fn copies_workspace(&self) -> bool {
        matches!(&self.level, Level::Docker(container) if container.copies())
    }

    /// Before a command: what wright's own tools changed in the workspace goes into the
    /// sandbox's copy of it. Nothing to do unless the workspace is copied.
    pub fn before_command(&self) -> Result<(), SandboxError> {
        match &self.level {
            Level::Docker(container) => container.push().map(|_| ()),
            _ => Ok(()),
        }
    }

    /// After a command: what it changed in the sandbox's copy of the workspace comes back
    /// to this machine. Nothing to do unless the workspace is copied.
    pub fn after_command(&self) -> Result<crate::docker::Synced, SandboxError> {
        match &self.level {
            Level::Docker(container) => container.pull(),
            _ => Ok(crate::docker::Synced::default()),
        }
    }

    /// Ends what the sandbox keeps running: the Docker container, with every process in
    /// it. Nothing to do for the other levels. The sandbox cannot run commands after this.
    pub fn shutdown(&self) {
        if let Level::Docker(container) = &self.level {
            container.remove();
        }
    }

    /// Builds the sandbox for `mode`, and checks it works here (fail closed).
    pub fn for_mode(
        mode: SandboxMode,
        launcher: PathBuf,
        policy: &Policy,
    ) -> Result<(Self, Option<Report>), SandboxError> {
        let (sandbox, checking) = Self::for_mode_checking(mode, launcher, policy)?;
        let report = checking.map(Checking::finish).transpose()?;
        Ok((sandbox, report))
    }

    /// `for_mode`, with the check of a confined sandbox not awaited: `Checking::finish`
    /// runs the launcher in report mode and waits for its verdict, which
    /// `BackgroundCheck` does on a thread of its own while the caller goes on (asks the
    /// model server what it is, sends the first request). Nothing may run in the sandbox
    /// before that verdict is in: `BackgroundCheck` makes the sandbox wait for it.
    pub fn for_mode_checking(
        mode: SandboxMode,
        launcher: PathBuf,
        policy: &Policy,
    ) -> Result<(Self, Option<Checking>), SandboxError> {
        match mode {
            SandboxMode::None => Ok((Self::unconfined(), None)),
            SandboxMode::Auto | SandboxMode::Landlock | SandboxMode::Namespaces => {
                let mut policy = policy.clone();
                policy.namespaces = match mode {
                    SandboxMode::Namespaces => Namespaces::Required,
                    SandboxMode::Landlock => Namespaces::Off,
                    _ => Namespaces::WhereAvailable,
                };
                let sandbox = Self::confined(launcher, &policy)?;
                // Started by whoever waits for it (`BackgroundCheck`: on its own thread,
                // so the caller does not wait for the launcher's exec).
                Ok((sandbox.clone(), Some(Checking::ToStart(sandbox))))
            }
            SandboxMode::Docker => {
                // `wright doctor`: a throwaway container from the default image.
                let workspace = match &policy.workspace {
                    Some(workspace) => workspace.clone(),
                    None => std::env::current_dir()?,
                };
                let settings = DockerSettings {
                    image: DockerSettings::default_image(),
                    conversation: format!("check-{}", std::process::id()),
                    workspace,
                    read_only: Vec::new(),
                    needs_git: false,
                    env: container_environment(std::env::vars()),
                    host: None,
                    workspace_mode: None,
                };
                let (sandbox, report) = Self::docker(&settings, policy)?;
                Ok((sandbox, Some(Checking::Done(report))))
            }
        }
    }

    /// This sandbox with `paths` readable besides (read-only, never writable), for one
    /// program the user named (an MCP server's script or package): the paths that were
    /// not readable already, which are the grant. `None` where a sandbox cannot grow
    /// (a running Docker container's mounts are fixed). Unconfined, everything is
    /// readable: nothing is added.
    pub fn with_read_only(&self, paths: &[PathBuf]) -> Option<(Sandbox, Vec<PathBuf>)> {
        let confined = match &self.level {
            Level::Unconfined => return Some((self.clone(), Vec::new())),
            Level::Docker(_) => return None,
            Level::Launcher(confined) => confined,
        };
        let mut policy: Policy = serde_json::from_str(&confined.policy_json).ok()?;
        let covered = |policy: &Policy, path: &PathBuf| {
            policy
                .read_only
                .iter()
                .chain(&policy.read_write)
                .chain(&policy.caches)
                .any(|granted| path.starts_with(granted))
        };
        let mut added = Vec::new();
        for path in paths {
            if !covered(&policy, path) {
                policy.read_only.push(path.clone());
                added.push(path.clone());
            }
        }
        let sandbox = Sandbox::confined(confined.launcher.clone(), &policy)
            .ok()?
            .awaiting(self.verdict.clone());
        Some((sandbox, added))
    }

    /// This sandbox with `paths` writable besides, for one program the user named (an
    /// external agent's own home, kept across its runs): a confined sandbox's policy
    /// grows by them. `None` where a sandbox cannot grow (a running Docker container's
    /// mounts are fixed). Unconfined, everything is writable already.
    pub fn with_read_write(&self, paths: &[PathBuf]) -> Option<Sandbox> {
        let confined = match &self.level {
            Level::Unconfined => return Some(self.clone()),
            Level::Docker(_) => return None,
            Level::Launcher(confined) => confined,
        };
        let mut policy: Policy = serde_json::from_str(&confined.policy_json).ok()?;
        policy.read_write.extend(paths.iter().cloned());
        Sandbox::confined(confined.launcher.clone(), &policy)
            .ok()
            .map(|sandbox| sandbox.awaiting(self.verdict.clone()))
    }

    /// This sandbox, starting nothing before `verdict` says yes (see `BackgroundCheck`).
    pub fn awaiting(mut self, verdict: Verdict) -> Self {
        self.verdict = verdict;
        self
    }

    /// The check's verdict if it is in, without waiting.
    pub fn verdict_if_in(&self) -> Option<Result<(), SandboxError>> {
        self.verdict.if_in()
    }

    /// Waits, without blocking the runtime, for the check to say yes (or why not).
    pub async fn ready(&self) -> Result<(), SandboxError> {
        self.verdict.wait_async().await
    }

    /// `ready`, blocking the thread (for a thread of its own).
    pub fn ready_blocking(&self) -> Result<(), SandboxError> {
        self.verdict.wait()
    }

    pub fn is_confined(&self) -> bool {
        !matches!(self.level, Level::Unconfined)
    }

    /// The program and arguments that run `program args` inside the sandbox, once its
    /// check has said yes (this waits for it; its refusal is the error).
    pub fn wrap(
        &self,
        program: &str,
        args: &[&str],
    ) -> Result<(String, Vec<String>), SandboxError> {
        self.verdict.wait()?;
        Ok(match &self.level {
            Level::Unconfined => (
                program.to_string(),
                args.iter().map(|a| a.to_string()).collect(),
            ),
            Level::Docker(container) => container.wrap(program, args),
            Level::Launcher(confined) => {
                // The mark lets the PTY find the shell inside the PID namespace.
                let mut wrapped = vec![
                    SANDBOX_EXEC_ARG.to_string(),
                    confined.policy_json.clone(),
                    "--mark".to_string(),
                    format!("{}={}", crate::remote::REMOTE_SHELL_VAR, mark_token()),
                    "--".to_string(),
                    program.to_string(),
                ];
                wrapped.extend(args.iter().map(|a| a.to_string()));
                (confined.launcher.display().to_string(), wrapped)
            }
        })
    }

    /// The program and arguments that run `program args` inside the running sandbox of
    /// the confined process `pid` (the terminal's shell, by its host pid): its root, its
    /// loopback, its PID namespace, confined as it is (see `confine::join`). Only wright's
    /// own launcher can join: unconfined there is nothing to join and a Docker container's
    /// programs start through the Docker client, so those say why not.
    pub fn wrap_joined(
        &self,
        pid: i32,
        program: &str,
        args: &[&str],
    ) -> Result<(String, Vec<String>), SandboxError> {
        let confined = match &self.level {
            Level::Unconfined => {
                return Err(SandboxError::Refused(
                    "there is no sandbox to run it in (--sandbox none)".into(),
                ))
            }
            Level::Docker(_) => {
                return Err(SandboxError::Refused(
                    "it does not run in a Docker sandbox yet".into(),
                ))
            }
            Level::Launcher(confined) => confined,
        };
        let users_tree = serde_json::from_str::<Policy>(&confined.policy_json)
            .map(|policy| policy.users_tree)
            .unwrap_or(true);
        if users_tree {
            // Chromium cannot start without a Unix socket of its own, and in the user's
            // own tree the sandbox refuses them (see `Policy::users_tree`).
            return Err(SandboxError::Refused(
                "it needs Unix sockets, which the sandbox refuses when the agent works in your own tree (--in-place, or a directory worked directly): work in a clone".into(),
            ));
        }
        let mut wrapped = vec![
            SANDBOX_EXEC_ARG.to_string(),
            confined.policy_json.clone(),
            "--join".to_string(),
            pid.to_string(),
            "--".to_string(),
            program.to_string(),
        ];
        wrapped.extend(args.iter().map(|a| a.to_string()));
        Ok((confined.launcher.display().to_string(), wrapped))
    }

    /// Runs the launcher in report mode (everything is applied, nothing is run), or the
    /// probe in the container.
    pub fn check(&self) -> Result<Report, SandboxError> {
        match &self.level {
            Level::Docker(container) => container.check(),
            _ => self.start_check()?.finish(),
        }
    }

    /// Starts the launcher in report mode and returns at once (see `PendingCheck`).
    fn start_check(&self) -> Result<PendingCheck, SandboxError> {
        let confined = match &self.level {
            Level::Launcher(confined) => confined,
            Level::Unconfined | Level::Docker(_) => {
                return Err(SandboxError::Refused("no launcher to check".into()))
            }
        };
        let child = std::process::Command::new(&confined.launcher)
            .args([SANDBOX_EXEC_ARG, &confined.policy_json, "--report"])
            .env_clear()
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| SandboxError::Spawn(format!("{}: {e}", confined.launcher.display())))?;
        Ok(PendingCheck {
            child,
            launcher: confined.launcher.clone(),
        })
    }
}

/// A sandbox's check on its way: the verdict of a launcher in report mode still running,
/// or the verdict already in (a container is checked as it starts).
#[derive(Debug)]
pub enum Checking {
    /// The launcher of this sandbox is to run in report mode.
    ToStart(Sandbox),
    Started(PendingCheck),
    Done(Report),
}

impl Checking {
    /// Waits for the verdict: what the sandbox enforces here, or why it cannot.
    pub fn finish(self) -> Result<Report, SandboxError> {
        match self {
            Checking::ToStart(sandbox) => sandbox.start_check()?.finish(),
            Checking::Started(pending) => pending.finish(),
            Checking::Done(report) => Ok(report),
        }
    }
}

/// The launcher in report mode (everything applied, nothing run), started and not yet
/// waited for. Dropped unfinished, it is killed and reaped: no verdict, nothing left.
#[derive(Debug)]
pub struct PendingCheck {
    child: std::process::Child,
    launcher: PathBuf,
}

impl Drop for PendingCheck {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl PendingCheck {
    /// Waits for the launcher and reads its report (fail closed: anything but a report
    /// is a refusal).
    pub fn finish(mut self) -> Result<Report, SandboxError> {
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        // The report is small: read stdout to its end, then stderr (a launcher that
        // refuses writes only a line there).
        use std::io::Read;
        if let Some(mut out) = self.child.stdout.take() {
            let _ = out.read_to_end(&mut stdout);
        }
        if let Some(mut err) = self.child.stderr.take() {
            let _ = err.read_to_end(&mut stderr);
        }
        let status = self
            .child
            .wait()
            .map_err(|e| SandboxError::Spawn(format!("{}: {e}", self.launcher.display())))?;
        let output = std::process::Output {
            status,
            stdout,
            stderr,
        };
        if !output.status.success() {
            let reason = String::from_utf8_lossy(&output.stderr);
            let reason = reason.trim().trim_start_matches("wright sandbox: ");
            if let Some(found) = reason.strip_prefix(crate::pinned::TAMPERED) {
                return Err(SandboxError::Tampered(found.to_string()));
            }
            return Err(SandboxError::Refused(reason.to_string()));
        }
        serde_json::from_slice(&output.stdout)
            .map_err(|e| SandboxError::Refused(format!("unreadable sandbox report: {e}")))
    }
}

/// A token unique to one wrapped program.
fn mark_token() -> String {
    use std::sync::atomic::AtomicU64;
    use std::sync::atomic::Ordering;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{:x}{:x}{:x}",
        std::process::id(),
        nanos,
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
