//! Whether a package registry answers, before an `npx`/`uvx` server is run as written to
//! download from it (its host allowed through wright's proxy, or the network on): without
//! an answer, npm and uv retry until the server's start deadline, 30 s of silence at every
//! run. So each host is asked first — its name resolved and its HTTPS port connected to,
//! within a few seconds — and a host that does not answer fails the server at once, named,
//! with the fix. Only a TCP connection is made: nothing is sent.

use std::time::Duration;

/// How long a registry's host has to answer.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// Why a host did not answer.
#[derive(Debug, thiserror::Error)]
pub enum Unanswered {
    #[error("its name does not resolve: {0}")]
    NoAddress(std::io::Error),
    #[error("its name resolves to no address")]
    NoneResolved,
    #[error("no connection to port {port}: {error}")]
    NoConnection { port: u16, error: std::io::Error },
    #[error("no answer within {} s", .0.as_secs())]
    TimedOut(Duration),
}

/// Whether `host` answers on `port` within `within`.
pub async fn answers(host: &str, port: u16, within: Duration) -> Result<(), Unanswered> {
    let attempt = async {
        let addresses: Vec<_> = tokio::net::lookup_host((host, port))
            .await
            .map_err(Unanswered::NoAddress)?
            .collect();
        let mut last = Unanswered::NoneResolved;
        for address in addresses {
            match tokio::net::TcpStream::connect(address).await {
                Ok(_) => return Ok(()),
                Err(error) => last = Unanswered::NoConnection { port, error },
            }
        }
        Err(last)
    };
    tokio::time::timeout(within, attempt)
        .await
        .unwrap_or(Err(Unanswered::TimedOut(within)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_name_that_never_resolves_does_not_answer_and_fast() {
        // `.invalid` never resolves (RFC 6761), with or without a network.
        let err = answers("registry.wright-test.invalid", 443, ANSWER_WITHIN)
            .await
            .unwrap_err();
        assert!(
            matches!(err, Unanswered::NoAddress(_) | Unanswered::TimedOut(_)),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_closed_port_does_not_answer_and_a_listening_one_does() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        answers("127.0.0.1", port, ANSWER_WITHIN).await.unwrap();
        drop(listener);
        let err = answers("127.0.0.1", port, ANSWER_WITHIN).await.unwrap_err();
        assert!(
            matches!(err, Unanswered::NoConnection { port: p, .. } if p == port),
            "{err}"
        );
    }
}
