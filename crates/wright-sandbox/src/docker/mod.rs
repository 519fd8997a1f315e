//! The Docker sandbox (`--sandbox docker`): one container per conversation, from an image
//! the user chooses, created and started when the conversation's sandbox is set up, and
//! stopped and removed when the run ends (`remove`, called by the sandbox's owner, and
//! `Drop` as a backstop). What the container allows is decided in `spec`, proved in
//! `probe`, and done through the Engine API in `engine`.
//!
//! Commands run in it through the `docker` client on a local PTY: `wrap` turns
//! `bash ARGS` into `docker exec -i -t -u UID:GID -w CWD CONTAINER bash ARGS`, so the
//! terminal keeps its persistent shell, timeouts and input detection (see `remote` for how
//! the PTY sees through the client). The commands' environment is the container's, set at
//! creation from the scrubbed environment: the client's own environment never enters.
//!
//! The engine may be another machine's (`host`): then nothing is bind-mounted, and the
//! workspace is copied in when the container is made and kept in step around each
//! command (`copy`, through the archive API; hostile archives are unpacked by `unpack`).
//!
//! A run that ends without unwinding (SIGKILL, a second Ctrl-C, a panic in a release
//! build, which aborts) leaves its container behind, labelled with its conversation:
//! `docker rm -f $(docker ps -aq --filter label=wright.conversation)` removes them all.

mod binds;
mod copy;
mod engine;
mod host;
mod listing;
mod orphans;
mod probe;
mod seccomp;
mod seccomp_allowed;
mod spec;
mod tar;
mod unpack;

pub use copy::Synced;
pub use host::DockerHost;
pub use host::WorkspaceMode;
pub use host::HOST_VAR;
pub use spec::CONVERSATION_LABEL;

use crate::confine::Policy;
use crate::confine::Report;
use crate::mode::SandboxError;
use crate::remote::REMOTE_SHELL_VAR;
use engine::refused;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// The image when none is chosen: Debian's, small, with bash, and one `docker pull` away.
/// Most projects want their toolchain's image instead (`--docker-image rust:1`, …).
pub const DEFAULT_IMAGE: &str = "debian:bookworm-slim";
/// The variable that chooses the image when `--docker-image` is not given.
pub const IMAGE_VAR: &str = "WRIGHT_DOCKER_IMAGE";

/// How the conversation's container is made.
#[derive(Debug, Clone)]
pub struct DockerSettings {
    pub image: String,
    /// Names the container (`wright-<conversation>`) and labels it.
    pub conversation: String,
    /// Bind-mounted read-write at the same path; its owner is the container's user.
    pub workspace: PathBuf,
    /// Also bind-mounted at the same path, read-only (a clone's shared object store,
    /// wright's scratch directory).
    pub read_only: Vec<PathBuf>,
    /// The workspace is wright's clone of a repository: git must run in the container to
    /// commit the agent's branch, so the image must have it.
    pub needs_git: bool,
    /// The container's environment: scrubbed, never the host's (`container_environment`).
    pub env: Vec<(String, String)>,
    /// The engine's address (`--docker-host`); `None`: `DOCKER_HOST`, else this
    /// machine's socket.
    pub host: Option<String>,
    /// How the workspace reaches the container (`--docker-workspace`); `None`: bind for
    /// an engine on a Unix socket, copy for any other.
    pub workspace_mode: Option<WorkspaceMode>,
}

impl DockerSettings {
    /// `$WRIGHT_DOCKER_IMAGE`, else `DEFAULT_IMAGE`.
    pub fn default_image() -> String {
        std::env::var(IMAGE_VAR)
            .ok()
            .filter(|image| !image.is_empty())
            .unwrap_or_else(|| DEFAULT_IMAGE.to_string())
    }
}

/// A running container, removed at the latest when this is dropped.
#[derive(Debug)]
pub(crate) struct Container {
    name: String,
    image: String,
    host: DockerHost,
    /// The `docker` client the terminal's shell goes through.
    cli: PathBuf,
    /// `UID:GID`, the workspace's owner.
    user: String,
    workspace: PathBuf,
    network: bool,
    /// The workspace is wright's clone of a repository: git must run in the container to
    /// commit the agent's branch, so the image must have it.
    needs_git: bool,
    /// The workspace is the user's own tree: the container has wright's seccomp profile,
    /// which refuses Unix sockets (see `seccomp`).
    users_tree: bool,
    /// The copied trees, when the workspace is copied rather than bound (see `copy`).
    copies: Option<Mutex<Vec<copy::Tree>>>,
    removed: AtomicBool,
}

