//! The name a TLS client asks a server for (the ClientHello's `server_name`, SNI), read
//! from the first bytes of a CONNECT tunnel: a tunnel opened to an allowed host whose TLS
//! names another host is refused, since one address (a CDN's) serves many names, and the
//! name, not the address, decides which site answers (domain fronting).
//!
//! A reader of the few fields on the way to that extension, every length checked against
//! what is there (RFC 8446 §4.1.2, RFC 6066 §3); it accepts the handshake message split
//! over several records. Written here rather than taken from a TLS parsing crate: it reads
//! about ten fields, and the proxy runs outside the sandbox on hostile input, where less
//! code is less to trust.

/// TLS record content type of a handshake.
const HANDSHAKE: u8 = 22;
/// Handshake message type of a ClientHello.
const CLIENT_HELLO: u8 = 1;
/// The `server_name` extension.
const SERVER_NAME: u16 = 0;
/// `host_name`, the one kind of name in `server_name`.
const HOST_NAME: u8 = 0;
/// The most bytes read for a ClientHello (post-quantum key shares make it a few KiB).
pub const MAX_HELLO: usize = 64 << 10;

/// What the first bytes of a tunnel say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hello {
    /// A ClientHello naming this host (lower case, without a final dot).
    Named(String),
    /// A ClientHello naming no host (as for an address).
    Unnamed,
    /// The start of one: more bytes are needed.
    Incomplete,
    /// Not a TLS ClientHello.
    NotTls,
}

/// Reads the ClientHello at the start of `bytes`.
pub fn read_hello(bytes: &[u8]) -> Hello {
    // The handshake message, put together from the records it came in.
    let mut message = Vec::new();
    let mut records = Reader::new(bytes);
    loop {
        let Some(header) = records.take(5) else {
            return Hello::Incomplete;
        };
        if header[0] != HANDSHAKE || header[1] != 3 {
            return Hello::NotTls;
        }
        let length = usize::from(u16::from_be_bytes([header[3], header[4]]));
        let Some(fragment) = records.take(length) else {
            return Hello::Incomplete;
        };
        message.extend_from_slice(fragment);
        if message.len() >= 4 {
            if message[0] != CLIENT_HELLO {
                return Hello::NotTls;
            }
            let body = usize::from(message[1]) << 16
                | usize::from(message[2]) << 8
                | usize::from(message[3]);
            if message.len() >= 4 + body {
                return client_hello(&message[4..4 + body]).unwrap_or(Hello::NotTls);
            }
        }
    }
}

/// The name in a ClientHello's body; `None` when it is malformed.
fn client_hello(body: &[u8]) -> Option<Hello> {
    let mut hello = Reader::new(body);
    hello.take(2 + 32)?; // version, random
    hello.vector(1)?; // session id
    hello.vector(2)?; // cipher suites
    hello.vector(1)?; // compression methods
    if hello.rest().is_empty() {
        return Some(Hello::Unnamed);
    }
    let mut extensions = Reader::new(hello.vector(2)?);
    while !extensions.rest().is_empty() {
        let kind = extensions.u16()?;
        let data = extensions.vector(2)?;
        if kind != SERVER_NAME {
            continue;
        }
        let mut list = Reader::new(Reader::new(data).vector(2)?);
        while !list.rest().is_empty() {
            let name_type = list.take(1)?[0];
            let name = list.vector(2)?;
            if name_type == HOST_NAME {
                let name = std::str::from_utf8(name).ok()?;
                return Some(Hello::Named(
                    name.trim_end_matches('.').to_ascii_lowercase(),
                ));
            }
        }
        return Some(Hello::Unnamed);
    }
    Some(Hello::Unnamed)
}

/// Bytes read front to back, never past their end.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    fn rest(&self) -> &'a [u8] {
        self.bytes
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.bytes.len() < n {
            return None;
        }
        let (taken, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(taken)
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }

    /// A vector with a length of `width` bytes (1 or 2) in front.
    fn vector(&mut self, width: usize) -> Option<&'a [u8]> {
        let length = match width {
            1 => usize::from(self.take(1)?[0]),
            _ => usize::from(self.u16()?),
        };
        self.take(length)
    }
}

/// A minimal ClientHello naming `name`, as a test's client sends it.
#[cfg(test)]
pub(crate) fn hello_naming(name: &str) -> Vec<u8> {
    let mut list = vec![HOST_NAME];
    list.extend_from_slice(&(name.len() as u16).to_be_bytes());
    list.extend_from_slice(name.as_bytes());
    let mut extension = SERVER_NAME.to_be_bytes().to_vec();
    extension.extend_from_slice(&(list.len() as u16 + 2).to_be_bytes());
    extension.extend_from_slice(&(list.len() as u16).to_be_bytes());
    extension.extend_from_slice(&list);
    let mut body = vec![3, 3];
    body.extend_from_slice(&[0u8; 32]);
    body.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0]);
    body.extend_from_slice(&(extension.len() as u16).to_be_bytes());
    body.extend_from_slice(&extension);
    let mut record = vec![HANDSHAKE, 3, 1];
    record.extend_from_slice(&(body.len() as u16 + 4).to_be_bytes());
    record.extend_from_slice(&[CLIENT_HELLO, 0]);
    record.extend_from_slice(&(body.len() as u16).to_be_bytes());
    record.extend_from_slice(&body);
    record
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
