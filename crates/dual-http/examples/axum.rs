//! The REST API nested under `/resources` in an axum application (feature `tower`).
//!
//! ```text
//! cargo run -p dual-http --example axum --features tower
//! curl -s http://127.0.0.1:3000/resources/<id>
//! ```
//!
//! axum's `nest_service` strips `/resources` before calling the handler, so the handler is built
//! without a prefix. Set `DUAL_ADDR` to listen elsewhere (default `127.0.0.1:3000`).

use axum::Router;
use axum::routing::get;
use dual_core::{Row, Sort};
use dual_http::{Cors, DualHttp};
use dual_server::{CreateResponse, DualResponseServer, ExecutorError, QueryExecutor};
use serde_json::{Value, json};

/// `n` numbered rows.
struct Numbers;

#[async_trait::async_trait]
impl QueryExecutor for Numbers {
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
        _: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError> {
        let n = self.count(params).await?;
        Ok((offset.min(n)..n.min(offset.saturating_add(limit)))
            .map(|i| {
                json!({"id": i, "square": i * i})
                    .as_object()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::var("DUAL_ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let server = DualResponseServer::builder()
        .base_url(format!("http://{addr}/resources"))
        .executor("numbers", Numbers)
        .build()?;
    let created = server
        .create_response(CreateResponse::new("numbers", json!({"n": 10_000})))
        .await?;
    println!("created {} rows: {}", created.total_count, created.url);

    let resources = DualHttp::builder(server).cors(Cors::any()).build();
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .nest_service("/resources", resources);

    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{addr}");
    axum::serve(listener, app).await?;
    Ok(())
}
