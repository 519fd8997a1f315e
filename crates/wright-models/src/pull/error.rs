//! Why a download failed, in words that say what to do next: pull again (the part file
//! is kept), fetch the file by hand (no network), or nothing can be kept (a bad checksum).
//!
//! What it guarantees: a machine that cannot reach the server gets one sentence naming the
//! URL to fetch by hand and the `wright model add` command that imports the file; a
//! variant that deletes the part file says so.

use crate::error::NotGguf;
use crate::error::StoreError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error(transparent)]
    Store(#[from] StoreError),

    #[error("unknown model '{name}': the catalog has {}; or give the https:// URL of a .gguf file", known.join(", "))]
    UnknownModel { name: String, known: Vec<String> },

    #[error(
        "{url} does not name a .gguf file (its last path segment is the name it is stored under)"
    )]
    NotAGgufUrl { url: String },

    #[error(
        "wright cannot reach {host} ({reason}) to download {file}: download {url} by hand and import it with `wright model add ~/Downloads/{file}` (or wherever you saved it)"
    )]
    Unreachable {
        host: String,
        reason: Unreachable,
        url: String,
        file: String,
    },

    #[error("{url} answered {status}")]
    Status { url: String, status: u16 },

    #[error(
        "the download of {file} stopped at {done} of {} bytes{}; pull again to resume from {}",
        total.map_or("?".to_string(), |t| t.to_string()),
        source.as_ref().map_or(String::new(), |s| format!(" ({})", causes(s))),
        part.display()
    )]
    Interrupted {
        file: String,
        part: PathBuf,
        done: u64,
        total: Option<u64>,
        /// `None` when the connection ended cleanly, only too early.
        #[source]
        source: Option<reqwest::Error>,
    },

    #[error(
        "{file} from {url} is {got} bytes, not the catalog's {expected}; the download was deleted"
    )]
    SizeMismatch {
        file: String,
        url: String,
        expected: u64,
        got: u64,
    },

    #[error("{file} from {url} has sha256 {got}, not the catalog's {expected}; the download was deleted")]
    ChecksumMismatch {
        file: String,
        url: String,
        expected: String,
        got: String,
    },

    #[error("what {url} sent is not a GGUF model ({reason}); the download was deleted")]
    NotGgufDownload { url: String, reason: NotGguf },

    #[error("what {url} sent is GGUF version {version}, which wright does not read (versions 2 and 3 are); the download was deleted")]
    GgufVersionDownload { url: String, version: u32 },

    #[error("another wright is already downloading into {}; wait for it to finish", part.display())]
    Busy { part: PathBuf },

    #[error("a different file named {file} is already in the store ({}); remove it before pulling", dir.display())]
    Exists { file: String, dir: PathBuf },

    #[error("cannot set up the HTTP client: {0}")]
    Client(#[source] reqwest::Error),

    #[error("request to {url} failed: {}", causes(source))]
    Request {
        url: String,
        #[source]
        source: reqwest::Error,
    },
}

/// An error with its sources, `outer: inner: innermost`: reqwest's own message alone
/// ("error decoding response body") does not say what happened.
fn causes(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(current) = source {
        let more = current.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = current.source();
    }
    text
}

/// Why the server could not be reached, as far as the error tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unreachable {
    #[error("its name does not resolve")]
    Dns,
    #[error("the connection was refused")]
    Refused,
    #[error("the connection timed out")]
    TimedOut,
    #[error("no route to it")]
    NoRoute,
    #[error("no connection")]
    Other,
}

impl Unreachable {
    /// Reads the reason out of a connect error's chain of sources.
    pub(crate) fn of(err: &reqwest::Error) -> Unreachable {
        if err.is_timeout() {
            return Unreachable::TimedOut;
        }
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
        while let Some(current) = source {
            if let Some(io) = current.downcast_ref::<std::io::Error>() {
                match io.kind() {
                    std::io::ErrorKind::ConnectionRefused => return Unreachable::Refused,
                    std::io::ErrorKind::TimedOut => return Unreachable::TimedOut,
                    std::io::ErrorKind::NetworkUnreachable
                    | std::io::ErrorKind::HostUnreachable => return Unreachable::NoRoute,
                    _ => {}
                }
            }
            // hyper-util's connector wraps resolver failures in an error whose message is
            // "dns error"; its type is private, so its words are all there is to go on.
            if current.to_string().starts_with("dns error") {
                return Unreachable::Dns;
            }
            source = current.source();
        }
        Unreachable::Other
    }
}
