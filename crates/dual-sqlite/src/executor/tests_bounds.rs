//! The pool's bounds: exports cannot take every connection, waits are bounded (`overloaded`), and a
//! stalled export gives its connection back and ends with an error.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::json;

use super::*;
use crate::dataset::{self, DatasetSize};
use crate::options::*;
#[allow(unused_imports)]
use dual_core::SortOrder;
use dual_core::range::RowRange;
use dual_server::RowBatch;
use dual_testkit::wait::done_within;

/// A pool of `pool_size` connections (`export_slots` of them for exports) on a fresh copy of the
/// small dataset, removed on drop.
struct Pool {
    exec: Arc<SqliteExecutor>,
    _db: SqliteDb,
    dir: std::path::PathBuf,
}

impl Pool {
    fn new(pool_size: usize, export_slots: usize, wait: Duration, stall: Duration) -> Self {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "dual-demo-bounds-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let path = dir.join("small.sqlite");
        dataset::ensure(&path, DatasetSize::SMALL).expect("dataset");
        let options = SqliteOptions {
            pool_size,
            export_slots,
            wait,
            stall,
            ..SqliteOptions::default()
        };
        let db = SqliteDb::open_with(&path, options).expect("opens");
        let exec = Arc::new(db.sql_executor());
        Self { exec, _db: db, dir }
    }

    /// An export of [`everything`] (a live export: the pool bounds those).
    fn stream(&self) -> RowStream {
        Arc::clone(&self.exec).stream_range(everything(), None, RowRange::ALL)
    }

    /// A snapshot's stream of [`everything`] that has delivered its first batch (its rows
    /// returned), as the server's writer holds it while it waits for its background turn.
    async fn paused_snapshot(&self) -> (usize, RowStream) {
        let mut stream = Arc::clone(&self.exec).stream(everything(), QueryStart::detached());
        let first = match stream.next().await {
            Some(Ok(batch)) => batch.len(),
            _ => panic!("a first batch"),
        };
        (first, stream)
    }

