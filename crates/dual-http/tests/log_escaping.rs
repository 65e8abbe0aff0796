//! Executor and store text with newlines and terminal escapes reaches the log escaped, on every
//! error path of the REST API: a query failing (page, export before and after its first row), the
//! store failing, no capacity, and a client's own bad input.

mod common;
mod handle;

use std::sync::Arc;

use dual_http::DualHttp;
use dual_server::{DEFAULT_SAMPLE_SIZE, DualResponseServer, ExecutorError};
use dual_testkit::executor::{Paged, object};
use dual_testkit::logs::Logs;
use handle::{bytes, send};
use http::{Request, StatusCode};
use serde_json::{Value, json};

/// What the hostile executor and store say: a forged log line, a screen clear, a NUL.
const HOSTILE: &str = "no such column: x\n2026-01-01T00:00:00Z  INFO FORGED admin logged in\u{1b}[2J\0";
/// How it reads once escaped.
const ESCAPED: &str = r"no such column: x\n2026-01-01T00:00:00Z  INFO FORGED admin logged in\u{1b}[2J\u{0}";

/// Kind `hostile`, `{"n": rows, "mode": "fail"|"busy", "from": k}`: the sample is served, every
/// later fetch of rows from `k` on (default 0) fails with [`HOSTILE`], as a query error or as no
/// capacity.
fn hostile() -> Paged {
    Paged::new(|_, i| object(json!({"id": i}))).check(|params, offset, limit| {
        let sample = offset == 0 && limit == DEFAULT_SAMPLE_SIZE;
        if !sample && offset.saturating_add(limit) > params["from"].as_u64().unwrap_or(0) {
            return Err(match params["mode"].as_str() {
                Some("busy") => ExecutorError::overloaded(HOSTILE, std::time::Duration::from_secs(1)),
                _ => ExecutorError::new(HOSTILE),
            });
        }
        Ok(())
    })
}

fn server(store: Arc<common::FlakyStore>) -> DualResponseServer {
    common::builder_with(store)
        .executor("hostile", hostile())
        .without_snapshots()
        .build()
        .expect("valid configuration")
}

async fn create(server: &DualResponseServer, params: Value) -> dual_core::ResourceId {
    common::create_of(server, "hostile", params).await
}

#[tokio::test]
async fn every_error_path_logs_hostile_text_escaped() {
    let (logs, _guard) = Logs::capture();
    let store = Arc::new(common::FlakyStore::new(HOSTILE));
    let server = server(Arc::clone(&store));
    let failing = create(&server, json!({"n": 50})).await;
    let busy = create(&server, json!({"n": 50, "mode": "busy"})).await;
    let midway = create(&server, json!({"n": 50_000, "from": 20_000})).await;
    let handler = DualHttp::new(server);

    // A query failure: a page, and an export before its first row.
    let page = send(&handler, Request::post(format!("/{failing}"))).await;
    assert_eq!(page.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let export = send(&handler, Request::get(format!("/{failing}/data"))).await;
    assert_eq!(export.status(), StatusCode::INTERNAL_SERVER_ERROR);
    // No capacity.
    let overloaded = send(&handler, Request::post(format!("/{busy}"))).await;
    assert_eq!(overloaded.status(), StatusCode::SERVICE_UNAVAILABLE);
    // A failure while streaming: the transfer breaks, the log says why.
    let streamed = send(&handler, Request::get(format!("/{midway}/data"))).await;
    assert_eq!(streamed.status(), StatusCode::OK);
    assert!(
        http_body_util::BodyExt::collect(streamed.into_body())
            .await
            .is_err()
    );
    // The store failing.
    store.set_broken(true);
    let storage = send(&handler, Request::get(format!("/{failing}"))).await;
    assert_eq!(storage.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(!bytes(storage).await.is_empty());
    store.set_broken(false);
    // A client's own bad input, echoed in the debug event of the rejection.
    let bad = send(&handler, Request::get(format!("/{failing}/data?%0A%1B%5B2J=1"))).await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);

    logs.assert_clean();
    let text = logs.text();
    let failures = [
        "query execution failed",
        "no capacity",
        "export aborted",
        "store unavailable",
    ];
    dual_testkit::logs::assert_each_line_escapes(&text, &failures, ESCAPED);
    assert!(text.contains(r"unknown query parameter `\n\u{1b}[2J`"), "{text}");
}
