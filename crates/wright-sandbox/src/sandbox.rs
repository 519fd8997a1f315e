//! The sandbox a conversation's commands run in: how to start a program under it, and a
//! check, before the first command, that the confinement really holds on this machine.

use crate::confine::Policy;
use crate::confine::Report;
use crate::confine::SANDBOX_EXEC_ARG;
use crate::mode::SandboxError;
use crate::mode::SandboxMode;
use std::path::Path;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Sandbox {
    /// `None`: commands run unconfined (only with `--sandbox none`).
    confined: Option<Confined>,
}

#[derive(Debug, Clone)]
struct Confined {
    launcher: PathBuf,
    policy_json: String,
}

impl Sandbox {
    pub fn unconfined() -> Self {
        Self { confined: None }
    }

    /// Commands run through `launcher` (the `wright` binary) under `policy`.
    pub fn confined(launcher: PathBuf, policy: &Policy) -> Result<Self, SandboxError> {
        let policy_json = serde_json::to_string(policy)
            .map_err(|e| SandboxError::Spawn(format!("cannot encode the sandbox policy: {e}")))?;
        Ok(Self {
            confined: Some(Confined {
                launcher,
                policy_json,
            }),
        })
    }

    /// Builds the sandbox for `mode`, and checks it works here (fail closed).
    pub fn for_mode(
        mode: SandboxMode,
        launcher: PathBuf,
        policy: &Policy,
    ) -> Result<(Self, Option<Report>), SandboxError> {
        match mode {
            SandboxMode::None => Ok((Self::unconfined(), None)),
            SandboxMode::Auto | SandboxMode::Landlock | SandboxMode::Namespaces => {
                let mut policy = policy.clone();
                policy.require_namespaces = mode == SandboxMode::Namespaces;
                let sandbox = Self::confined(launcher, &policy)?;
                let report = sandbox.check()?;
                Ok((sandbox, Some(report)))
            }
            SandboxMode::Docker => Err(SandboxError::Unavailable(mode)),
        }
    }

    pub fn is_confined(&self) -> bool {
        self.confined.is_some()
    }

    /// The program and arguments that run `program args` inside the sandbox.
    pub fn wrap(&self, program: &str, args: &[&str]) -> (String, Vec<String>) {
        match &self.confined {
            None => (
                program.to_string(),
                args.iter().map(|a| a.to_string()).collect(),
            ),
            Some(confined) => {
                let mut wrapped = vec![
                    SANDBOX_EXEC_ARG.to_string(),
                    confined.policy_json.clone(),
                    "--".to_string(),
                    program.to_string(),
                ];
                wrapped.extend(args.iter().map(|a| a.to_string()));
                (confined.launcher.display().to_string(), wrapped)
            }
        }
    }

    /// Runs the launcher in report mode: everything is applied, nothing is run.
    pub fn check(&self) -> Result<Report, SandboxError> {
        let Some(confined) = &self.confined else {
            return Err(SandboxError::Refused("no sandbox to check".into()));
        };
        let output = std::process::Command::new(&confined.launcher)
            .args([SANDBOX_EXEC_ARG, &confined.policy_json, "--report"])
            .env_clear()
            .output()
            .map_err(|e| SandboxError::Spawn(format!("{}: {e}", confined.launcher.display())))?;
        if !output.status.success() {
            let reason = String::from_utf8_lossy(&output.stderr);
            let reason = reason.trim().trim_start_matches("wright sandbox: ");
            return Err(SandboxError::Refused(reason.to_string()));
        }
        serde_json::from_slice(&output.stdout)
            .map_err(|e| SandboxError::Refused(format!("unreadable sandbox report: {e}")))
    }
}

/// The conversation's private directory: `tmp/` (TMPDIR) and `home/` (HOME), 0700.
pub fn private_dir(base: &Path, conversation: &str) -> Result<PathBuf, SandboxError> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = base.join(format!("wright-{conversation}"));
    for sub in ["tmp", "home"] {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir.join(sub))?;
    }
    Ok(dir.canonicalize()?)
}
