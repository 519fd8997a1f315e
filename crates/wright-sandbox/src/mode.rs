//! Confinement levels, and the rule that wright never runs unconfined by accident.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxMode {
    /// The best level this machine supports.
    Auto,
    Landlock,
    Namespaces,
    Docker,
    /// No confinement: commands run as the user. Only when asked for by name.
    None,
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("unknown sandbox '{0}'; choose one of auto, landlock, namespaces, docker, none")]
    Unknown(String),
    #[error("the sandbox cannot be set up here, so wright will not run commands: {0}. Pass --sandbox none to run them unconfined")]
    Refused(String),
    /// A path the sandbox binds is not what it was (a link where a directory was): the
    /// words say what was found and how to put it back; no other sandbox helps.
    #[error("wright will not start the sandbox: {0}")]
    Tampered(String),
    #[error("cannot start a terminal: {0}")]
    Spawn(String),
    /// The sandbox's check refused (its words, whole): nothing starts in that sandbox.
    #[error("{0}")]
    CheckFailed(String),
    #[error("terminal I/O failed: {0}")]
    Io(#[from] std::io::Error),
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            SandboxMode::Auto => "auto",
            SandboxMode::Landlock => "landlock",
            SandboxMode::Namespaces => "namespaces",
            SandboxMode::Docker => "docker",
            SandboxMode::None => "none",
        };
        f.write_str(name)
    }
}

impl FromStr for SandboxMode {
    type Err = SandboxError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "auto" => Ok(SandboxMode::Auto),
            "landlock" => Ok(SandboxMode::Landlock),
            "namespaces" => Ok(SandboxMode::Namespaces),
            "docker" => Ok(SandboxMode::Docker),
            "none" => Ok(SandboxMode::None),
            other => Err(SandboxError::Unknown(other.to_string())),
        }
    }
}
