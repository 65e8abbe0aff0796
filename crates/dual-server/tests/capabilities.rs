//! The executor's capabilities (docs/DESIGN.md §3): `stream` is all a snapshot needs; live resources
//! need live paging and fail clearly without it; typed parameters that do not decode are a clear
//! error, from `stream` as from live paging.

mod common;

use std::error::Error;
use std::sync::Arc;

use dual_core::error::Report;
use dual_core::{DualResponse, PageRequest, Row, Sort, SortOrder, range::RowRange};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, DualResponseServerBuilder, ExecutorError, LiveQuery,
    QueryExecutor, QueryStart, RowBatch, RowStream, RowWindow, ServerError, ServerErrorCode, Typed,
    TypedExecutor, paged_stream,
};
use dual_testkit::executor::Numbers;
use futures_util::StreamExt;
use serde_json::{Value, json};

/// A change to a server's configuration.
type Configure = fn(DualResponseServerBuilder) -> DualResponseServerBuilder;

/// What every error about a missing live paging says.
const NO_LIVE_PAGING: &str = "no live paging";

fn builder(executor: Arc<dyn QueryExecutor>) -> DualResponseServerBuilder {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_executor("numbers", executor)
        .without_sweeper()
}

/// An error and its sources, as one text.
fn chain(error: &(dyn Error + 'static)) -> String {
    Report::new(error).to_string()
}

/// Every item of `stream`.
async fn items(stream: RowStream) -> Vec<Result<Vec<Row>, ExecutorError>> {
    stream
        .map(|batch| batch.and_then(RowBatch::into_rows))
        .collect()
        .await
}

#[tokio::test]
async fn a_snapshot_needs_nothing_but_stream() {
    let server = builder(Arc::new(Numbers::new().snapshots_only()))
        .build()
        .expect("server");
    let created = common::created(&server, CreateResponse::new("numbers", json!({"n": 250}))).await;
    assert_eq!(created.total_count, 250);
    let page = server
        .fetch_page(
            created.id,
            &Caller::anonymous(),
            &PageRequest {
                offset: Some(200),
                limit: Some(100),
                sort: Some(Sort::new("id", SortOrder::Desc)),
            },
        )
        .await
        .expect("a sorted page of the snapshot");
    assert_eq!(page.returned_count, 50);
    let (_, export) = server
        .stream_range(created.id, &Caller::anonymous(), None, RowRange::new(10, Some(5)))
        .await
        .expect("a range of the snapshot");
    let rows: Vec<Row> = items(export)
        .await
        .into_iter()
        .flat_map(|batch| batch.expect("batch"))
        .collect();
    assert_eq!(rows.first().and_then(|r| r["id"].as_u64()), Some(10));
    assert_eq!(rows.len(), 5);
}

/// Creates 500 rows of `numbers` on a server changed by `configure`.
async fn create_500(configure: Configure, numbers: Numbers) -> Result<DualResponse, ServerError> {
    configure(builder(Arc::new(numbers)))
        .build()
        .expect("server")
        .create_response(CreateResponse::new("numbers", json!({"n": 500})))
        .await
}

#[tokio::test]
async fn a_live_resource_without_live_paging_fails_naming_the_capability() {
    let configurations: [(&str, Configure); 2] = [
        (
            "a server without snapshots",
            DualResponseServerBuilder::without_snapshots,
        ),
        ("a result over the snapshot cap", |b| b.snapshot_max_bytes(1_000)),
    ];
    for (what, configure) in configurations {
        let error = create_500(configure, Numbers::new().snapshots_only())
            .await
            .expect_err(what);
        assert_eq!(error.code(), ServerErrorCode::QueryExecutionFailed, "{what}");
        let text = chain(&error);
        assert!(
            text.contains(NO_LIVE_PAGING) && text.contains("snapshot"),
            "{what}: {text}"
        );
        // The same query with live paging is served live.
        let created = create_500(configure, Numbers::new()).await.expect(what);
        assert_eq!(created.total_count, 500, "{what}");
    }
}

/// Only the required method.
struct OnlyStream;

impl QueryExecutor for OnlyStream {
    fn stream(self: Arc<Self>, _: Value, start: QueryStart) -> RowStream {
        start.started();
        Box::pin(futures_util::stream::iter([Ok(vec![Row::new()].into())]))
    }
}

#[tokio::test]
async fn ranges_and_paged_streams_without_live_paging_are_one_error_item() {
    let executor = Arc::new(OnlyStream);
    assert!(executor.live().is_none());
    for (what, stream) in [
        (
            "stream_range",
            Arc::clone(&executor).stream_range(Value::Null, None, RowRange::new(5, Some(10))),
        ),
        (
            "sorted stream_range from 0",
            Arc::clone(&executor).stream_range(
                Value::Null,
                Some(Sort::new("id", SortOrder::Asc)),
                RowRange::ALL,
            ),
        ),
        (
            "paged_stream",
            paged_stream(Arc::clone(&executor), Value::Null, 100),
        ),
    ] {
        let items = items(stream).await;
        assert_eq!(items.len(), 1, "{what}");
        let error = items.into_iter().next().and_then(Result::err).expect(what);
        assert!(
            error.message().contains(NO_LIVE_PAGING),
            "{what}: {}",
            error.message()
        );
        assert!(error.retry_after().is_none(), "{what}: not a capacity error");
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Count {
    n: u64,
}

/// `n` rows `{"i": …}`, typed; with live paging when `live` is set.
struct TypedRows {
    live: bool,
}

fn typed_rows(offset: u64, end: u64) -> Vec<Row> {
    (offset..end)
        .filter_map(|i| json!({ "i": i }).as_object().cloned())
        .collect()
}

impl TypedExecutor for TypedRows {
    type Params = Count;

    fn stream(self: Arc<Self>, params: Count, start: QueryStart) -> RowStream {
        start.started_with_count(params.n);
        Box::pin(futures_util::stream::iter([Ok(typed_rows(0, params.n).into())]))
    }

    fn live(&self) -> Option<&dyn LiveQuery<Count>> {
        self.live.then_some(self as &dyn LiveQuery<Count>)
    }
}

#[async_trait::async_trait]
impl LiveQuery<Count> for TypedRows {
    async fn count(&self, params: &Count) -> Result<u64, ExecutorError> {
        Ok(params.n)
    }

    async fn fetch(&self, params: &Count, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        Ok(typed_rows(window.offset, params.n.min(window.end())))
    }
}

#[tokio::test]
async fn typed_parameters_that_do_not_decode_are_a_clear_error() {
    let typed = Arc::new(Typed::new(TypedRows { live: true }));
    let bad = json!({"n": "many"});
    let items = items(Arc::clone(&typed).stream(bad.clone(), QueryStart::detached())).await;
    assert_eq!(items.len(), 1);
    let error = items
        .into_iter()
        .next()
        .and_then(Result::err)
        .expect("an error item");
    assert!(
        error.message().starts_with("invalid query parameters") && error.message().contains("u64"),
        "{}",
        error.message()
    );
    let live = typed.live().expect("live paging");
    let count = live.count(&bad).await.expect_err("undecodable");
    assert!(
        count.message().starts_with("invalid query parameters"),
        "{}",
        count.message()
    );
    let missing = live
        .fetch(&json!({}), RowWindow::new(0, 10))
        .await
        .expect_err("undecodable");
    assert!(missing.message().contains("`n`"), "{}", missing.message());

    // Through a server: creating the resource fails with the executor's message.
    let server = builder(Arc::clone(&typed) as Arc<dyn QueryExecutor>)
        .build()
        .expect("server");
    let error = server
        .create_response(CreateResponse::new("numbers", bad))
        .await
        .expect_err("undecodable");
    assert_eq!(error.code(), ServerErrorCode::QueryExecutionFailed);
    assert!(
        chain(&error).contains("invalid query parameters"),
        "{}",
        chain(&error)
    );
}

#[tokio::test]
async fn typed_executors_serve_snapshots_and_live_resources() {
    let request = || CreateResponse::typed("numbers", &Count { n: 30 }).expect("params");
    let snapshot = builder(Arc::new(Typed::new(TypedRows { live: false })))
        .build()
        .expect("server");
    assert_eq!(
        snapshot
            .create_response(request())
            .await
            .expect("snapshot")
            .total_count,
        30
    );

    let without = Arc::new(Typed::new(TypedRows { live: false }));
    assert!(without.live().is_none());
    let error = builder(without)
        .without_snapshots()
        .build()
        .expect("server")
        .create_response(request())
        .await
        .expect_err("no live paging");
    assert!(chain(&error).contains(NO_LIVE_PAGING), "{}", chain(&error));

    let live = builder(Arc::new(Typed::new(TypedRows { live: true })))
        .without_snapshots()
        .build()
        .expect("server");
    let created = live.create_response(request()).await.expect("live");
    assert_eq!(created.total_count, 30);
    let page = live
        .fetch_page(created.id, &Caller::anonymous(), &PageRequest::default())
        .await
        .expect("a live page");
    assert_eq!(page.returned_count, 30);
}
