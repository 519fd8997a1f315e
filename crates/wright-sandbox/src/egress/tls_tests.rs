//! The ClientHello reader on a real ClientHello and on ones cut, split and broken.

use super::*;

/// A ClientHello as Python's `ssl` (OpenSSL) sends it for `Files.PyPI.org`:
/// `ctx.wrap_bio(MemoryBIO(), out, server_hostname='Files.PyPI.org').do_handshake()`, then
/// `out.read()`.
const REAL: &[u8] = include_bytes!("client_hello.bin");

/// The handshake message of a record-framed hello, and records of at most `size` bytes
/// carrying it.
fn reframed(hello: &[u8], size: usize) -> Vec<u8> {
    let message = &hello[5..];
    let mut out = Vec::new();
    for chunk in message.chunks(size) {
        out.extend_from_slice(&[HANDSHAKE, 3, 1]);
        out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
        out.extend_from_slice(chunk);
    }
    out
}

/// A minimal ClientHello with `extensions` (none at all when `None`).
fn hello_with(extensions: Option<&[u8]>) -> Vec<u8> {
    let mut body = vec![3, 3];
    body.extend_from_slice(&[0u8; 32]);
    body.extend_from_slice(&[0]); // no session id
    body.extend_from_slice(&[0, 2, 0x13, 0x01]); // one cipher suite
    body.extend_from_slice(&[1, 0]); // null compression
    if let Some(extensions) = extensions {
        body.extend_from_slice(&(extensions.len() as u16).to_be_bytes());
        body.extend_from_slice(extensions);
    }
    let mut message = vec![CLIENT_HELLO, 0];
    message.extend_from_slice(&(body.len() as u16).to_be_bytes());
    message.extend_from_slice(&body);
    let mut record = vec![HANDSHAKE, 3, 1];
    record.extend_from_slice(&(message.len() as u16).to_be_bytes());
    record.extend_from_slice(&message);
    record
}

#[test]
fn a_real_hello_names_its_host() {
    assert_eq!(read_hello(REAL), Hello::Named("files.pypi.org".into()));
    // The application data after it changes nothing.
    let mut more = REAL.to_vec();
    more.extend_from_slice(b"\x17\x03\x03\x00\x05hello");
    assert_eq!(read_hello(&more), Hello::Named("files.pypi.org".into()));
}

#[test]
fn a_hello_cut_short_needs_more_and_one_split_over_records_is_read_whole() {
    for n in 0..REAL.len() {
        assert_eq!(read_hello(&REAL[..n]), Hello::Incomplete, "{n} bytes");
    }
    for size in [1, 7, 100] {
        assert_eq!(
            read_hello(&reframed(REAL, size)),
            Hello::Named("files.pypi.org".into()),
            "records of {size}"
        );
    }
}

#[test]
fn hellos_without_a_name_and_what_is_not_tls() {
    assert_eq!(read_hello(&hello_with(None)), Hello::Unnamed);
    // Only an ALPN extension.
    let alpn = [0, 16, 0, 5, 0, 3, 2, b'h', b'2'];
    assert_eq!(read_hello(&hello_with(Some(&alpn))), Hello::Unnamed);
    let named = [
        0, 0, 0, 14, 0, 12, 0, 0, 9, b'p', b'y', b'p', b'i', b'.', b'o', b'r', b'g', b'.',
    ];
    assert_eq!(
        read_hello(&hello_with(Some(&named))),
        Hello::Named("pypi.org".into())
    );
    for not_tls in [
        &b"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n"[..],
        b"SSH-2.0-OpenSSH_9.6\r\n",
        // A handshake record holding a ServerHello, not a ClientHello.
        &[HANDSHAKE, 3, 3, 0, 4, 2, 0, 0, 0],
    ] {
        assert_eq!(read_hello(not_tls), Hello::NotTls);
    }
    // Lengths that run past the message.
    let broken = [0, 0, 0, 40, 0, 12, 0, 0, 9, b'p'];
    assert_eq!(read_hello(&hello_with(Some(&broken))), Hello::NotTls);
}
