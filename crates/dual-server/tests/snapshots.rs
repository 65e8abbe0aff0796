//! Snapshot semantics (docs/DESIGN.md §3): one execution per resource; pages, sorted pages and
//! exports served from the snapshot however the data changes; the size cap; segment lifetimes.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dual_core::{PageRequest, ResourceId, Row, Sort, SortOrder, consistency::Consistency, range::RowRange};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, ExecutorError, LiveQuery, QueryExecutor, QueryStart,
    RowStream, RowWindow, ServerErrorCode, paged_stream,
};
use dual_spool::{MemorySpool, SegmentLimits, Spool};
use dual_store::Clock;
use dual_testkit::BreakableSpool;
use dual_testkit::executor::Numbers;
use serde_json::{Value, json};

/// Rows in a shared vector the test mutates; counts every call.
#[derive(Debug, Default)]
struct Table {
    rows: Mutex<Vec<Row>>,
    counts: AtomicUsize,
    fetches: AtomicUsize,
    streams: AtomicUsize,
}

impl Table {
    fn calls(&self) -> (usize, usize, usize) {
        (
            self.counts.load(Ordering::SeqCst),
            self.fetches.load(Ordering::SeqCst),
            self.streams.load(Ordering::SeqCst),
        )
    }

    fn replace(&self, rows: Vec<Row>) {
        *self.rows.lock().expect("rows") = rows;
    }
}

impl QueryExecutor for Table {
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        self.streams.fetch_add(1, Ordering::SeqCst);
        start.started();
        paged_stream(self, params, 16)
    }

    fn live(&self) -> Option<&dyn LiveQuery> {
        Some(self)
    }
}

#[async_trait::async_trait]
impl LiveQuery for Table {
    async fn count(&self, _: &Value) -> Result<u64, ExecutorError> {
        self.counts.fetch_add(1, Ordering::SeqCst);
        Ok(self.rows.lock().expect("rows").len() as u64)
    }

    async fn fetch(&self, _: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        self.fetches.fetch_add(1, Ordering::SeqCst);
        let mut rows = self.rows.lock().expect("rows").clone();
        if let Some(sort) = window.sort {
            rows = sorted(&rows, sort);
        }
        Ok(rows
            .into_iter()
            .skip(window.offset as usize)
            .take(window.limit as usize)
            .collect())
    }
}

/// The expected order: nulls first ascending, numbers by value, stable; descending is the reverse.
fn sorted(rows: &[Row], sort: &Sort) -> Vec<Row> {
    let mut rows = rows.to_vec();
    rows.sort_by_key(|r| r[&sort.field].as_i64().map_or((0, 0), |v| (1, v)));
    if sort.order == SortOrder::Desc {
        rows.reverse();
    }
    rows
}

fn row(i: u64, tag: &str) -> Row {
    let score = if i % 10 == 3 {
        Value::Null
    } else {
        json!((i * 37) % 50)
    };
    json!({"id": i, "score": score, "tag": tag})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn rows(n: u64, tag: &str) -> Vec<Row> {
    (0..n).map(|i| row(i, tag)).collect()
}

/// A spool with small segments, so that pages and sorted reads cross segments.
fn spool_on(backend: impl dual_spool::SpoolBackend) -> Spool {
    Spool::new(backend).with_segment_limits(SegmentLimits { bytes: 2048, rows: 7 })
}

fn memory_spool() -> Spool {
    spool_on(MemorySpool::new().expect("spool"))
}

fn server(table: &Arc<Table>, spool: Spool) -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("https://api.example.com/resources")
        .shared_executor("table", Arc::clone(table) as Arc<dyn QueryExecutor>)
        .spool(spool)
        .clock(Clock::tokio())
        .without_sweeper()
        .build()
        .expect("valid configuration")
}

async fn create(server: &DualResponseServer) -> ResourceId {
    server
        .create_response(
            CreateResponse::new("table", Value::Null)
                .sample_size(5)
                .expiration(Duration::from_secs(60)),
        )
        .await
        .expect("created")
        .id
}

async fn page(
    server: &DualResponseServer,
    id: ResourceId,
    request: Value,
) -> Result<Vec<Row>, ServerErrorCode> {
    let request: PageRequest = serde_json::from_value(request).expect("page request");
    server
        .fetch_page(id, &Caller::anonymous(), &request)
        .await
        .map(|page| page.data)
        .map_err(|e| e.code())
}

