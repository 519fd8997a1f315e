//! Turning `--sandbox` into a working sandbox for one conversation: its policy, its
//! private directory (removed at the end), the environment its commands get, and the
//! words that say what is enforced.

use anyhow::Context;
use anyhow::Result;
use std::path::PathBuf;
use wright_sandbox::confine::Policy;
use wright_sandbox::confine::Report;
use wright_sandbox::confined_environment;
use wright_sandbox::private_dir;
use wright_sandbox::shell_environment;
use wright_sandbox::Sandbox;
use wright_sandbox::SandboxMode;
use wright_tools::Workspace;

pub struct SandboxSetup {
    pub sandbox: Sandbox,
    pub env: Vec<(String, String)>,
    report: Option<Report>,
    private: Option<PathBuf>,
}

impl SandboxSetup {
    pub fn new(mode: SandboxMode, workspace: &Workspace, conversation: &str) -> Result<Self> {
        if mode == SandboxMode::None {
            return Ok(Self {
                sandbox: Sandbox::unconfined(),
                env: shell_environment(std::env::vars()),
                report: None,
                private: None,
            });
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let private = private_dir(&std::env::temp_dir(), conversation)
            .context("cannot create the conversation's private directory")?;
        let policy = Policy::for_workspace(workspace.root(), &private, home.as_deref());
        let launcher = std::env::current_exe()
            .context("cannot find the wright binary to launch the sandbox")?;
        let setup = Sandbox::for_mode(mode, launcher, &policy);
        let (sandbox, report) = match setup {
            Ok(ok) => ok,
            Err(err) => {
                let _ = std::fs::remove_dir_all(&private);
                return Err(err.into());
            }
        };
        let env = confined_environment(std::env::vars(), &private, home.as_deref());
        Ok(Self {
            sandbox,
            env,
            report,
            private: Some(private),
        })
    }

    pub fn describe(&self) -> String {
        match &self.report {
            Some(report) => report.summary(),
            None => {
                "none: commands run as you, in the workspace, with a scrubbed environment".into()
            }
        }
    }
}

impl Drop for SandboxSetup {
    fn drop(&mut self) {
        if let Some(private) = &self.private {
            let _ = std::fs::remove_dir_all(private);
        }
    }
}
