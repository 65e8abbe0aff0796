//! Ranged exports: `DualResponseServer::stream_range`, `QueryExecutor::stream_range` and `take_rows`.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use dual_core::{Row, Sort, SortOrder, range::RowRange};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, ExecutorError, LiveQuery, QueryExecutor, QueryStart,
    RowStream, RowWindow, ServerErrorCode, take_rows,
};
use futures_util::StreamExt;
use serde_json::{Value, json};

/// A live server: these tests are about how ranges reach the executor (snapshots never do).
fn server(executor: Arc<dyn QueryExecutor>) -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("https://api.example.com/resources")
        .shared_executor("institutions", executor)
        .without_sweeper()
        .without_snapshots()
        .build()
        .expect("valid configuration")
}

async fn ids(
    server: &DualResponseServer,
    id: dual_core::ResourceId,
    sort: Option<Sort>,
    range: RowRange,
) -> Vec<u64> {
    common::export(server, id, sort, range)
        .await
        .iter()
        .filter_map(|row| row["id"].as_u64())
        .collect()
}

#[tokio::test]
async fn ranges_of_any_size_cover_the_result_exactly_once() {
    let executor = common::shared();
    let server = server(Arc::clone(&executor) as Arc<dyn QueryExecutor>);
    let total = 2_345;
    let id = server
        .create_response(CreateResponse::new("institutions", json!({"n": total})))
        .await
        .expect("created")
        .id;
    for sort in [None, Some(Sort::new("enrollment", SortOrder::Desc))] {
        let whole = ids(&server, id, sort.clone(), RowRange::ALL).await;
        assert_eq!(whole.len() as u64, total);
        let mut pieces = Vec::new();
        let mut offset = 0;
        for size in [1, 1_000, 999, 1_001, 3].into_iter().cycle() {
            if offset >= total {
                break;
            }
            let piece = ids(&server, id, sort.clone(), RowRange::new(offset, Some(size))).await;
            assert_eq!(piece.len() as u64, size.min(total - offset), "{offset}+{size}");
            pieces.extend(piece);
            offset += size;
        }
        assert_eq!(pieces, whole, "sort {sort:?}");
        let tail = ids(&server, id, sort.clone(), RowRange::new(2_000, None)).await;
        assert_eq!(tail, whole[2_000..]);
    }
    // The empty range at the end, and a limit running past it.
    assert!(
        ids(&server, id, None, RowRange::new(total, None))
            .await
            .is_empty()
    );
    assert_eq!(
        ids(&server, id, None, RowRange::new(total - 2, Some(u64::MAX))).await,
        [total - 2, total - 1]
    );
}

#[tokio::test]
async fn a_small_range_fetches_only_what_it_needs() {
    let executor = common::shared();
    let server = server(Arc::clone(&executor) as Arc<dyn QueryExecutor>);
    let id = server
        .create_response(CreateResponse::new("institutions", json!({"n": 50_000})))
        .await
        .expect("created")
        .id;
    let before = executor.fetches();
    assert_eq!(
        ids(&server, id, None, RowRange::new(40_000, Some(5))).await,
        (40_000..40_005).collect::<Vec<_>>()
    );
    assert_eq!(ids(&server, id, None, RowRange::new(0, Some(5))).await.len(), 5);
    // One page from the offset, not forty pages skipped; the second range stops after its first batch.
    assert_eq!(executor.fetches() - before, 2);
}

#[tokio::test]
async fn an_offset_beyond_the_total_is_invalid_and_counted() {
    let server = server(common::shared() as Arc<dyn QueryExecutor>);
    let id = server
        .create_response(CreateResponse::new("institutions", json!({"n": 10})))
        .await
        .expect("created")
        .id;
    let before = server
        .get_resource(id, &Caller::anonymous())
        .await
        .expect("record")
        .access_count;
    let error = server
        .stream_range(id, &Caller::anonymous(), None, RowRange::new(11, None))
        .await
        .map(|_| ())
        .expect_err("beyond the end");
    assert_eq!(error.code(), ServerErrorCode::InvalidRequest);
    assert!(error.to_string().contains("`offset`"), "{error}");
    let after = server
        .get_resource(id, &Caller::anonymous())
        .await
        .expect("record")
        .access_count;
    // Checking the offset needs the record, read by the store call that counts the access.
    assert_eq!(after, before + 1);
}

