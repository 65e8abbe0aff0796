//! The database's types through the whole path: the snapshot, a page, and the exports.

use std::sync::Arc;

use dual_core::PageRequest;
use dual_http::DualHttp;
use dual_server::{Caller, CreateResponse, DualResponseServer};
use http::header;
use http_body_util::{BodyExt, Empty};
use serde_json::{Value, json};

use super::{Database, Limits};

/// The typed table's rows come back as the crate documents them from a page, the JSON and NDJSON
/// exports; the CSV export has a header and one line per row.
pub async fn types_round_trip_through_snapshot_page_and_exports(db: Arc<dyn Database>) {
    let t = db.table("typed");
    let (setup, expected) = db.typed_table(&t);
    db.execute(&setup).await;
    let executor = db.executor(Limits::default()).await;
    let server = DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        .shared_executor("sql", executor)
        .without_sweeper()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let first = expected
        .first()
        .and_then(Value::as_object)
        .and_then(|row| row.keys().next().cloned())
        .unwrap_or_default();
    let response = server
        .create_response(CreateResponse::new(
            "sql",
            json!({"sql": format!("SELECT * FROM {t} ORDER BY {first}")}),
        ))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.total_count, expected.len() as u64);
    let page = server
        .fetch_page(response.id, &Caller::anonymous(), &PageRequest::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let rows: Vec<Value> = page.data.iter().cloned().map(Value::Object).collect();
    assert_eq!(rows, expected, "the page");

    let handler = DualHttp::new(server);
    let json_export = export(&handler, response.id, "application/json").await;
    let json_rows: Value = serde_json::from_slice(&json_export).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(json_rows, Value::Array(expected.clone()), "the JSON export");
    let ndjson = export(&handler, response.id, "application/x-ndjson").await;
    let lines: Vec<Value> = ndjson
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    assert_eq!(lines, expected, "the NDJSON export");
    let csv = String::from_utf8(export(&handler, response.id, "text/csv").await.to_vec()).unwrap_or_default();
    assert_eq!(csv.lines().count(), expected.len() + 1, "{csv}");
}

/// The body of `GET /{id}/data` with `Accept: accept` from `handler`, which must answer `200`;
/// panics (failing the test) otherwise.
pub async fn export(handler: &DualHttp, id: dual_core::ResourceId, accept: &str) -> bytes::Bytes {
    let request = http::Request::get(format!("/{id}/data"))
        .header(header::ACCEPT, accept)
        .body(Empty::<bytes::Bytes>::new())
        .unwrap_or_else(|e| panic!("{e}"));
    let response = handler.handle(request).await;
    assert_eq!(response.status(), 200, "{accept}");
    response
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_else(|e| panic!("{e}"))
}
