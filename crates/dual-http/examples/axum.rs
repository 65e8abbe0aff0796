//! The REST API nested under `/resources` in an axum application (feature `tower`).
//!
//! ```text
//! cargo run -p dual-http --example axum --features tower
//! curl -s http://127.0.0.1:3000/resources/<id>
//! ```
//!
//! axum's `nest_service` strips `/resources` before calling the handler, so the handler is built
//! without a prefix. Set `DUAL_ADDR` to listen elsewhere (default `127.0.0.1:3000`).
//!
//! `axum::serve` sets no timeouts and no connection cap, so this example serves the router with
//! hyper directly (axum's "serve with hyper" pattern): at most [`MAX_CONNECTIONS`] connections,
//! [`HEADER_TIMEOUT`] to send a request head (hyper applies it to an idle kept-alive connection too),
//! and the handler's request-body timeout ([`dual_http::DEFAULT_BODY_TIMEOUT`], 408).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use dual_core::Row;
use dual_http::{Cors, DualHttp};
use dual_server::{
    CreateResponse, DualResponseServer, QueryStart, RowBatch, RowStream, Typed, TypedExecutor,
};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::Semaphore;

/// Connections served at once.
const MAX_CONNECTIONS: usize = 1024;
/// Time to send a request head, and to start the next one on a kept-alive connection.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The parameters of a "numbers" query.
#[derive(serde::Serialize, serde::Deserialize)]
struct Upto {
    /// How many rows.
    n: u64,
}

/// The numbers `0..n`, one row each, produced in batches of [`BATCH`] (hyper_server.rs shows a
/// larger executor).
struct Numbers;

/// Rows per batch of the stream.
const BATCH: u64 = 1_000;

impl TypedExecutor for Numbers {
    type Params = Upto;

    fn stream(self: Arc<Self>, upto: Upto, start: QueryStart) -> RowStream {
        let n = upto.n;
        // Nothing to wait for, and the total is known before the first row.
        start.started_with_count(n);
        let row = |i: u64| {
            Row::from_iter([
                ("n".to_owned(), i.into()),
                ("even".to_owned(), i.is_multiple_of(2).into()),
            ])
        };
        let batches = (0..n)
            .step_by(usize::try_from(BATCH).unwrap_or(usize::MAX))
            .map(move |first| Ok((first..n.min(first + BATCH)).map(row).collect::<RowBatch>()));
        Box::pin(futures_util::stream::iter(batches))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::var("DUAL_ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let server = DualResponseServer::builder()
        .base_url(format!("http://{addr}/resources"))
        .executor("numbers", Typed::new(Numbers))
        .build()?;
    let created = server
        .create_response(CreateResponse::typed("numbers", &Upto { n: 10_000 })?)
        .await?;
    println!("created {} rows: {}", created.total_count, created.url);

    let resources = DualHttp::builder(server).cors(Cors::any()).build();
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .nest_service("/resources", resources);

    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{addr}");
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        // At the cap, wait for a connection to close instead of accepting more.
        let permit = Arc::clone(&slots).acquire_owned().await?;
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of file descriptors and the like: back off instead of spinning.
                eprintln!("accept failed: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let served = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(error) = served {
                eprintln!("connection ended: {error}");
            }
            drop(permit);
        });
    }
}
