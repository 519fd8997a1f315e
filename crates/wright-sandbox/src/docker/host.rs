//! Which Docker engine the sandbox speaks to, and how the workspace reaches its container.
//!
//! The engine is an address the user gives (`--docker-host`, the `sandbox.docker_host`
//! key, `DOCKER_HOST`): `unix://PATH` (this machine's engine) or `tcp://HOST:PORT` (an
//! engine elsewhere, in plain HTTP). TLS (`DOCKER_TLS_VERIFY`, `https://`) and `ssh://`
//! are refused with a sentence saying so, never reached some other way. The same address
//! is handed to the `docker` client the terminal runs (`-H`), so both talk to one engine
//! whatever the client's configuration or a repository's `.docker` says.
//!
//! The workspace mode is explicit, never guessed from paths: `bind` mounts the workspace
//! (only an engine on this machine sees it), `copy` sends it through the engine's archive
//! API (see `copy`). The default is `bind` for a Unix socket and `copy` for anything else.

use super::engine::refused;
use crate::mode::SandboxError;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// The variable the Docker client itself reads; wright reads it too (as the
/// `sandbox.docker_host` key's environment value).
pub const HOST_VAR: &str = "DOCKER_HOST";
/// Where an engine on this machine listens when nothing is said.
const DEFAULT_SOCKET: &str = "/var/run/docker.sock";

/// An engine's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DockerHost {
    /// An engine on this machine, on its Unix socket.
    Unix(PathBuf),
    /// An engine reached over TCP, without TLS: `HOST:PORT`.
    Tcp(String),
}

impl DockerHost {
    /// The engine `given` names (a setting), else `DOCKER_HOST`, else the usual socket.
    /// `DOCKER_TLS_VERIFY` set asks for TLS, which this build cannot speak: refused.
    pub fn resolve(given: Option<&str>) -> Result<Self, SandboxError> {
        let from_env = std::env::var(HOST_VAR).ok();
        let text = given
            .filter(|text| !text.trim().is_empty())
            .or(from_env.as_deref().filter(|text| !text.trim().is_empty()));
        let host = match text {
            Some(text) => text.parse()?,
            None => Self::Unix(PathBuf::from(DEFAULT_SOCKET)),
        };
        let tls = std::env::var("DOCKER_TLS_VERIFY").is_ok_and(|v| !v.is_empty() && v != "0");
        if tls && matches!(host, Self::Tcp(_)) {
            return Err(refused(format!(
                "DOCKER_TLS_VERIFY asks for TLS to the Docker engine at {host}, and this build of wright speaks plain TCP or a Unix socket only; reach the engine through an SSH tunnel to its socket (`ssh -NL /tmp/docker.sock:/var/run/docker.sock HOST`, then --docker-host unix:///tmp/docker.sock --docker-workspace copy), or unset DOCKER_TLS_VERIFY for an engine on a trusted network"
            )));
        }
        Ok(host)
    }

    /// Whether the engine runs on this machine (it sees this machine's files).
    pub fn is_local(&self) -> bool {
        matches!(self, Self::Unix(_))
    }

    /// The address as the `docker` client's `-H` takes it.
    pub fn cli_address(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for DockerHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unix(path) => write!(f, "unix://{}", path.display()),
            Self::Tcp(address) => write!(f, "tcp://{address}"),
        }
    }
}

impl FromStr for DockerHost {
    type Err = SandboxError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if let Some(path) = text.strip_prefix("unix://") {
            if !path.starts_with('/') {
                return Err(refused(format!(
                    "the Docker host {text} names no absolute socket path (unix:///var/run/docker.sock)"
                )));
            }
            return Ok(Self::Unix(PathBuf::from(path)));
        }
        if let Some(address) = text
            .strip_prefix("tcp://")
            .or_else(|| text.strip_prefix("http://"))
        {
            let address = address.trim_end_matches('/');
            let valid = address.rsplit_once(':').is_some_and(|(host, port)| {
                !host.is_empty() && !address.contains('/') && port.parse::<u16>().is_ok()
            });
            if !valid {
                return Err(refused(format!(
                    "the Docker host {text} is not tcp://HOST:PORT (for example tcp://10.0.0.5:2375)"
                )));
            }
            return Ok(Self::Tcp(address.to_string()));
        }
        let scheme = text.split_once("://").map_or(text, |(scheme, _)| scheme);
        let why = match scheme {
            "ssh" => "ssh:// engines are not supported by this build of wright: forward the engine's socket with `ssh -NL /tmp/docker.sock:/var/run/docker.sock HOST` and use --docker-host unix:///tmp/docker.sock --docker-workspace copy",
            "https" | "tls" => "TLS to the Docker engine is not supported by this build of wright: use an SSH tunnel to its socket, or tcp:// on a trusted network",
            "npipe" => "named pipes are Windows' and wright runs on Linux",
            _ => "give unix:///PATH/TO/docker.sock or tcp://HOST:PORT",
        };
        Err(refused(format!("the Docker host {text}: {why}")))
    }
}

/// How the workspace reaches the container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkspaceMode {
    /// Bind-mounted at the same path: the engine must see this machine's files.
    Bind,
    /// Uploaded at creation through the archive API, and synchronised around each
    /// command (see `copy`): any engine.
    Copy,
}

impl WorkspaceMode {
    /// `given`, else `bind` for an engine on this machine and `copy` for another.
    pub fn for_host(given: Option<Self>, host: &DockerHost) -> Self {
        given.unwrap_or(if host.is_local() {
            Self::Bind
        } else {
            Self::Copy
        })
    }
}

impl FromStr for WorkspaceMode {
    type Err = SandboxError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "bind" => Ok(Self::Bind),
            "copy" => Ok(Self::Copy),
            other => Err(refused(format!(
                "the Docker workspace mode {other:?} is neither bind nor copy"
            ))),
        }
    }
}

impl fmt::Display for WorkspaceMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Bind => "bind",
            Self::Copy => "copy",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_read_and_the_unsupported_ones_say_why() {
        assert_eq!(
            "unix:///run/d.sock".parse::<DockerHost>().unwrap(),
            DockerHost::Unix("/run/d.sock".into())
        );
        let tcp: DockerHost = "tcp://10.0.0.5:2375".parse().unwrap();
        assert_eq!(tcp, DockerHost::Tcp("10.0.0.5:2375".into()));
        assert_eq!(tcp.cli_address(), "tcp://10.0.0.5:2375");
        assert!(!tcp.is_local());
        for (bad, words) in [
            ("ssh://me@box", "ssh -NL"),
            ("https://box:2376", "TLS"),
            ("tcp://box", "tcp://HOST:PORT"),
            ("tcp://box:99999", "tcp://HOST:PORT"),
            ("unix://relative.sock", "absolute"),
            ("box:2375", "unix:///"),
        ] {
            let err = bad.parse::<DockerHost>().unwrap_err().to_string();
            assert!(err.contains(words), "{bad}: {err}");
        }
    }

    #[test]
    fn the_mode_defaults_by_where_the_engine_is() {
        let local = DockerHost::Unix("/var/run/docker.sock".into());
        let remote = DockerHost::Tcp("127.0.0.1:2375".into());
        assert_eq!(WorkspaceMode::for_host(None, &local), WorkspaceMode::Bind);
        assert_eq!(WorkspaceMode::for_host(None, &remote), WorkspaceMode::Copy);
        let copy = Some(WorkspaceMode::Copy);
        assert_eq!(WorkspaceMode::for_host(copy, &local), WorkspaceMode::Copy);
        assert!("mount".parse::<WorkspaceMode>().is_err());
    }
}