/// A cursor executor that seeks: it ignores `limit` on purpose, to show the server cuts the surplus.
/// Its whole result is one seek too, as a SQL executor's is.
#[derive(Debug)]
struct Seeking {
    ranges: Arc<AtomicUsize>,
}

impl QueryExecutor for Seeking {
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        start.started();
        self.stream_range(params, None, RowRange::ALL)
    }

    fn live(&self) -> Option<&dyn LiveQuery> {
        Some(self)
    }

    fn stream_range(self: Arc<Self>, params: Value, _: Option<Sort>, range: RowRange) -> RowStream {
        self.ranges.fetch_add(1, Ordering::Relaxed);
        let n = params["n"].as_u64().unwrap_or(0);
        let rows: Vec<Row> = (range.offset..n).map(common::row).collect();
        Box::pin(futures_util::stream::iter([Ok(rows.into())]))
    }
}

#[async_trait::async_trait]
impl LiveQuery for Seeking {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        Ok(params["n"].as_u64().unwrap_or(0))
    }

    async fn fetch(&self, _: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        let offset = window.offset;
        Ok((offset..offset + window.limit.min(15)).map(common::row).collect())
    }
}

#[tokio::test]
async fn an_executor_override_is_used_and_cut_at_the_limit() {
    let ranges = Arc::new(AtomicUsize::new(0));
    let server = server(Arc::new(Seeking {
        ranges: Arc::clone(&ranges),
    }));
    let id = server
        .create_response(CreateResponse::new("institutions", json!({"n": 100})))
        .await
        .expect("created")
        .id;
    assert_eq!(
        ids(&server, id, None, RowRange::new(90, Some(4))).await,
        [90, 91, 92, 93]
    );
    // `stream_rows` is the whole range, through the same method.
    assert_eq!(ids(&server, id, None, RowRange::ALL).await.len(), 100);
    let (_, whole) = server
        .stream_rows(id, &Caller::anonymous(), None)
        .await
        .expect("stream");
    assert_eq!(whole.collect::<Vec<_>>().await.len(), 1);
    assert_eq!(ranges.load(Ordering::Relaxed), 3);
}

/// Sets its flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

#[tokio::test]
async fn take_rows_drops_the_stream_as_soon_as_the_range_is_complete() {
    let rows = |r: std::ops::Range<u64>| -> Vec<Row> { r.map(common::row).collect() };
    let rows = |r: std::ops::Range<u64>| -> dual_server::RowBatch { rows(r).into() };
    let dropped = Arc::new(AtomicBool::new(false));
    let guard = DropFlag(Arc::clone(&dropped));
    // Batches of 5, then a stream that never ends: polling past the range would hang.
    let inner: RowStream = Box::pin(
        futures_util::stream::iter([Ok(rows(0..5)), Ok(rows(5..10)), Ok(rows(10..15))])
            .chain(futures_util::stream::pending())
            .map(move |batch| {
                let _keep = &guard;
                batch
            }),
    );
    let mut stream = take_rows(inner, Some(7));
    assert_eq!(
        stream.next().await.map(|b| b.map(|b| b.len()).ok()),
        Some(Some(5))
    );
    assert!(!dropped.load(Ordering::Acquire));
    assert_eq!(
        stream.next().await.map(|b| b.map(|b| b.len()).ok()),
        Some(Some(2))
    );
    assert!(dropped.load(Ordering::Acquire), "dropped with the last row out");
    assert!(stream.next().await.is_none());

    // Errors pass through and end the stream; `None` leaves a stream untouched.
    let failing: RowStream = Box::pin(futures_util::stream::iter([
        Ok(rows(0..2)),
        Err(ExecutorError::new("boom")),
        Ok(rows(2..4)),
    ]));
    let items: Vec<_> = take_rows(failing, Some(10)).collect().await;
    assert_eq!(items.len(), 2);
    assert!(items[1].is_err());
    let untouched: RowStream = Box::pin(futures_util::stream::iter([
        Ok(rows(0..3)),
        Ok(Vec::new().into()),
    ]));
    assert_eq!(take_rows(untouched, None).collect::<Vec<_>>().await.len(), 2);
}
