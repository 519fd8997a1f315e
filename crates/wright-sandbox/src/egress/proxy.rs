//! wright's network proxy, run outside the sandbox for one conversation. The sandbox's
//! relay (see `confine::relay`) accepts each TCP connection made to the proxy port inside
//! the sandbox's network namespace and passes the socket itself over a Unix socket
//! (`SCM_RIGHTS`); here each one is read as an HTTP request (CONNECT or plain HTTP),
//! decided against the allow-list, resolved by wright, and joined to the server — or
//! answered with a refusal that says how the user allows the host. A plain request goes
//! on with the allowed host as its `Host`; a tunnel, only once its TLS ClientHello names
//! that host (see `tls`). Every connection, let through or refused, goes to the journal,
//! from which the terminal logs it.
//!
//! Blocking threads, one per connection: a coding agent opens few connections, and a
//! thread needs no runtime from whoever starts the proxy (CLI, server, library).

use super::address::resolve;
use super::allow::AllowList;
use super::http;
use super::http::Request;
use super::tls;
use super::tls::Hello;
use std::io::Read;
use std::io::Write;
use std::net::Shutdown;
use std::net::SocketAddr;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::os::fd::FromRawFd;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixListener;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Condvar;
use std::sync::Mutex;
use std::time::Duration;
use wright_protocol::NetConnection;
use wright_protocol::NetRefusal;
use wright_protocol::NetVerdict;
use wright_protocol::NetVia;

/// How long a server has to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a program has to send its request's head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// The connections made since the journal was last drained, and how many are still open.
#[derive(Debug, Clone, Default)]
pub struct Journal(Arc<(Mutex<JournalState>, Condvar)>);

#[derive(Debug, Default)]
struct JournalState {
    ended: Vec<NetConnection>,
    open: usize,
}

/// A connection being served: counted as open until dropped.
pub struct Opened(Journal);

impl Drop for Opened {
    fn drop(&mut self) {
        let (state, changed) = &*(self.0).0;
        if let Ok(mut state) = state.lock() {
            state.open = state.open.saturating_sub(1);
        }
        changed.notify_all();
    }
}

impl Journal {
    /// Counts a connection as open until the guard is dropped (after it is recorded).
    pub fn opened(&self) -> Opened {
        if let Ok(mut state) = self.0 .0.lock() {
            state.open += 1;
        }
        Opened(self.clone())
    }

    pub fn record(&self, connection: NetConnection) {
        let (state, changed) = &*self.0;
        if let Ok(mut state) = state.lock() {
            state.ended.push(connection);
        }
        changed.notify_all();
    }

    /// The connections recorded since the last call, oldest first.
    pub fn drain(&self) -> Vec<NetConnection> {
        self.0
             .0
            .lock()
            .map(|mut state| std::mem::take(&mut state.ended))
            .unwrap_or_default()
    }

    /// `drain`, after waiting at most `patience` for the open connections to end: a
    /// program that has exited may leave its connection to be closed a moment later, and
    /// the connection belongs to the command that made it. One a program left running
    /// keeps open is reported with the command during which it ends.
    pub fn drain_settled(&self, patience: Duration) -> Vec<NetConnection> {
        let (state, changed) = &*self.0;
        if let Ok(state) = state.lock() {
            let _ = changed.wait_timeout_while(state, patience, |state| state.open > 0);
        }
        self.drain()
    }
}

/// The proxy of one conversation: its Unix socket, and the threads serving it until it
/// is dropped.
#[derive(Debug)]
pub struct Proxy {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    journal: Journal,
}