impl Container {
    /// Creates and starts the container, then proves it confines (fail closed).
    pub(crate) fn start(
        settings: &DockerSettings,
        policy: &Policy,
    ) -> Result<(Self, Report), SandboxError> {
        let workspace = settings.workspace.canonicalize().map_err(|e| {
            refused(format!(
                "the workspace {}: {e}",
                settings.workspace.display()
            ))
        })?;
        if workspace.parent().is_none() {
            return Err(refused(
                "the workspace cannot be / with --sandbox docker: it would hide the image".into(),
            ));
        }
        let meta = std::fs::metadata(&workspace)?;
        let user = format!("{}:{}", meta.uid(), meta.gid());
        let cli = find_cli()?;
        let host = DockerHost::resolve(settings.host.as_deref())?;
        let mode = WorkspaceMode::for_host(settings.workspace_mode, &host);
        let settings = DockerSettings {
            workspace: workspace.clone(),
            ..settings.clone()
        };
        let name = format!("wright-{}", settings.conversation);
        let (bound, copies) = match mode {
            WorkspaceMode::Bind => {
                // The daemon takes names: each is resolved here without a link, and
                // checked in the container once it runs (see `binds`).
                let bound = binds::Binds::resolve(
                    &workspace,
                    &settings.workspace,
                    &settings.read_only,
                    &policy.protected,
                )?;
                (Some(bound), None)
            }
            WorkspaceMode::Copy => (
                None,
                Some(copy_trees(&settings, &workspace, policy, &meta)?),
            ),
        };
        let mut volumes: Vec<PathBuf> = Vec::new();
        for tree in copies.iter().flatten() {
            let at = tree.volume()?.to_path_buf();
            if !volumes.contains(&at) {
                volumes.push(at);
            }
        }
        let placed = match &bound {
            Some(bound) => spec::Placed::Bound(bound),
            None => spec::Placed::Volumes(&volumes),
        };
        let body = spec::container_body(&settings, placed, policy, &user);
        let pid = engine::with_docker(&host, |docker| {
            let (name, image) = (name.clone(), settings.image.clone());
            async move {
                engine::reap_orphans(&docker).await;
                engine::ensure_image(&docker, &image).await?;
                engine::create_and_start(&docker, &name, body).await?;
                let pid = engine::init_pid(&docker, &name).await;
                if pid.is_err() {
                    let _ = engine::remove(&docker, &name).await;
                }
                pid
            }
        })?;
        let container = Self {
            name,
            image: settings.image,
            host,
            cli,
            user,
            workspace,
            network: policy.network,
            needs_git: settings.needs_git,
            users_tree: policy.users_tree,
            copies: copies.map(Mutex::new),
            removed: AtomicBool::new(false),
        };
        // On failure `container` is dropped here, which removes it. Nothing of the
        // agent's has run in it yet: the mounts are checked first, the copies made.
        match &bound {
            Some(bound) => {
                bound.verify(&container.name, pid, |args| {
                    binds::exec_in(
                        &container.cli,
                        &container.cli_prefix(),
                        &container.user,
                        &container.name,
                        args,
                    )
                })?;
                container.still_runs(pid)?;
            }
            None => {
                container.push()?;
            }
        }
        let report = container.check()?;
        Ok((container, report))
    }

    /// Fails unless the container still runs with `pid` as its first process (the
    /// process whose root the mounts were checked in).
    fn still_runs(&self, pid: i64) -> Result<(), SandboxError> {
        let name = self.name.clone();
        let now = engine::with_docker(&self.host, |docker| async move {
            engine::init_pid(&docker, &name).await
        })?;
        if now == pid {
            Ok(())
        } else {
            Err(refused(format!(
                "the container {} restarted while its mounts were checked",
                self.name
            )))
        }
    }

    /// Runs the probe in the container again.
    pub(crate) fn check(&self) -> Result<Report, SandboxError> {
        probe::run(self)
    }

    /// `-H ADDRESS`: the client talks to the same daemon as wright, whatever its
    /// environment (the terminal gives it the scrubbed one) or configuration (a context
    /// is never used: `-H` overrides it).
    fn cli_prefix(&self) -> [String; 2] {
        ["-H".into(), self.host.cli_address()]
    }

    /// The program and arguments that run `program args` in the container, in the
    /// directory the caller starts them in (the same path inside), with a terminal when
    /// they are given one.
    pub(crate) fn wrap(&self, program: &str, args: &[&str]) -> (String, Vec<String>) {
        // A shell picks -t and the directory when the program starts, not when it is
        // wrapped: the terminal runs it on a PTY, the working copy runs git on pipes.
        const EXEC: &str = r#"t=; [ -t 0 ] && t=-t; d=$1 h=$2 u=$3 e=$4 c=$5; shift 5; exec "$d" -H "$h" exec -i $t -u "$u" -w "$PWD" -e "$e" "$c" "$@""#;
        let [_, host] = self.cli_prefix();
        let mut wrapped = vec![
            "-c".to_string(),
            EXEC.to_string(),
            "wright-docker-exec".to_string(),
            self.cli.display().to_string(),
            host,
            self.user.clone(),
            format!("{REMOTE_SHELL_VAR}={}", token()),
            self.name.clone(),
            program.to_string(),
        ];
        wrapped.extend(args.iter().map(|a| a.to_string()));
        ("/bin/sh".to_string(), wrapped)
    }

