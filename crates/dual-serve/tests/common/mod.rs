//! What the tests of dual-serve over real sockets share: a small SQLite database served with
//! `DatabaseMcp` on a free loopback port, and plain HTTP/1.1 exchanges with it.
#![allow(
    dead_code,
    reason = "each test binary uses a different part of the common module"
)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use dual_serve::{Running, ServeOptions, serve_database};
use dual_sqlite::{SqliteDb, SqliteOptions};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A SQLite file with one small table, removed when dropped.
pub(crate) struct TempDb(PathBuf);

impl TempDb {
    pub(crate) fn new() -> Self {
        let path = std::env::temp_dir().join(format!("dual-serve-test-{:016x}.sqlite", fastrand::u64(..)));
        let db = rusqlite::Connection::open(&path).expect("a SQLite file");
        db.execute_batch(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT);
             INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three');",
        )
        .expect("a table");
        Self(path)
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Serves `db` on a free loopback port with `configure` applied.
pub(crate) async fn serve(db: &TempDb, configure: impl FnOnce(&mut ServeOptions)) -> Running {
    let mut options = ServeOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
    options.shutdown_grace = Duration::from_secs(2);
    configure(&mut options);
    let sqlite = SqliteDb::open_with(&db.0, SqliteOptions::default()).expect("opens");
    serve_database(
        options,
        sqlite.sql_executor(),
        sqlite.schema().clone(),
        "A test database.",
    )
    .await
    .expect("serves")
}

/// One response: status, headers (lower-case names) and body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The body as JSON, or the first SSE `data:` line's.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .ok()
            .or_else(|| {
                self.body
                    .lines()
                    .find_map(|line| line.strip_prefix("data:"))
                    .and_then(|data| serde_json::from_str(data.trim()).ok())
            })
            .unwrap_or_else(|| panic!("a JSON body: {}", self.body))
    }
}

/// Sends one HTTP/1.1 request on a fresh connection (`Connection: close`) and reads the reply.
pub(crate) async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.expect("writes");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut raw))
        .await
        .expect("a reply within 20 s")
        .expect("reads");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(name, value)| name == "transfer-encoding" && value.contains("chunked"));
    let body = if chunked { dechunk(rest) } else { rest.to_owned() };
    Reply {
        status,
        headers,
        body,
    }
}

/// The payload of a chunked body.
fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || tail.len() < size {
            break;
        }
        body.push_str(&tail[..size]);
        rest = tail[size..].trim_start_matches("\r\n");
    }
    body
}

pub(crate) const JSON_POST: [(&str, &str); 2] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

pub(crate) fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "dual-serve-test", "version": "0"}}})
    .to_string()
}
