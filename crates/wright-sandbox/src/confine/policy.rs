//! What a confined command may touch, decided by wright and handed to the launcher as
//! JSON; and what the launcher reports it enforced.

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
    /// Whether TCP/UDP sockets are allowed.
    pub network: bool,
    /// Limits on the command and everything it starts.
    pub max_processes: u64,
    pub max_file_bytes: u64,
    pub max_open_files: u64,
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

/// Caches the toolchains write as the user expects them to (downloads, locks).
const HOME_CACHES: &[&str] = &[
    ".cargo/registry",
    ".cargo/git",
    ".cargo/.package-cache",
    ".cache/pip",
    ".npm",
    ".cache/go-build",
];

impl Policy {
    /// The default policy: the workspace and `private` (the conversation's own tmp and home)
    /// writable, system and home toolchains read-only, network off.
    pub fn for_workspace(workspace: &Path, private: &Path, home: Option<&Path>) -> Self {
        let existing = |p: PathBuf| p.exists().then_some(p);
        let mut read_only: Vec<PathBuf> = SYSTEM_READ_ONLY
            .iter()
            .map(PathBuf::from)
            .filter_map(existing)
            .collect();
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
            read_write.extend(
                HOME_CACHES
                    .iter()
                    .map(|p| home.join(p))
                    .filter_map(existing),
            );
        }
        read_write.push(workspace.to_path_buf());
        read_write.push(private.to_path_buf());
        Self {
            read_only,
            read_write,
            network: false,
            max_processes: 512,
            max_file_bytes: 4 << 30,
            max_open_files: 4096,
        }
    }
}

/// What the launcher enforced, in words for the run's header and `wright doctor`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub landlock: String,
    pub network: String,
    pub seccomp: String,
    pub capabilities: String,
    pub limits: String,
}

impl Report {
    pub fn summary(&self) -> String {
        format!(
            "files: {}; network: {}; syscalls: {}; capabilities: {}; limits: {}",
            self.landlock, self.network, self.seccomp, self.capabilities, self.limits
        )
    }
}
