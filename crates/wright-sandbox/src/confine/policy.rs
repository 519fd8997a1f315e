//! What a confined command may touch, decided by wright and handed to the launcher as
//! JSON; and what the launcher reports it enforced.

use crate::PrivateDir;
use serde::Deserialize;
use serde::Serialize;
use std::path::Path;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// Readable and executable, not writable (toolchains, system files).
    pub read_only: Vec<PathBuf>,
    /// Readable and writable (the workspace, the private tmp, caches).
    pub read_write: Vec<PathBuf>,
    /// Inside the read-write paths, kept read-only (an in-place run's `.git`). Only a
    /// mount namespace (or Docker) can do that: without one the launcher refuses to run.
    #[serde(default)]
    pub protected: Vec<PathBuf>,
    /// The user's toolchain caches (`~/.cargo/registry`, pip's, npm's, Go's build cache):
    /// readable, and writable only through a private layer (an overlay whose upper half is
    /// in `cache_layers`), so what the agent writes there never reaches the real cache,
    /// where the user's own builds would run it. Read-only without a mount namespace.
    #[serde(default)]
    pub caches: Vec<PathBuf>,
    /// Where the private layers of the caches go (the conversation's private directory).
    #[serde(default)]
    pub cache_layers: Option<PathBuf>,
    /// Whether TCP/UDP sockets are allowed.
    pub network: bool,
    /// With the network off: wright's proxy for the allowed hosts (`--allow-host`), the
    /// Unix socket it listens on outside the sandbox. Needs a network namespace: the
    /// launcher refuses to run without one.
    #[serde(default)]
    pub proxy: Option<PathBuf>,
    /// Limits on the command and everything it starts.
    pub max_processes: u64,
    pub max_file_bytes: u64,
    pub max_open_files: u64,
    /// `cgroup.procs` files to join (process and memory limits for root too).
    #[serde(default)]
    pub cgroup_procs: Vec<PathBuf>,
    /// Mount and network namespaces: required (`--sandbox namespaces`), used where the
    /// kernel allows (`auto`), or not used (`landlock`: Landlock and seccomp only).
    #[serde(default)]
    pub namespaces: Namespaces,
    /// Words for the report about the cgroup limits, or why there are none.
    #[serde(default)]
    pub cgroup_description: String,
    /// The directory the commands work in (the Docker sandbox bind-mounts it, alone).
    #[serde(default)]
    pub workspace: Option<PathBuf>,
    /// Memory for all the commands together (enforced by Docker; cgroups get theirs
    /// directly). 0: no limit.
    #[serde(default)]
    pub max_memory_bytes: u64,
    /// The workspace is the user's own tree (in place, or a directory worked directly),
    /// where the user's programs make Unix sockets at any time (git's fsmonitor daemon in
    /// `.git`, an editor's or a dev server's): `socket(AF_UNIX)` is refused even with a
    /// root of its own (`socketpair` still works), since Landlock does not cover
    /// `connect()` and no scan at the start sees a socket made later.
    #[serde(default)]
    pub users_tree: bool,
    /// TCP on the sandbox's own loopback, for the servers the agent starts there (a dev
    /// server the `browser` opens). Only with a network namespace of the sandbox's own,
    /// which holds nothing but that loopback (and the proxy's relay): anywhere else the
    /// launcher ignores it and IP sockets stay refused.
    #[serde(default)]
    pub local_tcp: bool,
}

/// System locations a toolchain may live in: readable and executable.
const SYSTEM_READ_ONLY: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    // The system's font cache (built from /usr's fonts: nothing of the user's): without
    // it every program that draws text (Chromium, matplotlib) scans every font first.
    "/var/cache/fontconfig",
    "/proc",
    "/sys",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
];

/// Devices a shell on a terminal needs to write to.
const DEVICES_READ_WRITE: &[&str] = &["/dev/null", "/dev/tty", "/dev/pts", "/dev/ptmx"];

/// Toolchains people install in their home: usable, read-only. Secrets next to them
/// (~/.ssh, ~/.aws, ~/.netrc, ~/.git-credentials, ~/.config, keyrings) are not listed,
/// so they stay unreadable.
const HOME_TOOLCHAINS: &[&str] = &[
    ".cargo/bin",
    ".rustup",
    ".pyenv",
    ".nvm",
    ".local/bin",
    ".local/lib",
    ".local/share/pnpm",
    ".volta",
    ".bun",
    ".deno",
    "go",
    ".sdkman",
    ".gradle/wrapper",
    ".m2/wrapper",
];

/// Caches the toolchains write (downloads, extracted sources, locks, compiled objects):
/// code the user's own builds run, so the agent writes only a private layer over them.
const HOME_CACHES: &[&str] = &[
    ".cargo/registry",
    ".cargo/git",
    ".cargo/.package-cache",
    ".cargo/.package-cache-mutate",
    ".cargo/.global-cache",
    ".cache/pip",
    ".npm",
    ".cache/go-build",
];

