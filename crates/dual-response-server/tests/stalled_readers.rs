//! A slow or stalled reader never blocks anyone else: 64 clients open the export of a 25 MB result
//! and stop reading. Meanwhile a page, a metadata read and a tool call each stay under 100 ms, the
//! exports beyond the export slots are refused at once with a retryable `503 overloaded` (never a
//! hang), the stalled exports are cut after the stall time (visibly truncated), and then a fresh
//! export completes.
//!
//! The latencies are printed (`--nocapture`) for docs/PERFORMANCE.md.

mod support;

use std::time::{Duration, Instant};

use dual_response_server::mcp_client;
use http::{Method, StatusCode, header};
use rmcp::service::{RoleClient, RunningService};
use serde_json::json;
use support::export::{BIG_ROWS, assert_every_row, create_big_resource};
use support::http::Http;
use support::in_process::InProcess;
use support::{query, text_of, within};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::timeout;

/// Upper bound of the whole test (it takes about 8 s).
const LIMIT: Duration = Duration::from_secs(60);
/// Clients that open an export and stop reading.
const READERS: usize = 64;
/// Database connections exports may hold (of the pool's four).
const EXPORT_SLOTS: usize = 2;
/// Time a stalled export keeps its connection and its database slot.
const EXPORT_STALL: Duration = Duration::from_secs(4);
/// Longest wait for a database connection before `503 overloaded`.
const DB_WAIT: Duration = Duration::from_millis(500);
/// Attempts of each measured operation while the surplus exports wait for a slot.
const ATTEMPTS: usize = 5;
/// The issue's bound, on the median of an operation's samples: one that waited behind a stalled
/// export would wait for [`DB_WAIT`] at least (then fail `overloaded`), or for [`EXPORT_STALL`].
const MEDIAN_BOUND: Duration = Duration::from_millis(100);
/// The bound on every single attempt. On a loaded 2-core machine (this test's threads, the server's,
/// 62 threads parked on the pool, other test binaries) one attempt can lose its core for tens of
/// milliseconds, so one slow sample is noise and the median carries the 100 ms claim; but any attempt
/// that took a second has queued behind something, and each attempt must also succeed — one that
/// waited for a database connection would have ended `503` after [`DB_WAIT`].
const MAX_BOUND: Duration = Duration::from_secs(1);
/// A small query for the measured tool call.
const TOOL_SQL: &str = "SELECT id, name FROM institutions ORDER BY id LIMIT 50";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_export_readers_never_delay_pages_metadata_or_tool_calls() {
    within(LIMIT, async {
        let server = InProcess::start_with_database(
            None,
            |o| {
                o.export_stall = EXPORT_STALL;
                o.shutdown_grace = Duration::from_secs(2);
                // Live: the export slots bound exports that read the database; snapshots read none.
                o.snapshot_max_mb = 0;
            },
            |d| {
                d.db_wait = DB_WAIT;
                d.export_slots = EXPORT_SLOTS;
            },
        )
        .await;
        let id = create_big_resource(&server.running.mcp_url()).await;
        let http = Http::new(server.addr());
        let mcp = timeout(
            Duration::from_secs(20),
            mcp_client::connect(&server.running.mcp_url()),
        )
        .await
        .expect("MCP initializes within 20 s")
        .expect("an MCP session");
        // Once unmeasured: connection set-up is not what is measured.
        let _ = Latencies::measure(&http, &mcp, &id, 1).await;

        let sent = Instant::now();
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            readers.push(open_stalled_export(&server, &id).await);
        }
        let heads: Vec<JoinHandle<(TcpStream, String, Duration)>> = readers
            .into_iter()
            .map(|stream| {
                tokio::spawn(async move {
                    let head = peek_reply(&stream).await;
                    (stream, head, sent.elapsed())
                })
            })
            .collect();

        // While the admitted exports fill the socket buffers and the surplus waits for a slot.
        let starting = Latencies::measure(&http, &mcp, &id, ATTEMPTS).await;

        let mut stalled = Vec::new();
        let mut refused_within = Duration::ZERO;
        for head in heads {
            let (stream, reply, after) = head.await.expect("the reader task");
            let status = reply.lines().next().unwrap_or_default().to_owned();
            if status.starts_with("HTTP/1.1 200") {
                stalled.push(stream);
            } else {
                assert!(status.starts_with("HTTP/1.1 503"), "{reply}");
                assert_raw_overloaded(&reply);
                refused_within = refused_within.max(after);
            }
        }
        assert_eq!(stalled.len(), EXPORT_SLOTS, "exports admitted");
        // Never a hang: each surplus export is answered once the wait for a slot is over.
        assert!(
            refused_within < DB_WAIT + Duration::from_secs(3),
            "the last 503 came after {refused_within:?}"
        );

        eprintln!(
            "{READERS} export readers that stopped reading: {EXPORT_SLOTS} admitted, {} refused \
             `503 overloaded`, the last after {refused_within:?}",
            READERS - EXPORT_SLOTS
        );
        starting.report("while the surplus waits for a slot");
        starting.assert_bounded("while the surplus waits for a slot");

        // A fresh export is refused until a slot comes free, that is until the stalled exports are
        // cut. After each refusal, while both slots are held by stalled exports, one more sample of
        // each operation.
        let mut stalling = Latencies::default();
        let fresh = loop {
            let request = http
                .request(Method::GET, &format!("/resources/{id}/data"), None)
                .header(header::ACCEPT, "application/x-ndjson");
            let reply = http.send(request, "").await;
            if reply.status == StatusCode::OK {
                break reply;
            }
            reply.assert_overloaded("a fresh export while the slots are held");
            stalling.extend(Latencies::measure(&http, &mcp, &id, 1).await);
            assert!(
                sent.elapsed() < EXPORT_STALL + Duration::from_secs(15),
                "no export slot came free within {:?}",
                sent.elapsed()
            );
        };
        let admitted_after = sent.elapsed();
        assert!(
            !stalling.page.is_empty(),
            "the slots were still held after the first samples"
        );
        stalling.report("while stalled exports hold every slot");
        stalling.assert_bounded("while stalled exports hold every slot");
        eprintln!(
            "a fresh export was admitted {admitted_after:?} after the stalled ones were sent \
             (stall time {EXPORT_STALL:?})"
        );
        assert!(
            admitted_after >= EXPORT_STALL,
            "a stalled export was cut after {admitted_after:?}, before the stall time"
        );
        assert_every_row(&fresh.body);

        // The stalled readers get what was buffered, then the end: no terminal chunk, no `]`.
        for stream in stalled {
            let received = read_to_end(stream).await;
            let text = String::from_utf8_lossy(&received);
            assert!(
                text.starts_with("HTTP/1.1 200"),
                "{}",
                &text[..text.len().min(300)]
            );
            assert!(text.contains("[{\"i\":1,"), "the first row came");
            assert!(
                !text.ends_with("\r\n0\r\n\r\n") && !text.contains(']'),
                "the stalled export was not truncated: it ends with {:?}",
                &text[text.len().saturating_sub(100)..]
            );
            // Far less than the whole export (the pads alone are 100 bytes a row).
            let whole = usize::try_from(BIG_ROWS * 100).unwrap_or(usize::MAX);
            assert!(received.len() < whole, "{} bytes received", received.len());
            eprintln!("a stalled reader got {} bytes, then the end", received.len());
        }

        let _ = mcp.cancel().await;
        server.stop().await;
    })
    .await;
}