    /// An export of [`everything`] that has delivered its first batch.
    async fn export(&self) -> RowStream {
        let mut stream = self.stream();
        assert!(stream.next().await.is_some_and(|b| b.is_ok()));
        stream
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// 100,000 generated rows (100 batches), so an unread export fills its channel and stalls.
fn everything() -> Value {
    json!({"sql": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) SELECT i FROM n"})
}

/// The error of a stream item, without printing rows when it is not one.
fn error_of(item: Option<Result<RowBatch, ExecutorError>>) -> ExecutorError {
    match item {
        Some(Err(error)) => error,
        Some(Ok(rows)) => panic!("expected an error, got {} rows", rows.len()),
        None => panic!("expected an error, got the end of the stream"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_exports_never_take_the_connections_pages_need() {
    let pool = Pool::new(3, 2, Duration::from_millis(200), Duration::from_secs(30));
    // Two exports take their first batch and then nobody reads them: they hold both export slots.
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(pool.export().await);
    }
    // A third export cannot get a slot: after the wait limit it is a retryable `overloaded`.
    let started = Instant::now();
    let mut third = pool.stream();
    let error = error_of(third.next().await);
    assert_eq!(
        error.retry_after(),
        Some(Duration::from_secs(1)),
        "{}",
        error.message()
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
    // Pages and counts still run at once on the connection exports may not take.
    for _ in 0..5 {
        let started = Instant::now();
        let page = pool
            .exec
            .fetch(
                &json!({"sql": "SELECT id FROM institutions"}),
                RowWindow::new(0, 10),
            )
            .await
            .expect("page");
        assert_eq!(page.len(), 10);
        done_within("a page", started, Duration::from_millis(150));
    }
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_snapshot_streams_never_take_the_pools_connections() {
    // One connection, and a wait of 100 ms: before the scheduler, three snapshots held by their
    // writers refused every tool call, page and count.
    let pool = Pool::new(1, 1, Duration::from_millis(100), Duration::from_millis(50));
    let mut paused = Vec::new();
    for _ in 0..3 {
        paused.push(pool.paused_snapshot().await);
    }
    // Far longer than the stall limit: a paused snapshot is not a stalled reader.
    tokio::time::sleep(Duration::from_millis(300)).await;
    for _ in 0..3 {
        let started = Instant::now();
        let counted = pool
            .exec
            .count(&json!({"sql": "SELECT id FROM institutions"}))
            .await;
        assert!(counted.is_ok_and(|n| n > 0));
        let mut export = pool.stream();
        assert!(
            export.next().await.is_some_and(|b| b.is_ok()),
            "a live export runs"
        );
        drop(export);
        done_within(
            "a count and an export beside paused snapshots",
            started,
            Duration::from_secs(2),
        );
    }
    // Each paused snapshot still gives every row when read again.
    for (first, stream) in paused {
        let rows: usize = stream
            .map(|batch| {
                batch
                    .map(|b| b.len())
                    .unwrap_or_else(|e| panic!("{}", e.message()))
            })
            .fold(0, |sum, n| async move { sum + n })
            .await;
        assert_eq!(first + rows, 100_000, "every row");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_that_cannot_get_a_connection_in_time_is_overloaded_not_a_hang() {
    let pool = Pool::new(1, 1, Duration::from_millis(100), Duration::from_secs(30));
    let export = pool.export().await;
    let started = Instant::now();
    let error = pool
        .exec
        .count(&json!({"sql": "SELECT 1"}))
        .await
        .expect_err("the only connection is held");
    assert!(error.retry_after().is_some(), "{}", error.message());
    done_within("the bounded wait", started, Duration::from_secs(2));
    drop(export);
    // Once the export's reader is gone, the connection comes back.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match pool.exec.count(&json!({"sql": "SELECT 1"})).await {
            Ok(n) => break assert_eq!(n, 1),
            Err(_) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(20)).await,
            Err(error) => panic!("the connection never came back: {}", error.message()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_export_releases_its_connection_and_ends_with_an_error() {
    let pool = Pool::new(2, 1, Duration::from_millis(100), Duration::from_millis(300));
    let mut stalled = pool.export().await;
    // While it holds the only export slot, another export is refused…
    let mut refused = pool.stream();
    error_of(refused.next().await);
    // …and once the stall time has passed without reading, the slot is free again.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let mut next = pool.stream();
    assert!(
        next.next().await.is_some_and(|b| b.is_ok()),
        "the stalled export gave its connection back"
    );
    drop(next);
    // The stalled reader, reading again, gets the buffered batches and then an error: never a clean end.
    let mut rows = 0;
    let ended = dual_testkit::executor::read_to_end(&mut stalled, |batch| rows += batch.len()).await;
    assert!(
        ended.is_some(),
        "a cut export must end with an error (read {rows} more rows)"
    );
}

/// 300 rows of a 10,000-character value each (about 3 MB in all).
fn wide() -> Value {
    json!({"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 300) SELECT x, hex(zeroblob(5000)) AS v FROM c"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_reads_its_byte_budget_and_one_row_then_stops() {
    let pool = Pool::new(2, 1, Duration::from_secs(2), Duration::from_secs(30));
    let rows = pool
        .exec
        .fetch(&wide(), RowWindow::new(10, 1_000).capped(50_000))
        .await
        .expect("page");
    // Each row is about 10,020 bytes: four fit in 50,000, the fifth is the one refused.
    assert_eq!(rows.len(), 5, "the budget's rows and the one it refused, not 290");
    assert_eq!(rows[0]["x"], json!(11));
    let all = pool
        .exec
        .fetch(&wide(), RowWindow::new(0, 1_000))
        .await
        .expect("fetch");
    assert_eq!(all.len(), 300, "a window without a cap is not capped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_batches_are_bounded_in_bytes() {
    let pool = Pool::new(2, 1, Duration::from_secs(2), Duration::from_secs(30));
    let mut stream = Arc::clone(&pool.exec).stream(wide(), QueryStart::detached());
    let mut rows = 0;
    let mut batches = 0;
    while let Some(batch) = stream.next().await {
        let batch = batch.and_then(RowBatch::into_rows).expect("batch");
        let bytes: usize = batch.iter().map(dual_core::budget::row_json_len).sum();
        assert!(bytes <= STREAM_BATCH_BYTES + 11_000, "a batch of {bytes} bytes");
        rows += batch.len();
        batches += 1;
    }
    assert_eq!(rows, 300);
    assert!(batches >= 3, "about 3 MB in batches of about 1 MiB: {batches}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_over_the_cap_fails_its_query_naming_the_cap() {
    let dir = std::env::temp_dir().join(format!("dual-sqlite-values-{}", dual_testkit::unique_name("v")));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("empty.sqlite");
    rusqlite::Connection::open(&path)
        .and_then(|conn| conn.execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);"))
        .expect("database");
    let capped = SqliteDb::open_with(&path, SqliteOptions::default().max_value_bytes(4096)).expect("opens");
    let exec = Arc::new(capped.sql_executor());
    for sql in [
        "SELECT randomblob(5000) AS b",
        "SELECT printf('%.*c', 5000, 'x') AS s",
        "SELECT x, zeroblob(8000) AS z FROM t",
    ] {
        let mut stream = Arc::clone(&exec).stream(json!({ "sql": sql }), QueryStart::detached());
        let error = error_of(stream.next().await);
        assert!(
            error.message().contains("max_value_bytes") && error.message().contains("4096"),
            "{sql}: {}",
            error.message()
        );
        let page = exec.fetch(&json!({ "sql": sql }), RowWindow::new(0, 10)).await;
        assert!(
            page.is_err_and(|e| e.message().contains("max_value_bytes")),
            "{sql}: the live page too"
        );
    }
    // Under the cap, the same kinds of value come back.
    let page = exec
        .fetch(
            &json!({"sql": "SELECT randomblob(1000) AS b"}),
            RowWindow::new(0, 1),
        )
        .await
        .expect("a value under the cap");
    assert_eq!(
        page[0]["b"].as_str().map(str::len),
        Some("base64:".len() + 1336),
        "base64 of 1,000 bytes"
    );
    // With the default cap, a gigabyte blob is refused at once instead of allocated.
    let default = SqliteDb::open(&path, 2, DEFAULT_TIME_LIMIT).expect("opens");
    let started = Instant::now();
    let mut stream = Arc::new(default.sql_executor()).stream(
        json!({"sql": "SELECT randomblob(1000000000) AS b"}),
        QueryStart::detached(),
    );
    let error = error_of(stream.next().await);
    assert!(
        error.message().contains(&DEFAULT_MAX_VALUE_BYTES.to_string()),
        "{}",
        error.message()
    );
    done_within("the refusal of a gigabyte value", started, Duration::from_secs(2));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_snapshot_query_stops_running_and_its_time_limit_with_it() {
    // Far less than a second of SQLite when it runs; a time limit of 800 ms.
    let dir = std::env::temp_dir().join(format!("dual-sqlite-pace-{}", dual_testkit::unique_name("p")));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("empty.sqlite");
    rusqlite::Connection::open(&path)
        .and_then(|conn| conn.execute_batch("CREATE TABLE t (x INTEGER);"))
        .expect("database");
    let db = SqliteDb::open_with(
        &path,
        SqliteOptions::default().time_limit(Duration::from_millis(800)),
    )
    .expect("opens");
    let exec = Arc::new(db.sql_executor());
    let sql = json!({"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) \
                             SELECT count(*) AS n FROM c"});
    let unpaused = Instant::now();
    let failed = dual_testkit::executor::read_to_end(
        &mut Arc::clone(&exec).stream(sql.clone(), QueryStart::detached()),
        |_| {},
    )
    .await;
    assert!(failed.is_none(), "the query runs");
    let alone = unpaused.elapsed();
    assert!(
        alone < Duration::from_millis(700),
        "the control run took {alone:?}"
    );

    let (start, _started) = QueryStart::channel();
    let paused = start.pace().pause();
    let mut stream = Arc::clone(&exec).stream(sql, start);
    // Paused for longer than the query takes alone, and than its time limit.
    let nothing = tokio::time::timeout(Duration::from_millis(1_500), stream.next()).await;
    assert!(
        nothing.is_err(),
        "a paused query produced a row (or failed) while paused"
    );
    drop(paused);
    let row = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("the row comes once the pause ends");
    let batch = row
        .expect("a batch")
        .unwrap_or_else(|e| panic!("{}", e.message()));
    let rows = batch.into_rows().expect("rows");
    assert_eq!(
        rows[0]["n"],
        json!(200_000),
        "the time limit stopped while paused"
    );
    let _ = std::fs::remove_dir_all(dir);
}
