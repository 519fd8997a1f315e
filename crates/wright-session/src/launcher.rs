//! The program a confined command is started through: it applies the policy (Landlock,
//! seccomp, namespaces) to itself, then execs the command (see `wright_sandbox::confine`).
//!
//! It used to be `current_exe()` always, which is only right in a program whose `main`
//! starts with `launch_if_asked()` — the `wright` binary. Inside a test binary or another
//! program embedding this library, `current_exe()` is a program that knows nothing of the
//! launcher's arguments. So the launcher is a setting of the session: the `wright` binary
//! names itself (`Launcher::this_program`), everything else finds the small dedicated
//! `wright-launcher` binary this crate builds (`Launcher::find`), or names one.
//! A separate process (not a hook between fork and exec) keeps the launcher's setup out
//! of a multi-threaded async program, which is why there must be a program at all.

use anyhow::bail;
use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;

/// The dedicated launcher's file name.
pub const LAUNCHER_NAME: &str = "wright-launcher";

/// The program confined commands are started through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher(PathBuf);

impl Launcher {
    /// This program: for one whose `main` calls `launch_if_asked()` before anything else.
    pub fn this_program() -> Result<Self> {
        let exe = std::env::current_exe()
            .context("cannot find the wright binary to launch the sandbox")?;
        Ok(Self(exe))
    }

    /// A given launcher program (`wright` or `wright-launcher`, or any program that
    /// calls `launch_if_asked()` first).
    pub fn program(path: impl Into<PathBuf>) -> Self {
        Self(path.into())
    }

    /// The `wright-launcher` binary beside this program, or one directory up (where a
    /// test binary in Cargo's `deps/` finds the binaries of its package), else `wright`
    /// in those places. Only the program's own directory is searched, never `PATH`: a
    /// launcher runs outside the sandbox, so it must come from where this program came.
    pub fn find() -> Result<Self> {
        let exe = std::env::current_exe().context("cannot find this program's directory")?;
        let dirs: Vec<&Path> = exe.ancestors().skip(1).take(2).collect();
        for name in [LAUNCHER_NAME, "wright"] {
            for dir in &dirs {
                let candidate = dir.join(name);
                if candidate.is_file() {
                    return Ok(Self(candidate));
                }
            }
        }
        bail!(
            "cannot find {LAUNCHER_NAME} (nor wright) beside {}: install it there, or give the session a launcher",
            exe.display()
        )
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

/// Runs the sandbox launcher, and never returns, when this process was started as one
/// (`PROGRAM __sandbox-exec POLICY -- COMMAND…`); otherwise returns at once. Call it
/// first in `main`, single-threaded, before anything else starts.
pub fn launch_if_asked() {
    let mut args = std::env::args_os().skip(1);
    if args
        .next()
        .is_some_and(|first| first == wright_sandbox::confine::SANDBOX_EXEC_ARG)
    {
        wright_sandbox::confine::launcher_main(args.collect());
    }
}