/// Opens a connection with a small receive buffer and asks for the JSON export of `id`; the caller
/// never reads the body.
async fn open_stalled_export(server: &InProcess, id: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    let mut stream = socket.connect(server.addr()).await.expect("connect");
    let request = format!(
        "GET /resources/{id}/data HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\n\r\n",
        server.addr()
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    stream
}

/// The start of the reply on `stream`, without taking it from the socket (so that an export stays
/// stalled): the head, and for a reply with `Content-Length` its whole body.
async fn peek_reply(stream: &TcpStream) -> String {
    let mut buf = vec![0u8; 8192];
    let mut seen = 0;
    loop {
        let n = timeout(Duration::from_secs(10), stream.peek(&mut buf))
            .await
            .expect("a reply within 10 s")
            .expect("peek");
        assert!(n > 0, "closed before a reply");
        let text = String::from_utf8_lossy(&buf[..n]).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|line| {
                    line.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(str::to_owned)
                })
                .and_then(|value| value.trim().parse::<usize>().ok());
            if length.is_none_or(|length| body.len() >= length) {
                return text;
            }
        }
        assert!(n < buf.len(), "a head larger than {} bytes", buf.len());
        if n == seen {
            // The rest of the reply is on its way; peek returns at once while data is queued.
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        seen = n;
    }
}

