//! Answering at the first sample with the exact count, and serving a snapshot while it is written
//! (docs/DESIGN.md §8): pages inside the spooled rows at once, past them after a bounded wait or
//! `NOT_READY`, exports that follow the writer, failures after the answer, and other instances.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use dual_core::{PageRequest, ResourceId, range::RowRange, status::ResourceStatus};
use dual_server::dual_spool::{MemorySpool, SegmentLimits, Spool};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, DualResponseServerBuilder, ExecutorError, QueryExecutor,
    QueryStart, RowStream, ServerError, ServerErrorCode,
};
use dual_store::{MemoryStore, ResourceStore};
use dual_testkit::BreakableStore;
use dual_testkit::executor::{read_to_end, row};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// Rows in each batch the executor yields, and in each spool segment.
const BATCH: u64 = 10;

/// An executor that counts its result in the same snapshot as its stream (it announces `total`),
/// yields `first` rows at once, then waits for the gate before it yields the rest: `yields` rows in
/// all, or an error in their place when `fail` is set.
struct Counted {
    total: u64,
    first: u64,
    yields: u64,
    fail: bool,
    gate: Semaphore,
    /// Set when the stream is dropped.
    dropped: AtomicBool,
}

impl Counted {
    fn new(total: u64, first: u64) -> Arc<Self> {
        Self::with(total, first, total, false)
    }

    fn with(total: u64, first: u64, yields: u64, fail: bool) -> Arc<Self> {
        Arc::new(Self {
            total,
            first,
            yields,
            fail,
            gate: Semaphore::new(0),
            dropped: AtomicBool::new(false),
        })
    }

    fn open(&self) {
        self.gate.add_permits(1);
    }
}

