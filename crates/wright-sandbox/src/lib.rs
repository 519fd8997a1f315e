//! Where the model's commands run. This crate owns the boundary between wright and the
//! programs the model starts: the environment they see (an allowlist, never the parent's
//! whole environment), the PTY they talk through, and the confinement level.
//!
//! Levels: `landlock` (the default, via `auto`): Landlock, seccomp, no capabilities,
//! rlimits — see `confine`; `namespaces`: the same, refusing to run without mount and
//! network namespaces; `docker`: one container per conversation — see `docker`; `none`:
//! commands run as the user, in the workspace, with a scrubbed environment, only when
//! asked for by name. A level that cannot be had here fails closed with a clear reason.

pub mod confine;
mod disk;
pub mod docker;
pub mod egress;
mod env;
pub mod git;
mod leftovers;
mod mode;
mod pinned;
mod private;
mod protected;
mod pty;
mod reap;
mod remote;
mod run;
mod sandbox;
mod verdict;

pub use disk::DiskUse;
pub use env::confined_environment;
pub use env::container_environment;
pub use env::set_for_shell;
pub use env::shell_environment;
pub use leftovers::dead_private_dirs;
pub use leftovers::reap as reap_dead_runs;
pub use leftovers::remove_tree;
pub use mode::SandboxError;
pub use mode::SandboxMode;
pub use private::PrivateDir;
pub use protected::pins as protection_pins;
pub use protected::Protected;
pub use protected::ProtectedPath;
pub use protected::Why as ProtectedWhy;
pub use pty::PtyProcess;
pub use reap::become_subreaper;
pub use reap::kill_leftovers;
pub use reap::LiveRun;
pub use run::finish;
pub use run::Captured;
pub use run::RunLimits;
pub use sandbox::Checking;
pub use sandbox::PendingCheck;
pub use sandbox::Sandbox;
pub use verdict::BackgroundCheck;
pub use verdict::Settler;
pub use verdict::Verdict;