/// Asserts that a raw HTTP reply is a retryable `503 overloaded` with `Retry-After`.
fn assert_raw_overloaded(reply: &str) {
    let lower = reply.to_ascii_lowercase();
    assert!(lower.contains("\r\nretry-after: "), "{reply}");
    assert!(reply.contains(r#""error":"overloaded""#), "{reply}");
    assert!(reply.contains(r#""retryable":true"#), "{reply}");
}

/// Reads `stream` until the server closes it (a reset counts as the end).
async fn read_to_end(mut stream: TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => return received,
            Ok(Ok(n)) => received.extend_from_slice(&buf[..n]),
            Err(_) => panic!("the stalled export is still open after 10 s of reading"),
        }
    }
}

/// Wall-clock latencies of a page, a metadata read and a tool call.
#[derive(Debug, Default)]
struct Latencies {
    page: Vec<Duration>,
    metadata: Vec<Duration>,
    tool_call: Vec<Duration>,
}

impl Latencies {
    /// Runs each operation `attempts` times, asserting that each succeeds.
    async fn measure(http: &Http, mcp: &RunningService<RoleClient, ()>, id: &str, attempts: usize) -> Self {
        let path = format!("/resources/{id}");
        let mut latencies = Self::default();
        for attempt in 0..attempts {
            let started = Instant::now();
            let offset = 1_000 * attempt;
            let page = http
                .post_json(&path, None, &json!({"offset": offset, "limit": 20}))
                .await;
            latencies.page.push(started.elapsed());
            assert_eq!(page.status, StatusCode::OK, "page: {}", page.text());
            assert_eq!(page.json()["returned_count"], 20, "{}", page.text());

            let started = Instant::now();
            let metadata = http.send(http.request(Method::GET, &path, None), "").await;
            latencies.metadata.push(started.elapsed());
            assert_eq!(metadata.status, StatusCode::OK, "metadata: {}", metadata.text());
            assert_eq!(metadata.json()["total_count"], BIG_ROWS, "{}", metadata.text());

            let started = Instant::now();
            let result = query(mcp, TOOL_SQL).await;
            latencies.tool_call.push(started.elapsed());
            assert_eq!(result.is_error, Some(false), "tool call: {}", text_of(&result));
        }
        latencies
    }

    fn extend(&mut self, more: Self) {
        self.page.extend(more.page);
        self.metadata.extend(more.metadata);
        self.tool_call.extend(more.tool_call);
    }

    fn each(&self) -> [(&'static str, &[Duration]); 3] {
        [
            ("page (POST /{id})", &self.page),
            ("metadata (GET /{id})", &self.metadata),
            ("tools/call query", &self.tool_call),
        ]
    }

    fn report(&self, phase: &str) {
        for (name, samples) in self.each() {
            eprintln!(
                "  {phase}: {name}: median {:?}, max {:?}, all {samples:?}",
                median(samples),
                max(samples)
            );
        }
    }

    fn assert_bounded(&self, phase: &str) {
        for (name, samples) in self.each() {
            assert!(
                median(samples) < MEDIAN_BOUND,
                "{phase}: {name}: median {:?} of {samples:?}",
                median(samples)
            );
            assert!(max(samples) < MAX_BOUND, "{phase}: {name}: {samples:?}");
        }
    }
}

fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

fn max(samples: &[Duration]) -> Duration {
    samples.iter().copied().max().unwrap_or_default()
}
