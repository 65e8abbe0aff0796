//! Cancellation reaches SQLite: a query whose future or stream is dropped is interrupted and its
//! connection is free again within a second, on a pool of one; a query waiting for that
//! connection is not left to run once cancelled; and a tool call's snapshot never waits for it.

use std::time::{Duration, Instant};

use dual_core::status::ResourceStatus;
use dual_server::{CreateResponse, DualResponseServer};
use dual_testkit::wait::done_within;
use futures_util::StreamExt;
use serde_json::json;

use super::tests::SQL_KIND;
use super::*;
use crate::cancel::Cancel;
use crate::options::*;
use crate::pool::{TakeError, Use};
#[allow(unused_imports)]
use dual_core::SortOrder;

/// Never ends on its own: counts forever, one row at the end.
const RUNAWAY: &str =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
/// How soon a cancelled query's connection must be free again.
const RELEASED_WITHIN: Duration = Duration::from_secs(1);

/// A pool of one connection over an empty database, removed on drop; the time limit is a minute, so
/// only a cancel stops [`RUNAWAY`] within a test.
struct One {
    db: SqliteDb,
    exec: Arc<SqliteExecutor>,
    dir: std::path::PathBuf,
}

impl One {
    fn new(wait: Duration) -> Self {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "dual-demo-cancel-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("empty.sqlite");
        rusqlite::Connection::open(&path)
            .and_then(|conn| conn.execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7);"))
            .expect("database");
        let options = SqliteOptions {
            pool_size: 1,
            export_slots: 1,
            wait,
            time_limit: Duration::from_secs(60),
            // As the server's `pending_after`: a runaway count reads as running.
            count_wait: Duration::from_millis(100),
            ..SqliteOptions::default()
        };
        let db = SqliteDb::open_with(&path, options).expect("opens");
        let exec = Arc::new(db.sql_executor());
        Self { db, exec, dir }
    }

    /// Waits (at most 5 s) until the only connection is taken.
    async fn until_busy(&self) {
        for _ in 0..500 {
            match self.db.pool.try_get() {
                Some(lease) => drop(lease),
                None => return,
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the query never took the connection");
    }

    /// Spawns a count of [`RUNAWAY`]: it takes the only connection, or waits for it.
    fn spawn_runaway(&self) -> tokio::task::JoinHandle<Result<u64, ExecutorError>> {
        let exec = Arc::clone(&self.exec);
        tokio::spawn(async move { exec.count(&json!({"sql": RUNAWAY})).await })
    }

    /// A short query succeeds within [`RELEASED_WITHIN`]: the connection is free.
    async fn assert_free(&self, what: &str) {
        let started = Instant::now();
        let count = self.exec.count(&json!({"sql": "SELECT x FROM t"})).await;
        let elapsed = started.elapsed();
        assert_eq!(count.ok(), Some(1), "{what}: a further query runs");
        assert!(
            elapsed < RELEASED_WITHIN,
            "{what}: the connection was free after {elapsed:?}"
        );
    }
}

impl Drop for One {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_query_future_interrupts_the_statement() {
    let one = One::new(Duration::from_secs(5));
    let running = one.spawn_runaway();
    one.until_busy().await;
    running.abort();
    one.assert_free("count future dropped").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_export_stream_interrupts_the_statement() {
    let one = One::new(Duration::from_secs(5));
    let mut stream = Arc::clone(&one.exec).stream(json!({"sql": RUNAWAY}), QueryStart::detached());
    one.until_busy().await;
    let nothing = tokio::time::timeout(Duration::from_millis(50), stream.next()).await;
    assert!(nothing.is_err(), "the runaway statement yields no row");
    drop(stream);
    one.assert_free("export stream dropped").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_cancelled_while_it_waits_for_a_connection_never_runs() {
    let one = One::new(Duration::from_secs(10));
    let holder = one.spawn_runaway();
    one.until_busy().await;
    // A second runaway waits for the connection; cancelled, it must not take it later.
    let waiter = one.spawn_runaway();
    tokio::time::sleep(Duration::from_millis(100)).await;
    waiter.abort();
    holder.abort();
    one.assert_free("holder and waiter dropped").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_wakes_a_thread_waiting_in_the_pool() {
    let one = One::new(Duration::from_secs(10));
    let held = one.db.pool.try_get().expect("the idle connection");
    let cancel = Arc::new(Cancel::default());
    let pool = Arc::clone(&one.db.pool);
    let waiting = Arc::clone(&cancel);
    let taker = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let taken = pool.get(Use::Query, &waiting);
        (matches!(taken, Err(TakeError::Cancelled)), started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    one.db.pool.cancel(&cancel);
    let (cancelled, waited) = taker.await.expect("joined");
    assert!(cancelled, "the wait ends as cancelled");
    assert!(
        waited < Duration::from_secs(1),
        "woken at once, not at the wait limit: {waited:?}"
    );
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_that_finished_leaves_the_next_one_on_its_connection_alone() {
    let one = One::new(Duration::from_secs(5));
    // Many short queries, each one's future dropped right after it ended: a stale cancel never
    // interrupts the next query on the same connection.
    for _ in 0..50 {
        let rows = one
            .exec
            .fetch(&json!({"sql": "SELECT x FROM t"}), RowWindow::new(0, 10))
            .await;
        assert_eq!(rows.map(|rows| rows.len()).ok(), Some(1));
    }
    let mut stream = Arc::clone(&one.exec).stream(json!({"sql": "SELECT x FROM t"}), QueryStart::detached());
    let mut rows = 0;
    while let Some(batch) = stream.next().await {
        rows += batch.expect("a batch").len();
    }
    drop(stream);
    assert_eq!(rows, 1);
    one.assert_free("after finished queries").await;
}

/// The server over `one`'s executor, snapshots on, `pending_after` 100 ms.
fn server(one: &One) -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://127.0.0.1:1/resources")
        .shared_executor(SQL_KIND, Arc::clone(&one.exec) as Arc<dyn QueryExecutor>)
        .pending_after(Duration::from_millis(100))
        .build()
        .expect("valid configuration")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_never_waits_for_the_pools_connections_and_a_delete_frees_its_own() {
    let one = One::new(Duration::from_millis(600));
    let server = server(&one);
    let holder = one.spawn_runaway();
    one.until_busy().await;
    // The pool's one connection is held: the tool call's snapshot runs on a connection of its own
    // (the server's scheduler bounds those), at once.
    let started = Instant::now();
    let created = server
        .create_response(CreateResponse::new(SQL_KIND, json!({"sql": "SELECT x FROM t"})))
        .await
        .expect("answered");
    assert_eq!((created.status, created.total_count), (ResourceStatus::Ready, 1));
    done_within(
        "a tool call beside a held pool",
        started,
        Duration::from_millis(600),
    );

    // A runaway reads as running (pending), and DELETE gives its connection back.
    let created = server
        .create_response(CreateResponse::new(SQL_KIND, json!({"sql": RUNAWAY})))
        .await
        .expect("created");
    assert_eq!(created.status, ResourceStatus::Pending);
    assert_eq!(one.db.pool.held_by_snapshots(), 1);
    server
        .delete_resource(created.id, &dual_server::Caller::anonymous())
        .await
        .expect("deleted");
    let deleted = Instant::now();
    while one.db.pool.held_by_snapshots() > 0 {
        assert!(
            deleted.elapsed() < RELEASED_WITHIN,
            "the snapshot's connection was not given back"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    holder.abort();
    one.assert_free("holder dropped").await;
}
