//! The little of HTTP the proxy reads: a request's head (`CONNECT host:port` or a plain
//! request in absolute form, `GET http://host/path`), the head sent on to the server
//! (origin form, `Connection: close` so that each request is decided on its own, and the
//! `Host` the host decided on: the client's own would pick another site of the same
//! server), and the answer to a refused one.

use wright_protocol::NetRefusal;

/// The most a request head may take.
pub const MAX_HEAD: usize = 64 << 10;

/// What the agent's program asked for.
#[derive(Debug, PartialEq, Eq)]
pub enum Request {
    /// A tunnel to `host:port` (HTTPS, or anything else spoken over it).
    Connect { host: String, port: u16 },
    /// A plain HTTP request, and its head rewritten for the server.
    Plain {
        host: String,
        port: u16,
        head: Vec<u8>,
    },
}

/// Parses a complete head (ending in an empty line).
pub fn parse(head: &[u8]) -> Result<Request, NetRefusal> {
    let mut headers = [httparse::EMPTY_HEADER; 100];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err(NetRefusal::BadRequest),
    }
    let method = request.method.ok_or(NetRefusal::BadRequest)?;
    let target = request.path.ok_or(NetRefusal::BadRequest)?;
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(target, None)?;
        return Ok(Request::Connect { host, port });
    }
    let rest = target
        .get(..7)
        .filter(|scheme| scheme.eq_ignore_ascii_case("http://"))
        .map(|_| &target[7..])
        .ok_or(NetRefusal::BadRequest)?;
    let (authority_text, path) = match rest.find(['/', '?']) {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    let (host, port) = authority(authority_text, Some(80))?;
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    let mut out = format!("{method} {path} HTTP/1.1\r\n").into_bytes();
    for header in request.headers.iter() {
        let name = header.name.to_ascii_lowercase();
        // The client's Host is replaced (RFC 9112 §3.2.2): the server must be asked for
        // the host that was allowed, not for another it also serves.
        if matches!(
            name.as_str(),
            "proxy-connection" | "proxy-authorization" | "connection" | "keep-alive" | "host"
        ) {
            continue;
        }
        out.extend_from_slice(header.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(header.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("Host: {authority_text}\r\n").as_bytes());
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Request::Plain {
        host,
        port,
        head: out,
    })
}

/// `host:port` (`[v6]:port`); `default` when the port may be left out.
fn authority(text: &str, default: Option<u16>) -> Result<(String, u16), NetRefusal> {
    if text.contains('@') || text.is_empty() {
        return Err(NetRefusal::BadRequest);
    }
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or(NetRefusal::BadRequest)?;
        (host, after.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let port = match port {
        Some(port) => port.parse().map_err(|_| NetRefusal::BadRequest)?,
        None => default.ok_or(NetRefusal::BadRequest)?,
    };
    if host.is_empty() || port == 0 {
        return Err(NetRefusal::BadRequest);
    }
    Ok((host.to_ascii_lowercase(), port))
}

/// The answer to a refused request: a status and a body that says what happened and how
/// the user allows the host.
pub fn refusal(host: &str, port: u16, reason: NetRefusal) -> Vec<u8> {
    let status = match reason {
        NetRefusal::NotAllowed
        | NetRefusal::PrivateAddress
        | NetRefusal::NoNetwork
        | NetRefusal::OtherName => "403 Forbidden",
        NetRefusal::Unresolved | NetRefusal::Unreachable => "502 Bad Gateway",
        NetRefusal::BadRequest => "400 Bad Request",
    };
    let body = format!("{}\n", refusal_words(host, port, reason));
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// One sentence for the model about a refused connection.
pub fn refusal_words(host: &str, port: u16, reason: NetRefusal) -> String {
    let target = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    match reason {
        NetRefusal::NotAllowed | NetRefusal::PrivateAddress => format!(
            "wright's network proxy refused {target}: {}. Only the hosts the user allowed are reachable from this sandbox; the user can allow this one with --allow-host {target} (or sandbox.allow_hosts in wright's configuration).",
            reason.words()
        ),
        NetRefusal::BadRequest => format!(
            "wright's network proxy refused the request: {}. Use HTTP_PROXY/HTTPS_PROXY (plain HTTP requests and CONNECT tunnels).",
            reason.words()
        ),
        NetRefusal::OtherName => format!(
            "wright's network proxy closed the tunnel to {target}: {}. A tunnel carries TLS for the host it was opened to.",
            reason.words()
        ),
        NetRefusal::Unresolved | NetRefusal::Unreachable | NetRefusal::NoNetwork => {
            format!("wright's network proxy could not reach {target}: {}.", reason.words())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_absolute_requests_parse() {
        assert_eq!(
            parse(b"CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n"),
            Ok(Request::Connect {
                host: "pypi.org".into(),
                port: 443
            })
        );
        let plain = parse(
            b"GET http://Example.test:8080/a?b HTTP/1.1\r\nHost: example.test:8080\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n",
        );
        assert_eq!(
            plain,
            Ok(Request::Plain {
                host: "example.test".into(),
                port: 8080,
                head: b"GET /a?b HTTP/1.1\r\nAccept: */*\r\nHost: Example.test:8080\r\nConnection: close\r\n\r\n".to_vec()
            })
        );
    }

    #[test]
    fn the_server_is_asked_for_the_allowed_host_whatever_host_the_client_named() {
        let Ok(Request::Plain { host, head, .. }) = parse(
            b"GET http://pypi.org/simple/ HTTP/1.1\r\nHost: evil.example\r\nhost: other.example\r\nAccept: */*\r\n\r\n",
        ) else {
            panic!("not a plain request");
        };
        assert_eq!(host, "pypi.org");
        let head = String::from_utf8(head).unwrap();
        assert_eq!(
            head,
            "GET /simple/ HTTP/1.1\r\nAccept: */*\r\nHost: pypi.org\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn origin_form_userinfo_and_missing_ports_are_bad_requests() {
        for bad in [
            &b"GET /local HTTP/1.1\r\nHost: x\r\n\r\n"[..],
            b"GET http://user@host/ HTTP/1.1\r\n\r\n",
            b"CONNECT host HTTP/1.1\r\n\r\n",
            b"GET https://host/ HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(parse(bad), Err(NetRefusal::BadRequest));
        }
    }
}
