//! A real dual-http server on loopback over an in-memory executor of 8-column rows.
#![allow(dead_code, unreachable_pub, missing_docs)]

use async_trait::async_trait;
use dual_response::core::{Row, Sort, SortOrder};
use dual_response::http::DualHttp;
use dual_response::server::{DualResponseServer, ExecutorError, QueryExecutor};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// Row `i` of the generated table: 8 columns of every common type.
pub fn row(i: u64) -> Row {
    let states = ["NJ", "NY", "PA", "CT"];
    json!({
        "id": i,
        "name": format!("Institution {i}"),
        "state": states[usize::try_from(i % 4).unwrap_or(0)],
        "city": format!("City {}", i % 977),
        "enrollment": (i * 7919) % 1_000_003,
        "tuition": i as f64 * 1.5 + 0.25,
        "public": i.is_multiple_of(3),
        "founded": format!("{}-01-01", 1800 + i % 200),
    })
    .as_object()
    .cloned()
    .unwrap_or_default()
}

/// `params.n` generated rows, sortable by any numeric column.
#[derive(Debug)]
pub struct Rows;

#[async_trait]
impl QueryExecutor for Rows {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        params["n"]
            .as_u64()
            .ok_or_else(|| ExecutorError::new("`n` must be a non-negative integer"))
    }

    async fn fetch(
        &self,
        params: &Value,
        offset: u64,
        limit: u64,
        sort: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError> {
        let n = self.count(params).await?;
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        let take = usize::try_from(limit).unwrap_or(usize::MAX);
        match sort {
            None => Ok((offset.min(n)..n.min(offset.saturating_add(limit)))
                .map(row)
                .collect()),
            Some(sort) => {
                let mut all: Vec<Row> = (0..n).map(row).collect();
                all.sort_by(|a, b| {
                    let key = |r: &Row| r[&sort.field].as_f64();
                    let order = key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal);
                    if sort.order == SortOrder::Desc {
                        order.reverse()
                    } else {
                        order
                    }
                });
                Ok(all.into_iter().skip(skip).take(take).collect())
            }
        }
    }
}

/// Starts a server with the `rows` kind and its REST API under `/resources` on 127.0.0.1.
/// Returns the server and the REST base URL.
pub async fn start() -> (DualResponseServer, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let base = format!("http://{}/resources", listener.local_addr().expect("local addr"));
    let server = DualResponseServer::builder()
        .base_url(&base)
        .executor("rows", Rows)
        .build()
        .expect("valid configuration");
    let handler = DualHttp::builder(server.clone()).prefix("/resources").build();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let handler = handler.clone();
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(socket), handler)
                    .await;
            });
        }
    });
    (server, base)
}