#[tokio::test(start_paused = true)]
async fn pages_and_exports_serve_the_rows_counted_at_creation_however_the_data_changes() {
    let table = Arc::new(Table::default());
    let original = rows(100, "before");
    table.replace(original.clone());
    let server = server(&table, memory_spool());
    let response = server
        .create_response(CreateResponse::new("table", Value::Null).sample_size(5))
        .await
        .expect("created");
    assert_eq!(response.total_count, 100);
    assert_eq!(&response.sample[..], &original[..5]);
    let id = response.id;
    let at_creation = table.calls();
    assert_eq!(
        (at_creation.0, at_creation.2),
        (0, 1),
        "one stream pass at creation, no count"
    );

    // The data changes: rows vanish, others appear.
    table.replace(rows(3, "after"));

    let all = page(&server, id, json!({"offset": 0, "limit": 1000}))
        .await
        .expect("page");
    assert_eq!(all, original);
    let middle = page(&server, id, json!({"offset": 40, "limit": 9}))
        .await
        .expect("page");
    assert_eq!(middle, original[40..49]);
    assert!(
        page(&server, id, json!({"offset": 100}))
            .await
            .expect("page")
            .is_empty()
    );
    for order in ["asc", "desc"] {
        let sort = Sort::new(
            "score",
            if order == "asc" {
                SortOrder::Asc
            } else {
                SortOrder::Desc
            },
        );
        let expected = sorted(&original, &sort);
        let got = page(
            &server,
            id,
            json!({"offset": 10, "limit": 25, "sort": {"field": "score", "order": order}}),
        )
        .await
        .expect("sorted page");
        assert_eq!(got, expected[10..35], "sorted page {order}");
        assert_eq!(
            common::export(&server, id, Some(sort.clone()), RowRange::ALL).await,
            expected
        );
        assert_eq!(
            common::export(&server, id, Some(sort), RowRange::new(95, Some(10))).await,
            expected[95..]
        );
    }
    assert_eq!(common::export(&server, id, None, RowRange::ALL).await, original);
    assert_eq!(
        common::export(&server, id, None, RowRange::new(13, Some(20))).await,
        original[13..33]
    );
    let metadata = server.metadata(id, &Caller::anonymous()).await.expect("metadata");
    assert_eq!(
        (metadata.consistency, metadata.total_count),
        (Consistency::Snapshot, 100)
    );
    assert_eq!(
        serde_json::to_value(&metadata).expect("json")["consistency"],
        "snapshot"
    );
    assert_eq!(table.calls(), at_creation, "no read re-executed the query");
}

#[tokio::test(start_paused = true)]
async fn a_result_over_the_cap_is_live_and_re_executes() {
    let table = Arc::new(Table::default());
    table.replace(rows(100, "before"));
    let server = DualResponseServer::builder()
        .base_url("https://api.example.com/resources")
        .shared_executor("table", Arc::clone(&table) as Arc<dyn QueryExecutor>)
        .spool(memory_spool())
        .snapshot_max_bytes(500)
        .without_sweeper()
        .build()
        .expect("valid configuration");
    let id = create(&server).await;
    let metadata = server.metadata(id, &Caller::anonymous()).await.expect("metadata");
    assert_eq!(
        (metadata.consistency, metadata.total_count),
        (Consistency::Live, 100)
    );
    let before = table.calls();
    assert_eq!(before.0, 1, "the live path counts");
    table.replace(rows(3, "after"));
    let all = page(&server, id, json!({"limit": 1000})).await.expect("page");
    assert_eq!(all, rows(3, "after"), "live pages follow the data");
    assert!(table.calls().1 > before.1, "the page re-executed the query");
}

#[tokio::test(start_paused = true)]
async fn delete_removes_the_snapshot_before_answering() {
    let table = Arc::new(Table::default());
    table.replace(rows(50, "x"));
    let spool = memory_spool();
    let server = server(&table, spool.clone());
    let id = create(&server).await;
    assert_eq!(spool.list().await.expect("list").len(), 1);
    server
        .delete_resource(id, &Caller::anonymous())
        .await
        .expect("deleted");
    assert!(spool.list().await.expect("list").is_empty());
    assert_eq!(
        page(&server, id, json!({})).await,
        Err(ServerErrorCode::ResourceNotFound)
    );
}

