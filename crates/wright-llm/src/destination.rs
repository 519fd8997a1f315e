//! Where a base URL sends the repository's code: this machine, the local network, or
//! elsewhere. Decided from the URL alone, never by resolving a name: a name other than
//! `localhost` itself is `remote` (what it resolves to can change between the check and
//! the request; `*.localhost` may go to DNS). A client for a non-remote server never uses
//! a proxy (see `Client::new`), so the connection goes where the class says.

use std::net::IpAddr;
use wright_protocol::Destination;

/// The class of the server at `base_url` (`remote` when it does not parse).
pub fn destination(base_url: &str) -> Destination {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return Destination::Remote;
    };
    let Some(host) = url.host_str() else {
        return Destination::Remote;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return of_ip(ip);
    }
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    if name == "localhost" {
        Destination::Loopback
    } else {
        Destination::Remote
    }
}

fn of_ip(ip: IpAddr) -> Destination {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    match ip {
        // Connecting to the unspecified address reaches this machine.
        ip if ip.is_loopback() || ip.is_unspecified() => Destination::Loopback,
        IpAddr::V4(v4) if v4.is_private() || v4.is_link_local() => Destination::LocalNetwork,
        IpAddr::V6(v6) if (v6.segments()[0] & 0xfe00) == 0xfc00 => Destination::LocalNetwork,
        IpAddr::V6(v6) if (v6.segments()[0] & 0xffc0) == 0xfe80 => Destination::LocalNetwork,
        _ => Destination::Remote,
    }
}

/// `host:port` of a base URL, as consent records it.
pub fn host_and_port(base_url: &str) -> String {
    match reqwest::Url::parse(base_url) {
        Ok(url) => match (url.host_str(), url.port_or_known_default()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_string(),
            _ => base_url.to_string(),
        },
        Err(_) => base_url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        for (url, class) in [
            ("http://127.0.0.1:11434/v1", Destination::Loopback),
            ("http://127.9.9.9/v1", Destination::Loopback),
            ("http://localhost:8080/v1", Destination::Loopback),
            ("http://LOCALHOST./v1", Destination::Loopback),
            ("http://[::1]:8000/v1", Destination::Loopback),
            ("http://[::ffff:127.0.0.1]/v1", Destination::Loopback),
            ("http://192.168.1.20:11434/v1", Destination::LocalNetwork),
            ("http://10.0.0.5/v1", Destination::LocalNetwork),
            ("http://[fd00::5]/v1", Destination::LocalNetwork),
            ("https://api.openai.com/v1", Destination::Remote),
            ("http://8.8.8.8/v1", Destination::Remote),
            ("http://localhost.evil.example/v1", Destination::Remote),
            ("http://foo.localhost/v1", Destination::Remote),
            ("http://0.0.0.0:11434/v1", Destination::Loopback),
            ("not a url", Destination::Remote),
        ] {
            assert_eq!(destination(url), class, "{url}");
        }
        assert_eq!(host_and_port("https://api.example/v1"), "api.example:443");
        assert_eq!(host_and_port("http://10.0.0.5:8000/v1"), "10.0.0.5:8000");
    }
}