impl Proxy {
    /// Listens on `path` (in the conversation's private directory, out of the sandbox's
    /// sight) for the relays of the sandbox's commands.
    pub fn start(path: &Path, allow: AllowList) -> std::io::Result<Self> {
        let listener = UnixListener::bind(path)?;
        let stop = Arc::new(AtomicBool::new(false));
        let journal = Journal::default();
        let allow = Arc::new(allow);
        let (stopping, journaled) = (stop.clone(), journal.clone());
        std::thread::Builder::new()
            .name("wright-proxy".into())
            .spawn(move || {
                for control in listener.incoming() {
                    if stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(control) = control else { continue };
                    let (allow, journal) = (allow.clone(), journaled.clone());
                    let _ = std::thread::Builder::new()
                        .name("wright-proxy-relay".into())
                        .spawn(move || receive(control, &allow, &journal));
                }
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            stop,
            journal,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn journal(&self) -> &Journal {
        &self.journal
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees `stop`.
        let _ = UnixStream::connect(&self.path);
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Takes the sockets one relay passes, each served on a thread of its own.
fn receive(control: UnixStream, allow: &Arc<AllowList>, journal: &Journal) {
    use nix::sys::socket::recvmsg;
    use nix::sys::socket::ControlMessageOwned;
    use nix::sys::socket::MsgFlags;
    loop {
        let mut byte = [0u8; 1];
        let mut iov = [std::io::IoSliceMut::new(&mut byte)];
        let mut space = nix::cmsg_space!([std::os::fd::RawFd; 1]);
        let Ok(message) = recvmsg::<()>(
            control.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) else {
            return;
        };
        if message.bytes == 0 {
            return;
        }
        let Ok(messages) = message.cmsgs() else {
            return;
        };
        for cmsg in messages {
            if let ControlMessageOwned::ScmRights(fds) = cmsg {
                for fd in fds {
                    // SAFETY: the kernel just gave this process the descriptor; nothing
                    // else owns it.
                    #[allow(unsafe_code)]
                    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
                    let client = TcpStream::from(owned);
                    let (allow, journal) = (allow.clone(), journal.clone());
                    let _ = std::thread::Builder::new()
                        .name("wright-proxy-conn".into())
                        .spawn(move || serve(client, &allow, &journal));
                }
            }
        }
    }
}

/// Serves one connection from the sandbox, whole, and journals it.
pub fn serve(mut client: TcpStream, allow: &AllowList, journal: &Journal) {
    let _open = journal.opened();
    let mut record = NetConnection {
        via: NetVia::Proxy,
        host: String::new(),
        port: 0,
        verdict: NetVerdict::Allowed,
        bytes_sent: 0,
        bytes_received: 0,
    };
    match open(&mut client, allow, &mut record) {
        Ok((upstream, first)) => {
            let (sent, received) = pump(client, upstream, &first);
            record.bytes_sent = sent;
            record.bytes_received = received;
        }
        Err(reason) => {
            record.verdict = NetVerdict::Refused { reason };
            let answer = http::refusal(&record.host, record.port, reason);
            // Journaled before the program hears of it, so the command's report has it.
            journal.record(record);
            // A tunnel already established speaks TLS, not HTTP: it is only closed.
            if reason != NetRefusal::OtherName {
                let _ = client.write_all(&answer);
            }
            let _ = client.shutdown(Shutdown::Both);
            return;
        }
    }
    journal.record(record);
}

/// Reads the request, decides, and connects: the server's socket and the bytes to send it
/// first (a plain request's head and whatever followed it).
fn open(
    client: &mut TcpStream,
    allow: &AllowList,
    record: &mut NetConnection,
) -> Result<(TcpStream, Vec<u8>), NetRefusal> {
    let _ = client.set_read_timeout(Some(HEAD_TIMEOUT));
    let (head, rest) = read_head(client)?;
    // (Still under HEAD_TIMEOUT: a tunnel's ClientHello is read before anything is sent.)
    let request = http::parse(&head)?;
    let (host, port) = match &request {
        Request::Connect { host, port } | Request::Plain { host, port, .. } => (host, *port),
    };
    record.host = host.clone();
    record.port = port;
    let grant = allow.decide(host, port).ok_or(NetRefusal::NotAllowed)?;
    let addresses = resolve(host, port, grant)?;
    let upstream = connect(&addresses).ok_or(NetRefusal::Unreachable)?;
    let mut first = Vec::new();
    match request {
        Request::Connect { .. } => {
            client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .map_err(|_| NetRefusal::Unreachable)?;
            first = read_hello(client, rest, &record.host)?;
        }
        Request::Plain { head, .. } => {
            first.extend_from_slice(&head);
            first.extend_from_slice(&rest);
        }
    }
    let _ = client.set_read_timeout(None);
    Ok((upstream, first))
}

/// The tunnel's first bytes (`read`, and more from `client`), once they hold a ClientHello
/// naming `host` (or naming none, for an address); refused otherwise.
fn read_hello(client: &mut TcpStream, read: Vec<u8>, host: &str) -> Result<Vec<u8>, NetRefusal> {
    let mut bytes = read;
    let mut chunk = [0u8; 4096];
    let hello = loop {
        match tls::read_hello(&bytes) {
            Hello::Incomplete if bytes.len() < tls::MAX_HELLO => {}
            other => break other,
        }
        match client.read(&mut chunk) {
            Ok(0) | Err(_) => break Hello::Incomplete,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
        }
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase();
    let names_it = match hello {
        Hello::Named(name) => name == host,
        Hello::Unnamed => host.parse::<std::net::IpAddr>().is_ok(),
        Hello::Incomplete | Hello::NotTls => false,
    };
    match names_it {
        true => Ok(bytes),
        false => Err(NetRefusal::OtherName),
    }
}

/// The head (up to its empty line) and the bytes read past it.
fn read_head(client: &mut TcpStream) -> Result<(Vec<u8>, Vec<u8>), NetRefusal> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buffer.split_off(end + 4);
            return Ok((buffer, rest));
        }
        if buffer.len() > http::MAX_HEAD {
            return Err(NetRefusal::BadRequest);
        }
        match client.read(&mut chunk) {
            Ok(0) | Err(_) => return Err(NetRefusal::BadRequest),
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
}

fn connect(addresses: &[SocketAddr]) -> Option<TcpStream> {
    addresses
        .iter()
        .find_map(|address| TcpStream::connect_timeout(address, CONNECT_TIMEOUT).ok())
}

/// Copies both ways until both sides are done: (bytes to the server, bytes back).
fn pump(client: TcpStream, upstream: TcpStream, first: &[u8]) -> (u64, u64) {
    let (Ok(mut client_in), Ok(mut upstream_out)) = (client.try_clone(), upstream.try_clone())
    else {
        return (0, 0);
    };
    let first = first.to_vec();
    let up = std::thread::spawn(move || {
        let mut sent = 0u64;
        if upstream_out.write_all(&first).is_ok() {
            sent += first.len() as u64;
            sent += std::io::copy(&mut client_in, &mut upstream_out).unwrap_or(0);
        }
        let _ = upstream_out.shutdown(Shutdown::Write);
        sent
    });
    let (mut upstream_in, mut client_out) = (upstream, client);
    let received = std::io::copy(&mut upstream_in, &mut client_out).unwrap_or(0);
    let _ = client_out.shutdown(Shutdown::Write);
    let sent = up.join().unwrap_or(0);
    (sent, received)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A server on 127.0.0.1 that reads `expect` bytes, answers `ok` and closes; its port,
    /// and for each connection what it read (`None`: the connection ended before).
    fn upstream(expect: usize) -> (u16, std::sync::mpsc::Receiver<Option<Vec<u8>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut got = vec![0u8; expect];
                let read = stream.read_exact(&mut got).is_ok();
                if read {
                    let _ = stream.write_all(b"ok");
                }
                let _ = tx.send(read.then_some(got));
            }
        });
        (port, rx)
    }

    /// `CONNECT localhost:PORT` then a ClientHello naming `name`, through `serve`: what
    /// the client heard, and the journal's connection.
    fn tunnel(port: u16, name: &str) -> (String, NetConnection) {
        let allow = AllowList::parse(&[format!("localhost:{port}")]).unwrap();
        let journal = Journal::default();
        let front = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(front.local_addr().unwrap()).unwrap();
        let (served, _) = front.accept().unwrap();
        let journaled = journal.clone();
        let server = std::thread::spawn(move || serve(served, &allow, &journaled));
        let mut request = format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n").into_bytes();
        request.extend_from_slice(&tls::hello_naming(name));
        client.write_all(&request).unwrap();
        let mut heard = Vec::new();
        let _ = client.read_to_end(&mut heard);
        // A client done with the tunnel closes it, which ends the proxy's copying.
        drop(client);
        server.join().unwrap();
        let mut connections = journal.drain();
        assert_eq!(connections.len(), 1);
        (
            String::from_utf8_lossy(&heard).into_owned(),
            connections.remove(0),
        )
    }

    #[test]
    fn a_tunnel_goes_through_only_when_its_tls_names_the_allowed_host() {
        let hello = tls::hello_naming("LocalHost.");
        let (port, received) = upstream(hello.len());
        let (heard, connection) = tunnel(port, "LocalHost.");
        assert_eq!(heard, "HTTP/1.1 200 Connection established\r\n\r\nok");
        assert_eq!(connection.verdict, NetVerdict::Allowed);
        assert_eq!(
            received.recv_timeout(Duration::from_secs(10)).unwrap(),
            Some(hello)
        );

        // The same allowed address, another name: a fronted site; nothing reaches it.
        let (port, received) = upstream(1);
        let (heard, connection) = tunnel(port, "evil.example");
        assert_eq!(heard, "HTTP/1.1 200 Connection established\r\n\r\n");
        assert_eq!(
            connection.verdict,
            NetVerdict::Refused {
                reason: NetRefusal::OtherName
            }
        );
        assert_eq!(connection.bytes_sent, 0);
        // The proxy dropped its connection to the server without a byte sent.
        assert_eq!(
            received.recv_timeout(Duration::from_secs(10)).unwrap(),
            None
        );
    }
}