    /// Kills every process in the container (the agent's leftovers); it runs on, empty.
    pub(crate) fn stop_processes(&self) -> Result<(), SandboxError> {
        let name = self.name.clone();
        engine::with_docker(&self.host, |docker| async move {
            engine::restart(&docker, &name).await
        })
    }

    /// Whether the workspace is copied (and so needs `push` and `pull` around commands).
    pub(crate) fn copies(&self) -> bool {
        self.copies.is_some()
    }

    /// Before a command: sends what changed on this machine into the container (see
    /// `copy`). Nothing to do when the workspace is bound.
    pub(crate) fn push(&self) -> Result<Synced, SandboxError> {
        let Some(trees) = &self.copies else {
            return Ok(Synced::default());
        };
        let mut trees = trees
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut all = Synced::default();
        for tree in trees.iter_mut() {
            let synced = tree.push(&self.host, &self.name, |gone| self.remove_there(gone))?;
            all.sent += synced.sent;
            all.removed_there += synced.removed_there;
        }
        Ok(all)
    }

    /// After a command: brings what the container changed back (see `copy`).
    pub(crate) fn pull(&self) -> Result<Synced, SandboxError> {
        let Some(trees) = &self.copies else {
            return Ok(Synced::default());
        };
        let mut trees = trees
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut all = Synced::default();
        for tree in trees.iter_mut() {
            let synced = tree.pull(&self.host, &self.name, |args| {
                binds::exec_bytes(&self.cli, &self.cli_prefix(), &self.user, &self.name, args)
            })?;
            all.written_here += synced.written_here;
            all.removed_here += synced.removed_here;
            all.skipped.extend(synced.skipped);
        }
        Ok(all)
    }

    /// Removes `paths` in the container, as its user (what was deleted on this machine).
    fn remove_there(&self, paths: &[PathBuf]) -> Result<(), SandboxError> {
        let mut args: Vec<String> = ["rm", "-rf", "--"].map(String::from).to_vec();
        args.extend(paths.iter().map(|p| p.display().to_string()));
        binds::exec_in(&self.cli, &self.cli_prefix(), &self.user, &self.name, &args).map(|_| ())
    }

    /// Stops and removes the container (and so every process in it). Idempotent.
    pub(crate) fn remove(&self) {
        if self.removed.swap(true, Ordering::SeqCst) {
            return;
        }
        let name = self.name.clone();
        if let Err(err) = engine::with_docker(&self.host, |docker| async move {
            engine::remove(&docker, &name).await
        }) {
            // Called from Drop, with nothing to return the error to; the text is the
            // daemon's and the container's name, nothing the agent wrote.
            #[allow(clippy::disallowed_macros)]
            {
                eprintln!(
                    "wright: {err} (remove it with `docker rm -f {}`)",
                    self.name
                );
            }
        }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        self.remove();
    }
}

/// The trees a copied workspace is made of: the workspace (brought back after each
/// command, but for its protected paths), then the read-only paths that exist (sent in
/// only), each with the owner a bind mount would show.
fn copy_trees(
    settings: &DockerSettings,
    workspace: &std::path::Path,
    policy: &Policy,
    meta: &std::fs::Metadata,
) -> Result<Vec<copy::Tree>, SandboxError> {
    let protected = policy
        .protected
        .iter()
        .filter_map(|path| {
            path.strip_prefix(workspace)
                .or_else(|_| path.strip_prefix(&settings.workspace))
                .ok()
                .map(PathBuf::from)
        })
        .collect();
    let mut trees = vec![copy::Tree::new(
        workspace.to_path_buf(),
        (meta.uid(), meta.gid()),
        true,
        protected,
    )];
    for path in &settings.read_only {
        let Ok(real) = path.canonicalize() else {
            continue;
        };
        if real.is_dir() && !real.starts_with(workspace) {
            trees.push(copy::Tree::new(real, (0, 0), false, Vec::new()));
        }
    }
    Ok(trees)
}

/// A token no other shell of this machine has: pid, a counter, the clock.
fn token() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{}-{n}-{nanos:x}", std::process::id())
}

/// The `docker` client on PATH.
fn find_cli() -> Result<PathBuf, SandboxError> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("docker"))
        .find(|path| path.is_file())
        .ok_or_else(|| {
            refused(
                "the docker command-line client is not installed (apt-get install docker.io, or docker-ce-cli)".into(),
            )
        })
}