impl Policy {
    /// The default policy: the workspace and the conversation's own tmp and home writable,
    /// its scratch (`out`, written by wright), system and home toolchains read-only,
    /// network off.
    pub fn for_workspace(workspace: &Path, private: &PrivateDir, home: Option<&Path>) -> Self {
        let existing = |p: PathBuf| p.exists().then_some(p);
        let mut read_only: Vec<PathBuf> = SYSTEM_READ_ONLY
            .iter()
            .map(PathBuf::from)
            .filter_map(existing)
            .collect();
        let mut caches = Vec::new();
        let mut read_write: Vec<PathBuf> = DEVICES_READ_WRITE
            .iter()
            .map(PathBuf::from)
            .filter_map(existing)
            .collect();
        if let Some(home) = home {
            read_only.extend(
                HOME_TOOLCHAINS
                    .iter()
                    .map(|p| home.join(p))
                    .filter_map(existing),
            );
            caches.extend(
                HOME_CACHES
                    .iter()
                    .map(|p| home.join(p))
                    .filter_map(existing),
            );
        }
        read_only.extend(
            toolchains_named_by_environment(home)
                .into_iter()
                .filter_map(existing),
        );
        read_write.push(workspace.to_path_buf());
        read_write.push(private.tmp());
        read_write.push(private.home());
        read_only.push(private.out());
        Self {
            read_only,
            read_write,
            protected: Vec::new(),
            caches,
            cache_layers: Some(private.caches()),
            network: false,
            proxy: None,
            max_processes: 512,
            max_file_bytes: 4 << 30,
            max_open_files: 4096,
            cgroup_procs: Vec::new(),
            namespaces: Namespaces::WhereAvailable,
            cgroup_description: "no cgroup (the cgroup tree is not writable here)".into(),
            workspace: Some(workspace.to_path_buf()),
            max_memory_bytes: default_memory_limit(),
            users_tree: false,
            local_tcp: false,
        }
    }
}

impl Policy {
    /// Drops read-only and cache grants at or beneath a writable path: the writable grant
    /// covers them already, and the agent can replace them with links, which the
    /// launcher (binding, granting) must never follow. An activated `.venv` inside the
    /// workspace is the usual case.
    pub fn without_grants_beneath_writable(mut self) -> Self {
        let writable: Vec<PathBuf> = self
            .read_write
            .iter()
            .filter(|path| !path.starts_with("/dev"))
            .cloned()
            .collect();
        let beneath = |path: &PathBuf| writable.iter().any(|w| path.starts_with(w));
        self.read_only.retain(|path| !beneath(path));
        self.caches.retain(|path| !beneath(path));
        self
    }
}

/// Half the machine's memory, at most 16 GiB: room for builds, not for a runaway.
pub fn default_memory_limit() -> u64 {
    let total_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .unwrap_or(8 << 20);
    (total_kb * 1024 / 2).min(16 << 30)
}

/// Toolchain roots named by the user's variables, and the directories on PATH: where the
/// user's own tools are. Never the home directory itself or `/`.
fn toolchains_named_by_environment(home: Option<&Path>) -> Vec<PathBuf> {
    const ROOTS: &[&str] = &[
        "PYENV_ROOT",
        "RUSTUP_HOME",
        "NVM_DIR",
        "GOROOT",
        "JAVA_HOME",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
    ];
    let mut dirs: Vec<PathBuf> = ROOTS
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    if let Some(cargo) = std::env::var_os("CARGO_HOME") {
        dirs.push(PathBuf::from(cargo).join("bin"));
    }
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    dirs.retain(|dir| {
        dir.is_absolute()
            && dir != Path::new("/")
            && Some(dir.as_path()) != home
            && dir.components().count() > 1
    });
    dirs
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Namespaces {
    Required,
    #[default]
    WhereAvailable,
    Off,
}

/// How commands are confined, in broad strokes (the words of `Report` say the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// A root of its own (mount namespace), Landlock and seccomp.
    OwnRoot,
    /// Landlock and seccomp on the host's file tree, no namespaces.
    LandlockOnly,
    /// A Docker container.
    Docker,
}

impl Level {
    pub fn words(self) -> &'static str {
        match self {
            Level::OwnRoot => "own root, Landlock, seccomp",
            Level::LandlockOnly => "Landlock and seccomp, no namespaces",
            Level::Docker => "Docker container",
        }
    }
}

/// What the launcher enforced, in words for the run's header and `wright doctor`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    #[serde(default)]
    pub namespaces: String,
    pub landlock: String,
    pub network: String,
    pub seccomp: String,
    pub capabilities: String,
    pub limits: String,
    /// The level reached, for the one-line description.
    #[serde(default)]
    pub level: Option<Level>,
    /// Whether the commands may open network sockets.
    #[serde(default)]
    pub network_allowed: bool,
    /// What the commands may write (devices aside).
    #[serde(default)]
    pub writable: Vec<PathBuf>,
}

impl Report {
    /// All of it, on one (long) line: `wright doctor`, and the header with `--verbose`.
    pub fn summary(&self) -> String {
        format!(
            "{}; files: {}; network: {}; syscalls: {}; capabilities: {}; limits: {}",
            self.namespaces,
            self.landlock,
            self.network,
            self.seccomp,
            self.capabilities,
            self.limits
        )
    }
}
