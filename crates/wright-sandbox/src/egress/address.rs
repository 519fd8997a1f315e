//! Where an allowed host is: wright resolves names itself (the sandbox has no DNS), and
//! refuses addresses a public name has no business pointing at — loopback, link-local
//! (cloud metadata), private, shared (CGNAT), unspecified, multicast — unless the user
//! allowed that exact name. All the addresses a name resolves to are checked, and the
//! connection goes to one of those checked, so a name cannot change its answer between
//! the check and the connection.
//!
//! `WRIGHT_PROXY_RESOLVE` (`name=address,name=address`), read only when set, maps names
//! the way curl's `--resolve` does, for wright's own tests (names standing for hosts on
//! 127.0.0.1). It grants nothing: the allow-list and the rule above still apply.

use super::allow::Grant;
use std::net::IpAddr;
use std::net::SocketAddr;
use std::net::ToSocketAddrs;
use wright_protocol::NetRefusal;

/// The variable that maps names for tests.
pub const RESOLVE_VAR: &str = "WRIGHT_PROXY_RESOLVE";

/// The addresses to connect to for `host:port`, all of them permitted by `grant`.
pub fn resolve(host: &str, port: u16, grant: Grant) -> Result<Vec<SocketAddr>, NetRefusal> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = if let Ok(ip) = bare.parse::<IpAddr>() {
        vec![SocketAddr::new(ip, port)]
    } else if let Some(ip) = mapped(bare) {
        vec![SocketAddr::new(ip, port)]
    } else {
        (bare, port)
            .to_socket_addrs()
            .map_err(|_| NetRefusal::Unresolved)?
            .collect()
    };
    if addresses.is_empty() {
        return Err(NetRefusal::Unresolved);
    }
    if !grant.exact && addresses.iter().any(|a| !is_public(a.ip())) {
        return Err(NetRefusal::PrivateAddress);
    }
    Ok(addresses)
}

fn mapped(host: &str) -> Option<IpAddr> {
    let map = std::env::var(RESOLVE_VAR).ok()?;
    map.split(',').find_map(|entry| {
        let (name, ip) = entry.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case(host)
            .then(|| ip.trim().parse().ok())
            .flatten()
    })
}

/// An address on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0)
                || (a == 198 && (18..20).contains(&b))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || first == 0x2001 && v6.segments()[1] == 0x0db8
                || first == 0x64 && v6.segments()[1] == 0xff9b)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_special_addresses_are_not_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["1.1.1.1", "151.101.0.223", "2a04:4e42::223"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn only_an_exact_grant_reaches_a_private_address() {
        let glob = Grant { exact: false };
        let exact = Grant { exact: true };
        assert_eq!(
            resolve("127.0.0.1", 80, glob),
            Err(NetRefusal::PrivateAddress)
        );
        assert_eq!(
            resolve("[::1]", 80, exact),
            Ok(vec!["[::1]:80".parse().unwrap()])
        );
    }
}
