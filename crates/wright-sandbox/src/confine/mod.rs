//! Confinement of the model's commands on Linux, applied by wright's own binary acting as
//! a launcher: `wright __sandbox-exec POLICY -- PROGRAM ARGS…` restricts itself, then
//! execs the program, which inherits every restriction and cannot lift one.
//!
//! A separate launcher process (rather than hooks between fork and exec) keeps the setup
//! in a single-threaded process where opening files and allocating are safe. Layers:
//! rlimits; capabilities dropped (also as root); Landlock for files (read-only toolchains,
//! read-write workspace and private tmp) and TCP; seccomp refusing non-Unix sockets,
//! io_uring, ptrace, other processes' memory, keyrings and terminal injection (TIOCSTI).
//! Fail closed: if Landlock cannot be enforced, the launcher refuses to run anything.

mod cgroup;
mod files;
mod join;
mod launcher;
mod limits;
mod mounts;
mod namespaces;
mod pid;
mod policy;
mod relay;
mod root;
mod syscalls;

pub use cgroup::Cgroup;
pub use launcher::launcher_main;
pub use launcher::SANDBOX_EXEC_ARG;
pub use policy::default_memory_limit;
pub use policy::Level;
pub use policy::Namespaces;
pub use policy::Policy;
pub use policy::Report;
