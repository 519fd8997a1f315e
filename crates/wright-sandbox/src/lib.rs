//! Where the model's commands run. This crate owns the boundary between wright and the
//! programs the model starts: the environment they see (an allowlist, never the parent's
//! whole environment), the PTY they talk through, and the confinement level.
//!
//! Levels: `landlock` (the default, via `auto`): Landlock, seccomp, no capabilities,
//! rlimits — see `confine`; `none`: commands run as the user, in the workspace, with a
//! scrubbed environment, only when asked for by name. Namespaces and Docker are planned;
//! asking for them fails closed with a clear reason.

pub mod confine;
mod env;
mod mode;
mod pty;
mod sandbox;

pub use env::confined_environment;
pub use env::shell_environment;
pub use mode::SandboxError;
pub use mode::SandboxMode;
pub use pty::PtyProcess;
pub use sandbox::private_dir;
pub use sandbox::Sandbox;
