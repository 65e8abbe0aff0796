//! What the tests of dual-serve over real sockets share: a small SQLite database served with
//! `DatabaseMcp` on a free loopback port, and plain HTTP/1.1 exchanges with it; [`Served`], such a
//! server on the memory store or, with the feature `services`, on Redis or PostgreSQL under a scratch
//! place of its own.
#![allow(
    dead_code,
    reason = "each test binary uses a different part of the common module"
)]

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use dual_serve::{Running, ServeOptions, serve_database};
use dual_sqlite::{SqliteDb, SqliteOptions};
use dual_testkit::Scratch;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// A SQLite file with one small table `t` and the tables of [`TABLES`], removed when dropped.
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
        db.execute_batch(TABLES).expect("the tables of TABLES");
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

    /// The body as JSON, or the JSON-RPC answer among its SSE `data:` lines (the first message with an
    /// `id`: notifications may come before it).
    pub(crate) fn answer(&self) -> Value {
        serde_json::from_str(&self.body)
            .ok()
            .or_else(|| {
                self.body
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                    .find(|message| message.get("id").is_some())
            })
            .unwrap_or_else(|| panic!("a JSON-RPC answer: {}", self.body))
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

/// Rows of `institutions` (`id`, `name`, `state`: 14 in `NJ`).
pub(crate) const INSTITUTIONS: u64 = 40;
/// Rows of `degrees_awarded`, seven columns as the demo's table of that name.
pub(crate) const DEGREES: u64 = 40;

/// `institutions` and `degrees_awarded`, with values as long as the demo dataset's (a field of
/// study, an award level, a gender, a count).
const TABLES: &str = "
CREATE TABLE institutions (id INTEGER PRIMARY KEY, name TEXT NOT NULL, state TEXT NOT NULL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
INSERT INTO institutions
SELECT i, 'Institution ' || i, CASE i % 3 WHEN 0 THEN 'NY' WHEN 1 THEN 'NJ' ELSE 'CA' END FROM n;
CREATE TABLE degrees_awarded (id INTEGER PRIMARY KEY, institution_id INTEGER NOT NULL REFERENCES institutions(id),
    year INTEGER NOT NULL, field TEXT NOT NULL, award_level TEXT NOT NULL, gender TEXT NOT NULL, count INTEGER NOT NULL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
INSERT INTO degrees_awarded
SELECT i, 1 + (i * 7) % 40, 2015 + i % 10,
       CASE i % 5 WHEN 0 THEN 'Business' WHEN 1 THEN 'Health Professions' WHEN 2 THEN 'Social Sciences'
                  WHEN 3 THEN 'Computer Science' ELSE 'Visual and Performing Arts' END,
       CASE i % 4 WHEN 0 THEN 'associate' WHEN 1 THEN 'bachelor' WHEN 2 THEN 'master' ELSE 'doctoral' END,
       CASE i % 2 WHEN 0 THEN 'women' ELSE 'men' END,
       1 + (i * 37) % 400
FROM n;
";

/// The shared stores (feature `services`): Redis at `DUAL_TEST_REDIS_URL`, PostgreSQL at
/// `DUAL_TEST_POSTGRES_URL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    Redis,
    Postgres,
}

/// A server ([`serve`]) on a [`TempDb`] of its own, on the memory store or a shared one under a
/// [`Scratch`] place; stop it with [`Served::stop`].
pub(crate) struct Served {
    pub(crate) running: Running,
    /// Dropped after the server: removes every key or table it wrote.
    scratch: Option<Scratch>,
    /// Dropped after the server: removes the database.
    db: TempDb,
}

impl Served {
    /// Starts a server on the memory store (`backend` `None`) or `backend` under a fresh scratch
    /// place, with `configure` applied last.
    pub(crate) async fn start(backend: Option<Backend>, configure: impl FnOnce(&mut ServeOptions)) -> Self {
        let scratch = backend.map(|backend| match backend {
            Backend::Redis => Scratch::redis_prefix(),
            Backend::Postgres => Scratch::postgres_schema(),
        });
        let db = TempDb::new();
        let running = serve(&db, |options| {
            if let Some(scratch) = &scratch {
                options.store = scratch.url().to_owned();
                options.store_prefix = Some(scratch.name().to_owned());
            }
            configure(options);
        })
        .await;
        Self { running, scratch, db }
    }

    /// Runs `test` within `limit` against a server on the memory store with `configure` applied,
    /// then stops it.
    pub(crate) async fn run(
        limit: Duration,
        configure: impl FnOnce(&mut ServeOptions),
        test: impl AsyncFnOnce(&Self),
    ) {
        within(limit, async {
            let served = Self::start(None, configure).await;
            test(&served).await;
            served.stop().await;
        })
        .await;
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.running.addr
    }

    pub(crate) fn mcp_url(&self) -> String {
        self.running.mcp_url()
    }

    /// Shuts the server down gracefully, then removes the scratch place and the database.
    pub(crate) async fn stop(self) {
        let Self { running, scratch, db } = self;
        running.shutdown().await;
        drop(scratch);
        drop(db);
    }
}

/// Awaits `work`, failing the test when it takes longer than `limit`.
pub(crate) async fn within<T>(limit: Duration, work: impl Future<Output = T>) -> T {
    timeout(limit, work).await.expect("within the time limit")
}
