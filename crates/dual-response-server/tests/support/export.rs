//! A big export and a client that stops reading it: for the write-stall and shutdown tests.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use dual_response_server::mcp_client;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpSocket;
use tokio::time::timeout;

/// Rows of the big result: about 25 MB of NDJSON, far more than the socket buffers hold.
pub(crate) const BIG_ROWS: u64 = 200_000;

/// A query of [`BIG_ROWS`] rows of ~120 bytes each, numbered `i` from 1.
pub(crate) fn big_sql() -> String {
    format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {BIG_ROWS}) \
         SELECT i, printf('%0100d', i) AS pad FROM n"
    )
}

/// Runs [`big_sql`] through the MCP endpoint `mcp_url` and returns the resource id once its
/// snapshot is written in full: an export of it then streams faster than any client reads, so a
/// client that stops reading stalls the server (on a loaded machine a snapshot still being written
/// could trickle out slower than the socket buffers fill, and never stall it).
pub(crate) async fn create_big_resource(mcp_url: &str) -> String {
    let mcp = timeout(Duration::from_secs(20), mcp_client::connect(mcp_url))
        .await
        .expect("MCP initializes within 20 s")
        .expect("an MCP session");
    let result = super::query(&mcp, &big_sql()).await;
    assert_eq!(result.is_error, Some(false), "{}", super::text_of(&result));
    let structured = result.structured_content.expect("structuredContent");
    assert_eq!(structured["metadata"]["total_count"], BIG_ROWS);
    let _ = mcp.cancel().await;
    let url = structured["resource"]["url"].as_str().expect("a resource URL");
    for _ in 0..1_200 {
        let request = Request::get(url)
            .body(http_body_util::Full::new(Bytes::new()))
            .expect("a request");
        let metadata: Value =
            serde_json::from_str(&super::http::exchange(request).await.text()).unwrap_or_default();
        if metadata["status"] == "ready" && metadata.get("spooled_rows").is_none() {
            return structured["resource"]["uri"]
                .as_str()
                .and_then(|uri| uri.strip_prefix("resource://"))
                .expect("a resource URI")
                .to_owned();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the snapshot of {url} was not written within 60 s");
}

/// Starts the NDJSON export of `id` on a connection with a small receive buffer, reads its first
/// frame and returns, so that the server is left writing to a client that does not read. Returns
/// the rest of the body and the bytes read so far.
pub(crate) async fn start_export(addr: SocketAddr, id: &str) -> (Incoming, Vec<u8>) {
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

/// Asserts that `ndjson` holds exactly rows 1..=[`BIG_ROWS`], in order.
pub(crate) fn assert_every_row(ndjson: &[u8]) {
    let text = std::str::from_utf8(ndjson).expect("UTF-8");
    let mut expected = 1u64;
    for line in text.lines() {
        let row: Value = serde_json::from_str(line).expect("a JSON line");
        assert_eq!(row["i"], expected, "{line}");
        expected += 1;
    }
    assert_eq!(expected - 1, BIG_ROWS, "every row");
}

/// Asserts that `error` is a body that ended early (the connection closed before the terminal
/// chunk).
pub(crate) fn assert_truncated(error: &hyper::Error) {
    let eof = std::error::Error::source(error)
        .and_then(|source| source.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind);
    assert_eq!(eof, Some(std::io::ErrorKind::UnexpectedEof), "{error:?}");
}
