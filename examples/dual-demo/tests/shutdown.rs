//! Graceful shutdown of the real binary (issue 9): SIGTERM and SIGINT let in-flight exports finish
//! within `--shutdown-grace-secs`, cut what is left after it (detectably: no terminal chunk), and
//! exit 0; `--stdio` mode too. And a malformed `--auth-tokens` file stops start-up.

mod support;

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use support::{Instance, LIMIT, TempDb};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpSocket;
use tokio::time::timeout;

/// Rows of the export: about 25 MB of NDJSON, far more than the socket buffers hold.
const ROWS: u64 = 200_000;

/// A query of [`ROWS`] rows of ~120 bytes each.
fn big_sql() -> String {
    format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {ROWS}) \
         SELECT i, printf('%0100d', i) AS pad FROM n"
    )
}

/// Creates the big resource over MCP and returns its id.
async fn create_big_resource(instance: &Instance) -> String {
    let mcp = support::mcp(instance).await;
    let result = support::query(&mcp, &big_sql()).await;
    assert_eq!(result.is_error, Some(false), "{}", support::text_of(&result));
    let structured = result.structured_content.expect("structuredContent");
    assert_eq!(structured["metadata"]["total_count"], ROWS, "{structured}");
    let _ = mcp.cancel().await;
    structured["resource"]["uri"]
        .as_str()
        .and_then(|uri| uri.strip_prefix("resource://"))
        .expect("a resource URI")
        .to_owned()
}

/// Starts the NDJSON export of `id` on a connection with a small receive buffer, reads its first
/// frame and then stops reading, so that the server is still writing. Returns the body and the
/// bytes read so far.
async fn start_export(addr: SocketAddr, id: &str) -> (Incoming, Vec<u8>) {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    let stream = socket.connect(addr).await.expect("connect");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(connection);
    let request = Request::get(format!("/resources/{id}/data"))
        .header(header::HOST, addr.to_string())
        .header(header::ACCEPT, "application/x-ndjson")
        .body(Empty::<Bytes>::new())
        .expect("a request");
    let response = sender.send_request(request).await.expect("a response");
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let first = body
        .frame()
        .await
        .expect("a first frame")
        .expect("data")
        .into_data()
        .unwrap_or_default();
    (body, first.to_vec())
}

