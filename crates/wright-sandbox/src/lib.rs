//! Where the model's commands run. This crate owns the boundary between wright and the
//! programs the model starts: the environment they see (an allowlist, never the parent's
//! whole environment), the PTY they talk through, and the confinement level.
//!
//! Today the only level is `none`: commands run as the user, in the workspace, with a
//! scrubbed environment. Confinement (Landlock, seccomp, namespaces, Docker) will plug in
//! behind `SandboxMode`; until it does, asking for it fails closed with a clear reason.

mod env;
mod mode;
mod pty;

pub use env::shell_environment;
pub use mode::SandboxError;
pub use mode::SandboxMode;
pub use pty::PtyProcess;
