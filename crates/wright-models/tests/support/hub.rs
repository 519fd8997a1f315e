//! A fake Hugging Face: one file at one path over plain HTTP/1.1 on 127.0.0.1, honouring
//! `Range: bytes=N-` or ignoring it, optionally hanging up part-way through the body; it
//! records each request's path and Range header.

use std::sync::Arc;
use std::sync::Mutex;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::net::TcpStream;

#[derive(Debug, Clone, Copy)]
pub struct Behaviour {
    pub honour_range: bool,
    /// Close the connection after this many bytes of the body (the headers still
    /// announce all of it).
    pub cut_after: Option<usize>,
}

impl Behaviour {
    pub const HONOUR_RANGE: Behaviour = Behaviour {
        honour_range: true,
        cut_after: None,
    };
    pub const IGNORE_RANGE: Behaviour = Behaviour {
        honour_range: false,
        cut_after: None,
    };
}

/// What the hub saw of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub path: String,
    pub range: Option<String>,
}

pub struct Hub {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Hub {
    /// Serves `body` at `path` (anything else is a 404).
    pub async fn serve(path: &str, body: Vec<u8>, behaviour: Behaviour) -> Hub {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let body = Arc::new(body);
        let path = path.to_string();
        let task = {
            let seen = seen.clone();
            tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let (seen, body, path) = (seen.clone(), body.clone(), path.clone());
                    tokio::spawn(async move {
                        answer(stream, &path, &body, behaviour, &seen).await;
                    });
                }
            })
        };
        Hub { port, seen, task }
    }

    /// What `WRIGHT_MODELS_BASE_URL` would be set to.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("lock").clone()
    }
}

async fn answer(
    mut stream: TcpStream,
    path: &str,
    body: &[u8],
    behaviour: Behaviour,
    seen: &Mutex<Vec<Seen>>,
) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let requested = head.split(' ').nth(1).unwrap_or("").to_string();
    let range = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("range")
            .then(|| value.trim().to_string())
    });
    seen.lock().expect("lock").push(Seen {
        path: requested.clone(),
        range: range.clone(),
    });

    let requested_path = requested.split('?').next().unwrap_or("");
    if requested_path != path {
        let _ = stream
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .await;
        return;
    }
    let start = range
        .as_deref()
        .filter(|_| behaviour.honour_range)
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse::<usize>().ok());
    let len = body.len();
    let (status, extra, slice) = match start {
        Some(start) if start >= len => {
            let head = format!(
                "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(head.as_bytes()).await;
            return;
        }
        Some(start) => (
            "206 Partial Content",
            format!("Content-Range: bytes {start}-{}/{len}\r\n", len - 1),
            &body[start..],
        ),
        None => ("200 OK", String::new(), body),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
        slice.len()
    );
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let sent = behaviour
        .cut_after
        .map_or(slice.len(), |cut| cut.min(slice.len()));
    let _ = stream.write_all(&slice[..sent]).await;
    let _ = stream.flush().await;
    let _ = stream.shutdown().await;
}