/// Whether `ndjson` holds exactly rows 1..=ROWS, in order.
fn assert_every_row(ndjson: &[u8]) {
    let text = std::str::from_utf8(ndjson).expect("UTF-8");
    let mut expected = 1u64;
    for line in text.lines() {
        let row: Value = serde_json::from_str(line).expect("a JSON line");
        assert_eq!(row["i"], expected, "{line}");
        expected += 1;
    }
    assert_eq!(expected - 1, ROWS, "every row");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_an_export_in_flight_finish_and_exits_0() {
    timeout(LIMIT, async {
        let db = TempDb::new();
        let mut instance = Instance::start_memory(&db.path(), &["--shutdown-grace-secs", "20"]).await;
        let id = create_big_resource(&instance).await;
        // An MCP client stays connected: its event stream must not hold the shutdown up.
        let mcp = support::mcp(&instance).await;
        let (body, mut received) = start_export(instance.addr(), &id).await;

        let signalled = Instant::now();
        instance.signal("TERM");
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(instance.is_running(), "the export is still in flight");
        let rest = body.collect().await.expect("the whole export").to_bytes();
        received.extend_from_slice(&rest);
        assert_every_row(&received);

        let status = instance.exit_status(Duration::from_secs(15)).await;
        assert!(status.success(), "{status:?}\n{}", instance.log());
        assert!(
            signalled.elapsed() < Duration::from_secs(15),
            "exited well within the grace period"
        );
        let log = instance.log();
        assert!(log.contains("SIGTERM"), "{log}");
        assert!(!log.contains("cutting"), "nothing was cut:\n{log}");
        drop(mcp);
    })
    .await
    .expect("within the time limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_still_running_after_the_grace_is_cut_detectably() {
    timeout(LIMIT, async {
        let db = TempDb::new();
        let mut instance = Instance::start_memory(
            &db.path(),
            &["--shutdown-grace-secs", "1", "--export-stall-secs", "60"],
        )
        .await;
        let id = create_big_resource(&instance).await;
        let (body, _) = start_export(instance.addr(), &id).await;

        let signalled = Instant::now();
        instance.signal("TERM");
        let status = instance.exit_status(Duration::from_secs(15)).await;
        let after = signalled.elapsed();
        assert!(status.success(), "{status:?}\n{}", instance.log());
        assert!(
            after >= Duration::from_millis(900) && after < Duration::from_secs(10),
            "exited {after:?} after SIGTERM"
        );
        assert!(
            instance.log().contains("cutting the connections still open"),
            "{}",
            instance.log()
        );
        // The client reads what was sent, then the connection ends without the terminal chunk.
        let error = body.collect().await.expect_err("a truncated body is an error");
        let eof = std::error::Error::source(&error)
            .and_then(|source| source.downcast_ref::<std::io::Error>())
            .map(std::io::Error::kind);
        assert_eq!(eof, Some(std::io::ErrorKind::UnexpectedEof), "{error:?}");
    })
    .await
    .expect("within the time limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_with_an_idle_keep_alive_connection_exits_0_at_once() {
    timeout(LIMIT, async {
        let db = TempDb::new();
        let mut instance = Instance::start_memory(&db.path(), &["--shutdown-grace-secs", "30"]).await;
        // A kept-alive connection between requests is closed at once, not waited for.
        let client = support::rest_client(&instance);
        let missing = client
            .resource(&format!("{}/01ARZ3NDEKTSV4RRFFQ69G5FAV", instance.rest_url()))
            .expect("a handle")
            .fetch(dual_client::FetchOptions::new())
            .await;
        assert!(missing.is_err_and(|e| e.is_not_found()));
        let signalled = Instant::now();
        instance.signal("INT");
        let status = instance.exit_status(Duration::from_secs(10)).await;
        assert!(status.success(), "{status:?}\n{}", instance.log());
        assert!(
            signalled.elapsed() < Duration::from_secs(5),
            "{:?}",
            signalled.elapsed()
        );
        assert!(instance.log().contains("SIGINT"), "{}", instance.log());
    })
    .await
    .expect("within the time limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_mode_exits_0_on_sigterm() {
    timeout(LIMIT, async {
        let db = TempDb::new();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_dual-demo"))
            .args(["serve", "--stdio", "--addr", "127.0.0.1:0", "--db"])
            .arg(db.path())
            .env("RUST_LOG", "info")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the binary starts");
        let mut stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let initialize = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "shutdown", "version": "0"}}
        });
        stdin
            .write_all(format!("{initialize}\n").as_bytes())
            .await
            .expect("write");
        stdin.flush().await.expect("flush");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .await
            .expect("an answer");
        let answer: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
        assert_eq!(answer["id"], 1, "{answer}");

        // stdin stays open: the signal, not end of input, ends the process.
        let pid = child.id().expect("a pid");
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(killed.success());
        let status = timeout(Duration::from_secs(10), child.wait())
            .await
            .expect("exits within 10 s")
            .expect("an exit status");
        assert!(status.success(), "{status:?}");
        drop(stdin);
    })
    .await
    .expect("within the time limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_token_file_stops_start_up_naming_the_line() {
    timeout(LIMIT, async {
        let db = TempDb::new();
        let tokens = db.path().with_file_name("tokens.txt");
        std::fs::write(&tokens, "# tokens\nabc alice\n\nlonely\n").expect("write the file");
        let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_dual-demo"))
            .args(["serve", "--addr", "127.0.0.1:0", "--db"])
            .arg(db.path())
            .arg("--auth-tokens")
            .arg(&tokens)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .output()
            .await
            .expect("the binary runs");
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("line 4"), "{stderr}");
        assert!(stderr.contains("tokens.txt"), "{stderr}");
    })
    .await
    .expect("within the time limit");
}