/// Sets the executor's `dropped` flag when the stream goes away.
struct OnDrop(Arc<Counted>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

impl QueryExecutor for Counted {
    fn stream(self: Arc<Self>, _params: Value, start: QueryStart) -> RowStream {
        start.started_with_count(self.total);
        let guard = OnDrop(Arc::clone(&self));
        Box::pin(futures_util::stream::unfold(
            (guard, 0u64, false),
            |(guard, next, opened)| async move {
                let me = Arc::clone(&guard.0);
                if next >= me.yields {
                    return None;
                }
                let mut opened = opened;
                if next >= me.first && !opened {
                    let _permit = me.gate.acquire().await.ok()?;
                    opened = true;
                    if me.fail {
                        return Some((Err(ExecutorError::new("disk on fire")), (guard, u64::MAX, opened)));
                    }
                }
                let until = if next < me.first { me.first } else { me.yields };
                let end = (next + BATCH).min(until).min(me.yields);
                let rows = (next..end).map(row).collect();
                Some((Ok(rows), (guard, end, opened)))
            },
        ))
    }
}

fn spool() -> Spool {
    let backend = MemorySpool::new().unwrap_or_else(|e| panic!("{e}"));
    Spool::new(dual_testkit::InProcessShared(backend)).with_segment_limits(SegmentLimits {
        bytes: 1 << 20,
        rows: u32::try_from(BATCH).unwrap_or(u32::MAX),
    })
}

fn builder(executor: &Arc<Counted>, spool: Spool) -> DualResponseServerBuilder {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_executor("counted", Arc::clone(executor) as Arc<dyn QueryExecutor>)
        .spool(spool)
        .spool_wait(Duration::from_millis(300))
        .progress_interval(Duration::from_millis(50), Duration::from_millis(400))
}

fn server(executor: &Arc<Counted>) -> DualResponseServer {
    builder(executor, spool())
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn create(server: &DualResponseServer) -> dual_core::DualResponse {
    tokio::time::timeout(
        Duration::from_secs(5),
        server.create_response(CreateResponse::new("counted", json!({})).sample_size(5)),
    )
    .await
    .unwrap_or_else(|_| panic!("create_response waited for the whole result"))
    .unwrap_or_else(|e| panic!("create_response: {e}"))
}

async fn page(
    server: &DualResponseServer,
    id: ResourceId,
    offset: u64,
    limit: u64,
) -> Result<Vec<u64>, ServerError> {
    let request = PageRequest {
        offset: Some(offset),
        limit: Some(limit),
        ..PageRequest::default()
    };
    let page = server.fetch_page(id, &Caller::anonymous(), &request).await?;
    Ok(page
        .data
        .iter()
        .map(|row| row["id"].as_u64().unwrap_or(u64::MAX))
        .collect())
}

/// The error of the page of `limit` rows from `offset`, which `what` says must not be served.
async fn page_error(
    server: &DualResponseServer,
    id: ResourceId,
    offset: u64,
    limit: u64,
    what: &str,
) -> ServerError {
    page(server, id, offset, limit)
        .await
        .err()
        .unwrap_or_else(|| panic!("{what}"))
}

/// The export of every row of `id`.
async fn export_all(server: &DualResponseServer, id: ResourceId) -> RowStream {
    let (_, stream) = server
        .stream_range(id, &Caller::anonymous(), None, RowRange::ALL)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    stream
}

/// The ids of the next batches of `stream` until it holds `n` rows, each within 2 s.
async fn next_ids(stream: &mut RowStream, ids: &mut Vec<u64>, n: usize, what: &str) {
    while ids.len() < n {
        let batch = tokio::time::timeout(Duration::from_secs(2), stream.next())
            .await
            .unwrap_or_else(|_| panic!("{what}: no rows within 2 s after {}", ids.len()))
            .unwrap_or_else(|| panic!("{what}: the export ended after {} rows", ids.len()))
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        ids.extend(ids_of(batch));
    }
}

/// Asserts that the export of `id` from `server` follows `executor`'s writer: the `spooled` rows stored
/// so far come before the writer goes on, then the rest, every row of the count once, in order.
async fn assert_export_follows_the_writer(
    server: &DualResponseServer,
    id: ResourceId,
    executor: &Counted,
    spooled: usize,
) {
    let mut stream = export_all(server, id).await;
    let mut ids = Vec::new();
    next_ids(
        &mut stream,
        &mut ids,
        spooled,
        "the spooled rows, before the writer ends",
    )
    .await;
    executor.open();
    while let Some(batch) = stream.next().await {
        let batch = batch.unwrap_or_else(|e| panic!("{e}"));
        ids.extend(ids_of(batch));
    }
    assert_eq!(
        ids,
        (0..executor.total).collect::<Vec<_>>(),
        "every row once, in order"
    );
}

/// Asserts that the page of `limit` rows from `offset` is served and holds the ids `expected`.
async fn assert_page(
    server: &DualResponseServer,
    id: ResourceId,
    (offset, limit): (u64, u64),
    expected: std::ops::Range<u64>,
    what: &str,
) {
    let rows = page(server, id, offset, limit)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(rows, expected.collect::<Vec<_>>(), "{what}");
}

/// Polls until `id`'s snapshot is complete (at most 5 s), returning its record.
async fn written(server: &DualResponseServer, id: ResourceId) -> dual_core::ResourceRecord {
    common::record_once(server, id, |r| !r.is_running(), "being written").await
}

#[tokio::test]
async fn the_model_gets_the_exact_count_and_the_sample_before_the_rest_is_written() {
    let executor = Counted::new(1_000, 20);
    let server = server(&executor);
    let response = create(&server).await;
    assert_eq!(response.total_count, 1_000, "the executor's count, exactly");
    assert_eq!(response.sample.len(), 5);
    // Answered once the sample is in; the rows the gate lets through (two segments of 10) are then
    // stored while the rest waits.
    let mut metadata = server
        .metadata(response.id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..500 {
        if metadata.spooled_rows == Some(20) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        metadata = server
            .metadata(response.id, &Caller::anonymous())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(metadata.status, ResourceStatus::Ready);
    assert_eq!(metadata.total_count, 1_000);
    assert_eq!(metadata.spooled_rows, Some(20), "two segments of 10 are stored");

    executor.open();
    let record = written(&server, response.id).await;
    assert_eq!(
        (record.status, record.total_count, record.spooled_rows),
        (ResourceStatus::Ready, 1_000, None)
    );
    let metadata = server
        .metadata(response.id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(metadata.spooled_rows, None, "complete: no spooled rows shown");
    assert_page(
        &server,
        response.id,
        (990, 100),
        990..1_000,
        "every row the count promised",
    )
    .await;
}

#[tokio::test]
async fn pages_inside_the_spooled_rows_are_served_at_once_and_past_them_wait_then_not_ready() {
    let executor = Counted::new(1_000, 20);
    let server = server(&executor);
    let id = create(&server).await.id;
    assert_page(&server, id, (5, 10), 5..15, "rows within the stored segments").await;

    let started = Instant::now();
    let error = page_error(&server, id, 0, 100, "rows not yet written were served").await;
    assert_eq!(error.code(), ServerErrorCode::NotReady, "{error}");
    assert!(matches!(error, ServerError::NotReady { rows: 20 }), "{error:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "it waited spool_wait first"
    );

    let error = server
        .fetch_page(
            id,
            &Caller::anonymous(),
            &PageRequest {
                sort: Some(dual_core::Sort::new("name", dual_core::SortOrder::Asc)),
                ..PageRequest::default()
            },
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("a sorted page of an unfinished snapshot"));
    assert_eq!(
        error.code(),
        ServerErrorCode::NotReady,
        "a sort needs every row: {error}"
    );
    executor.open();
}

#[tokio::test]
async fn a_page_past_the_spooled_rows_is_served_when_the_writer_gets_there_in_time() {
    let executor = Counted::new(100, 20);
    let server = server(&executor);
    let id = create(&server).await.id;
    let opener = {
        let executor = Arc::clone(&executor);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            executor.open();
        })
    };
    assert_page(&server, id, (40, 20), 40..60, "rows once written").await;
    opener.await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn an_export_streams_the_spooled_rows_before_the_writer_ends_and_ends_with_every_row() {
    let executor = Counted::new(500, 30);
    let server = server(&executor);
    let id = create(&server).await.id;
    assert_export_follows_the_writer(&server, id, &executor, 30).await;
}

#[tokio::test]
async fn a_writer_failing_after_the_answer_fails_the_resource_and_cuts_no_export_short() {
    let executor = Counted::with(200, 20, 200, true);
    let server = server(&executor);
    let id = create(&server).await.id;
    let mut stream = export_all(&server, id).await;
    executor.open();
    let mut rows = 0;
    let failed = read_to_end(&mut stream, |batch| rows += batch.len()).await;
    assert!(
        failed.is_some(),
        "the export ended with an error, not short after {rows} rows"
    );
    let record = written(&server, id).await;
    assert_eq!(record.status, ResourceStatus::Failed);
    let failure = record.failure.unwrap_or_else(|| panic!("a failure"));
    assert!(failure.message.contains("disk on fire"), "{}", failure.message);
    let error = page_error(&server, id, 0, 10, "a failed resource served a page").await;
    assert_eq!(error.code(), ServerErrorCode::ResourceFailed);
}

#[tokio::test]
async fn a_stream_shorter_than_its_count_fails_the_resource() {
    let executor = Counted::with(100, 20, 50, false);
    let server = server(&executor);
    let id = create(&server).await.id;
    executor.open();
    let record = written(&server, id).await;
    assert_eq!(record.status, ResourceStatus::Failed, "never a short result");
    let message = record.failure.map(|f| f.message).unwrap_or_default();
    assert!(
        message.contains("counted 100 rows") && message.contains("50"),
        "{message}"
    );
}

#[tokio::test]
async fn a_stream_longer_than_its_count_is_refused() {
    let executor = Counted::with(10, 10, 30, false);
    let server = server(&executor);
    executor.open();
    let error = server
        .create_response(CreateResponse::new("counted", json!({})).sample_size(5))
        .await
        .err()
        .unwrap_or_else(|| panic!("a result longer than its count was answered"));
    assert_eq!(error.code(), ServerErrorCode::QueryExecutionFailed, "{error}");
    assert!(
        error.to_string().contains("at least 11") || format!("{error:?}").contains("at least 11"),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_small_result_waits_for_its_end_and_is_answered_complete() {
    let executor = Counted::new(3, 3);
    let server = server(&executor);
    let response = create(&server).await;
    assert_eq!(response.total_count, 3);
    let record = server
        .get_resource(response.id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!record.is_running(), "every row was read: answered complete");
}

#[tokio::test]
async fn deleting_a_resource_while_it_spools_stops_its_query() {
    let executor = Counted::new(1_000, 20);
    let server = server(&executor);
    let id = create(&server).await.id;
    server
        .delete_resource(id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..100 {
        if executor.dropped.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        executor.dropped.load(Ordering::SeqCst),
        "the executor's stream was dropped"
    );
    let spool = server.spool().cloned().unwrap_or_else(|| panic!("a spool"));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let left = spool.list().await.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        left.iter().all(|s| s.id != id),
        "nothing of it stays spooled: {left:?}"
    );
}

/// Two instances sharing a store and a spool, as behind a load balancer: the writer (where the
/// query runs) and a reader.
fn two_instances(executor: &Arc<Counted>) -> (DualResponseServer, DualResponseServer) {
    let store: Arc<dyn ResourceStore> = Arc::new(MemoryStore::new());
    let spool = spool();
    let instance = |spool: Spool| {
        builder(executor, spool)
            .store(BreakableStore::wrapping(Arc::clone(&store), "unused").pretending_shared())
            .build()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    (instance(spool.clone()), instance(spool))
}

#[tokio::test]
async fn another_instance_serves_the_spooled_rows_and_waits_for_the_rest() {
    let executor = Counted::new(300, 20);
    let (writer, reader) = two_instances(&executor);
    let id = create(&writer).await.id;
    let metadata = reader
        .metadata(id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (metadata.total_count, metadata.status),
        (300, ResourceStatus::Ready)
    );
    assert!(
        metadata.spooled_rows.is_some(),
        "the other instance sees it being written"
    );
    // The writer publishes the stored segments with its next progress write (every 50 ms here),
    // within the reader's wait.
    assert_page(
        &reader,
        id,
        (5, 10),
        5..15,
        "rows already spooled, served by the other instance while the writer writes",
    )
    .await;
    let started = Instant::now();
    let error = page_error(&reader, id, 290, 10, "served rows not yet written").await;
    assert_eq!(error.code(), ServerErrorCode::NotReady, "{error}");
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "it waited for the writer first: {:?}",
        started.elapsed()
    );
    assert!(
        matches!(error, ServerError::NotReady { rows: 20 }),
        "it says how far the writer is: {error:?}"
    );

    executor.open();
    assert_page(
        &reader,
        id,
        (290, 100),
        290..300,
        "served once the writer finished",
    )
    .await;
}

#[tokio::test]
async fn an_export_on_another_instance_follows_the_writer_to_every_row() {
    let executor = Counted::new(400, 30);
    let (writer, reader) = two_instances(&executor);
    let id = create(&writer).await.id;
    assert_export_follows_the_writer(&reader, id, &executor, 30).await;
}

#[tokio::test]
async fn a_writer_failing_elsewhere_fails_the_other_instances_export_and_pages() {
    let executor = Counted::with(300, 20, 300, true);
    let (writer, reader) = two_instances(&executor);
    let id = create(&writer).await.id;
    let mut stream = export_all(&reader, id).await;
    let mut ids = Vec::new();
    next_ids(&mut stream, &mut ids, 20, "the spooled rows").await;
    executor.open();
    let outcome = tokio::time::timeout(
        Duration::from_secs(5),
        read_to_end(&mut stream, |batch| ids.extend(ids_of(batch))),
    )
    .await
    .unwrap_or_else(|_| panic!("the export did not end after the writer failed"));
    let error =
        outcome.unwrap_or_else(|| panic!("the export ended short without an error: {} rows", ids.len()));
    assert!(error.to_string().contains("failed"), "{error}");
    assert!(ids.len() < 300, "never the whole result: {}", ids.len());
    let error = page_error(&reader, id, 0, 10, "a failed resource served a page").await;
    assert_eq!(error.code(), ServerErrorCode::ResourceFailed, "{error}");
}

/// The `id` of each row of `batch` (`u64::MAX` for a row without one).
fn ids_of(batch: dual_server::RowBatch) -> Vec<u64> {
    let rows = batch.into_rows().unwrap_or_else(|e| panic!("{e}"));
    rows.iter()
        .map(|row| row["id"].as_u64().unwrap_or(u64::MAX))
        .collect()
}
