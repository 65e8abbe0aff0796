//! The REST API under `/resources` in a plain hyper server (hyper-util, HTTP/1 and HTTP/2).
//!
//! ```text
//! cargo run -p dual-http --example hyper_server
//! curl -s http://127.0.0.1:3000/resources/<id>
//! curl -s -X POST -H 'content-type: application/json' -d '{"limit": 5}' http://127.0.0.1:3000/resources/<id>
//! curl -s -H 'accept: text/csv' 'http://127.0.0.1:3000/resources/<id>/data?sort=id:desc' | head
//! ```
//!
//! Set `DUAL_ADDR` to listen elsewhere (default `127.0.0.1:3000`).

use std::net::SocketAddr;

use dual_core::{Row, Sort, SortOrder};
use dual_http::DualHttp;
use dual_server::{CreateResponse, DualResponseServer, ExecutorError, QueryExecutor};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// An in-memory "institutions" table of `n` computed rows.
struct Institutions;

#[async_trait::async_trait]
impl QueryExecutor for Institutions {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        params["n"]
            .as_u64()
            .ok_or_else(|| ExecutorError::new("`n` must be an integer"))
    }

    async fn fetch(
        &self,
        params: &Value,
        offset: u64,
        limit: u64,
        sort: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError> {
        let n = self.count(params).await?;
        let desc = sort.is_some_and(|s| s.order == SortOrder::Desc);
        Ok((offset.min(n)..n.min(offset.saturating_add(limit)))
            .map(|i| if desc { n - 1 - i } else { i })
            .map(|id| {
                let row =
                    json!({"id": id, "name": format!("College {id}"), "enrollment": (id * 7919) % 40_000});
                row.as_object().cloned().unwrap_or_default()
            })
            .collect())
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
        .executor("institutions", Institutions)
        .build()?;

    // What an MCP tool handler would do; here we print the link instead of returning it to a model.
    let created = server
        .create_response(CreateResponse::new("institutions", json!({"n": 847})).name("Institutions"))
        .await?;
    println!("created {} rows: {}", created.total_count, created.url);

    let handler = DualHttp::builder(server).prefix("/resources").build();
    let listener = TcpListener::bind(addr).await?;
    println!("listening on http://{addr}/resources");
    loop {
        let (stream, _) = listener.accept().await?;
        let handler = handler.clone();
        tokio::spawn(async move {
            // The handler is a hyper Service: one line to serve it.
            if let Err(error) = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), handler)
                .await
            {
                tracing::debug!(%error, "connection ended");
            }
        });
    }
}