#[tokio::test(start_paused = true)]
async fn an_expired_resource_is_never_read_and_the_purge_removes_its_snapshot() {
    let table = Arc::new(Table::default());
    table.replace(rows(50, "x"));
    let backend = BreakableSpool::new(MemorySpool::new().expect("spool"));
    let spool = spool_on(backend.clone());
    let server = server(&table, spool.clone());
    let id = create(&server).await;
    tokio::time::advance(Duration::from_secs(61)).await;
    // Any read of the spool would fail now: the expiry is decided before it.
    backend.break_storage();
    assert_eq!(
        page(&server, id, json!({})).await,
        Err(ServerErrorCode::ResourceExpired)
    );
    let sort = Some(Sort::new("score", SortOrder::Asc));
    let export = server
        .stream_range(id, &Caller::anonymous(), sort, RowRange::ALL)
        .await
        .map(|_| ())
        .map_err(|e| e.code());
    assert_eq!(export, Err(ServerErrorCode::ResourceExpired));
    backend.restore();
    assert_eq!(server.purge_expired().await.expect("purged"), 1);
    assert!(spool.list().await.expect("list").is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_spool_outage_is_a_retryable_storage_error() {
    let table = Arc::new(Table::default());
    table.replace(rows(50, "x"));
    let backend = BreakableSpool::new(MemorySpool::new().expect("spool"));
    let server = server(&table, spool_on(backend.clone()));
    let id = create(&server).await;
    backend.break_storage();
    let request = PageRequest::default();
    let err = server
        .fetch_page(id, &Caller::anonymous(), &request)
        .await
        .expect_err("spool down");
    assert_eq!(
        (err.code(), err.is_retryable()),
        (ServerErrorCode::StorageError, true)
    );
    let err = server
        .stream_range(id, &Caller::anonymous(), None, RowRange::ALL)
        .await
        .map(|_| ())
        .expect_err("spool down");
    assert_eq!(
        (err.code(), err.is_retryable()),
        (ServerErrorCode::StorageError, true)
    );
    let err = server
        .create_response(CreateResponse::new("table", Value::Null))
        .await
        .expect_err("spool down");
    assert_eq!(
        (err.code(), err.is_retryable()),
        (ServerErrorCode::StorageError, true)
    );
    backend.restore();
    assert_eq!(
        page(&server, id, json!({"limit": 1000}))
            .await
            .expect("back")
            .len(),
        50
    );
}

#[tokio::test(start_paused = true)]
async fn a_failing_query_leaves_no_snapshot() {
    let table = Arc::new(Table::default());
    let spool = memory_spool();
    let server = DualResponseServer::builder()
        .base_url("https://api.example.com/resources")
        .executor("broken", Numbers::new())
        .spool(spool.clone())
        .without_sweeper()
        .build()
        .expect("valid configuration");
    drop(table);
    let err = server
        // 50 rows, then the query fails.
        .create_response(CreateResponse::new(
            "broken",
            json!({"n": 100, "fail_stream_at": 50}),
        ))
        .await
        .expect_err("fails");
    assert_eq!(err.code(), ServerErrorCode::QueryExecutionFailed);
    // The abandoned writer removes its segments in a task.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(spool.list().await.expect("list").is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_sweeper_removes_orphaned_snapshots_but_spares_young_ones() {
    let table = Arc::new(Table::default());
    table.replace(rows(20, "x"));
    let spool = memory_spool();
    // An orphan: a snapshot two hours old whose record was never saved (a crash in between).
    let orphan = id_made_ago(Duration::from_secs(2 * 60 * 60));
    let mut writer = spool.writer(orphan).await.expect("writer");
    writer.append(br#"{"id":1}"#).await.expect("append");
    writer.finish().await.expect("finish");
    // A young one: maybe an instance still writing before it saves the record.
    let young = ResourceId::new();
    let mut writer = spool.writer(young).await.expect("writer");
    writer.append(br#"{"id":1}"#).await.expect("append");
    writer.finish().await.expect("finish");
    let server = DualResponseServer::builder()
        .base_url("https://api.example.com/resources")
        .shared_executor("table", Arc::clone(&table) as Arc<dyn QueryExecutor>)
        .spool(spool.clone())
        .cleanup_interval(Duration::from_secs(60))
        .build()
        .expect("valid configuration");
    let live = create(&server).await;
    tokio::time::advance(Duration::from_secs(30)).await;
    tokio::time::advance(Duration::from_secs(31)).await;
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    let mut left: Vec<ResourceId> = spool
        .list()
        .await
        .expect("list")
        .into_iter()
        .map(|s| s.id)
        .collect();
    left.sort();
    let mut want = vec![young, live];
    want.sort();
    assert_eq!(
        left, want,
        "the orphan is gone, the young snapshot and the live resource's stay"
    );
    server.shutdown().await.expect("shutdown");
}

/// An id whose ULID timestamp is `ago` before now (ten Crockford base32 digits of milliseconds).
fn id_made_ago(ago: Duration) -> ResourceId {
    const DIGITS: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970");
    let mut ms = (since_epoch - ago).as_millis() as u64;
    let mut time = [b'0'; 10];
    for digit in time.iter_mut().rev() {
        *digit = DIGITS[(ms % 32) as usize];
        ms /= 32;
    }
    let text = format!("{}{}", String::from_utf8_lossy(&time), "0000000000000001");
    text.parse().expect("a ULID")
}
