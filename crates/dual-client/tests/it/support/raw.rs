//! Misbehaving servers: a loopback listener that answers each request with scripted raw bytes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What the server does with one request.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// Writes these bytes, then closes the connection.
    Bytes(Vec<u8>),
    /// Writes these bytes, then keeps the connection open without another byte.
    BytesThenHang(Vec<u8>),
    /// Never answers.
    Hang,
}

/// A complete response with `Content-Length` and `Connection: close`.
pub(crate) fn response(status: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut text = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    Reply::Bytes(text.into_bytes())
}

/// A JSON response.
pub(crate) fn json(status: &str, body: &str) -> Reply {
    response(status, &[("Content-Type", "application/json")], body)
}

/// A JSON error body of the contract.
pub(crate) fn error(status: &str, code: &str, retryable: bool) -> Reply {
    json(
        status,
        &format!(r#"{{"error":"{code}","message":"scripted {code}","retryable":{retryable}}}"#),
    )
}

/// A chunked response whose body is `body` cut into chunks, then the terminating chunk unless `cut`.
pub(crate) fn chunked(content_type: &str, body: &[u8], cut: bool) -> Reply {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    for chunk in body.chunks(5) {
        out.extend(format!("{:x}\r\n", chunk.len()).into_bytes());
        out.extend(chunk);
        out.extend(b"\r\n");
    }
    if !cut {
        out.extend(b"0\r\n\r\n");
    }
    Reply::Bytes(out)
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    /// `METHOD /path HTTP/1.1`.
    pub(crate) request_line: String,
    /// The header block, lower-cased.
    pub(crate) headers: String,
    /// The body.
    pub(crate) body: Vec<u8>,
}

/// A scripted server. `script(n, request)` decides the reply to the `n`-th request (0-based).
pub(crate) struct RawServer {
    /// `http://127.0.0.1:{port}/resources`.
    pub(crate) base_url: String,
    hits: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: JoinHandle<()>,
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl RawServer {
    pub(crate) async fn start<F>(script: F) -> Self
    where
        F: Fn(usize, &Seen) -> Reply + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let hits = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(script);
        let (task_hits, task_seen) = (Arc::clone(&hits), Arc::clone(&seen));
        let task = tokio::spawn(async move {
            // Connection tasks end with the test's runtime.
            while let Ok((socket, _)) = listener.accept().await {
                let (hits, seen, script) = (
                    Arc::clone(&task_hits),
                    Arc::clone(&task_seen),
                    Arc::clone(&script),
                );
                tokio::spawn(serve(socket, hits, seen, script));
            }
        });
        Self {
            base_url: format!("http://{addr}/resources"),
            hits,
            seen,
            task,
        }
    }

    /// Requests received so far.
    pub(crate) fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// The requests received so far.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// A tool result whose resource lives on this server.
    pub(crate) fn tool_result(&self) -> serde_json::Value {
        let id = dual_core::ResourceId::new();
        serde_json::json!({
            "results": [{"id": 1}],
            "resource": {"uri": format!("resource://{id}"), "url": format!("{}/{id}", self.base_url),
                         "name": "Scripted", "mimeType": "application/json"},
            "metadata": {"total_count": 3, "sample_count": 1, "executed_at": "2026-01-15T10:30:00Z"}
        })
    }
}

async fn serve<F>(mut socket: TcpStream, hits: Arc<AtomicUsize>, seen: Arc<Mutex<Vec<Seen>>>, script: Arc<F>)
where
    F: Fn(usize, &Seen) -> Reply,
{
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let (request_line, headers) = head.split_once("\r\n").unwrap_or((head.as_str(), ""));
    let headers = headers.to_ascii_lowercase();
    let length = headers
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    let request = Seen {
        request_line: request_line.to_owned(),
        headers,
        body,
    };
    let n = hits.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut seen) = seen.lock() {
        seen.push(request.clone());
    }
    match script(n, &request) {
        Reply::Bytes(bytes) => {
            drop(socket.write_all(&bytes).await);
            drop(socket.shutdown().await);
        }
        Reply::BytesThenHang(bytes) => {
            drop(socket.write_all(&bytes).await);
            std::future::pending::<()>().await;
        }
        Reply::Hang => std::future::pending::<()>().await,
    }
}
