//! One connection the agent's side tried to open to the network (through wright's proxy
//! from the sandbox, or by the `fetch` tool), as it is logged: where to, what wright
//! decided, and how many bytes went each way.

use serde::Deserialize;
use serde::Serialize;

/// What opened the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetVia {
    /// A command in the sandbox, through wright's proxy (HTTP CONNECT or plain HTTP).
    Proxy,
    /// The `fetch` tool, outside the sandbox, under the same rules.
    Fetch,
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetRefusal {
    /// No allowed host (and port) covers it.
    NotAllowed,
    /// The name resolves to a loopback, link-local or private address, which only a host
    /// allowed by its exact name may reach.
    PrivateAddress,
    /// The name did not resolve.
    Unresolved,
    /// Allowed, but the server did not answer.
    Unreachable,
    /// Not a request the proxy understands.
    BadRequest,
    /// The run has no network at all (`fetch` without `--network` or `--allow-host`).
    NoNetwork,
    /// A CONNECT tunnel whose TLS names another host than the allowed one it was opened
    /// to (or that carries no TLS).
    OtherName,
}

impl NetRefusal {
    pub fn words(self) -> &'static str {
        match self {
            Self::NotAllowed => "not an allowed host and port",
            Self::PrivateAddress => {
                "a loopback, link-local or private address (reachable only for a host allowed by its exact name)"
            }
            Self::Unresolved => "the name does not resolve",
            Self::Unreachable => "the server did not answer",
            Self::BadRequest => "not a request the proxy understands",
            Self::NoNetwork => "the network is off for this run",
            Self::OtherName => {
                "its TLS names another host than the one it was opened to, or it is not TLS"
            }
        }
    }
}

/// What wright decided about a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum NetVerdict {
    Allowed,
    Refused { reason: NetRefusal },
}

/// One connection, logged when it ended (or was refused).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetConnection {
    pub via: NetVia,
    /// The host as asked for (a name or an address).
    pub host: String,
    pub port: u16,
    #[serde(flatten)]
    pub verdict: NetVerdict,
    /// Bytes from the agent's side to the server, and back.
    pub bytes_sent: u64,
    pub bytes_received: u64,
}
