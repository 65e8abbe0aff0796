//! The REST API under `/resources` in a plain hyper server (HTTP/1.1), with the bounds a public
//! server needs.
//!
//! ```text
//! cargo run -p dual-http --example hyper_server
//! curl -s http://127.0.0.1:3000/resources/<id>
//! curl -s -X POST -H 'content-type: application/json' -d '{"limit": 5}' http://127.0.0.1:3000/resources/<id>
//! curl -s -H 'accept: text/csv' 'http://127.0.0.1:3000/resources/<id>/data?sort=id:desc' | head
//! ```
//!
//! Set `DUAL_ADDR` to listen elsewhere (default `127.0.0.1:3000`).
//!
//! Bounds, each a constant below: at most [`MAX_CONNECTIONS`] connections (the accept loop waits for
//! a free slot instead of accepting more, and backs off on accept errors such as `EMFILE`); a client
//! has [`HEADER_TIMEOUT`] to send a request head, and hyper applies the same timer to a kept-alive
//! connection waiting for its next request (the idle timeout); the handler gives a request body
//! [`dual_http::DEFAULT_BODY_TIMEOUT`] to arrive (408 `request_timeout`). A client that stops reading
//! a response is the one thing left: cut it with a write timeout around the socket, as the
//! `dual-serve` crate does (`crates/dual-serve/src/io.rs`); or serve with `dual-serve`, which has
//! every bound (and MCP beside the REST API).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use dual_http::DualHttp;
use dual_server::{
    CreateResponse, DualResponseServer, JsonColumns, JsonRowWriter, QueryStart, RowStream, Typed,
    TypedExecutor,
};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Connections served at once.
const MAX_CONNECTIONS: usize = 1024;
/// Time to send a request head, and to start the next one on a kept-alive connection.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The parameters of an "institutions" query, as the tool handler stores them and the executor
/// reads them back (typed, through [`Typed`]).
#[derive(serde::Serialize, serde::Deserialize)]
struct Search {
    /// How many institutions.
    n: u64,
}

/// An in-memory "institutions" table of `n` computed rows.
///
/// Its stream is all the server needs: it keeps the result as a snapshot and serves pages, sorted
/// pages and exports from it.
struct Institutions;

/// Rows per batch of the stream.
const BATCH: u64 = 1_000;

impl TypedExecutor for Institutions {
    type Params = Search;

    fn stream(self: Arc<Self>, search: Search, start: QueryStart) -> RowStream {
        let n = search.n;
        // Nothing to wait for, and the total is known before the first row.
        start.started_with_count(n);
        // The rows are written as JSON directly (no map per row): the fast path for big results.
        // A `Vec<Row>` of maps works too (`Ok(rows.into())`).
        let columns = match JsonColumns::new(["id", "name", "enrollment"]) {
            Ok(columns) => Arc::new(columns),
            Err(error) => return Box::pin(futures_util::stream::iter([Err(error)])),
        };
        let batches = (0..n)
            .step_by(usize::try_from(BATCH).unwrap_or(usize::MAX))
            .map(move |first| {
                let mut rows = JsonRowWriter::new(Arc::clone(&columns), 1_000);
                for id in first..n.min(first + BATCH) {
                    rows.u64(id);
                    rows.str(&format!("College {id}"));
                    rows.u64((id * 7919) % 40_000);
                    rows.end_row()?;
                }
                Ok(rows.finish())
            });
        Box::pin(futures_util::stream::iter(batches))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let addr: SocketAddr = std::env::var("DUAL_ADDR")
        .unwrap_or_else(|_| "127.0.0.1:3000".to_owned())
        .parse()?;
    let server = DualResponseServer::builder()
        .base_url(format!("http://{addr}/resources"))
        .executor("institutions", Typed::new(Institutions))
        .build()?;

    // What an MCP tool handler would do; here we print the link instead of returning it to a model.
    let created = server
        .create_response(CreateResponse::typed("institutions", &Search { n: 847 })?.name("Institutions"))
        .await?;
    println!("created {} rows: {}", created.total_count, created.url);

    let handler = DualHttp::builder(server).prefix("/resources").build();
    let listener = TcpListener::bind(addr).await?;
    println!("listening on http://{addr}/resources");
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut backoff = Duration::from_millis(10);
    loop {
        // At the cap, wait for a connection to close instead of accepting more.
        let permit = Arc::clone(&slots).acquire_owned().await?;
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of file descriptors and the like: back off instead of spinning.
                tracing::warn!(error = %dual_core::escape::log_safe(&error.to_string()), backoff_ms = backoff.as_millis() as u64, "accept failed");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        backoff = Duration::from_millis(10);
        let handler = handler.clone();
        tokio::spawn(async move {
            // The handler is a hyper Service: serve it on the connection, with hyper's timer.
            let served = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), handler)
                .await;
            if let Err(error) = served {
                tracing::debug!(error = %dual_core::escape::log_safe(&error.to_string()), "connection ended");
            }
            drop(permit);
        });
    }
}
