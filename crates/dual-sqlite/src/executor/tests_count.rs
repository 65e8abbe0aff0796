//! The snapshot's stream counts in its own read transaction: the count it announces is exactly the
//! rows it yields, however another connection writes meanwhile, and the transaction ends with the
//! stream — when it ends, fails or is dropped — so the pooled connection sees new data again.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use futures_util::StreamExt;
use serde_json::json;

use super::*;
use crate::options::*;
#[allow(unused_imports)]
use dual_core::SortOrder;
use dual_server::RowBatch;

/// Rows in the WAL database's table at the start.
const ROWS: u64 = 20_000;

/// A counted export of `params` whose count goes to `counted` (run on the query's thread, between the
/// count and the first row).
fn counted(
    exec: &Arc<SqliteExecutor>,
    params: Value,
    counted: impl FnOnce(u64) + Send + 'static,
) -> RowStream {
    let counting = Counting {
        pace: dual_server::Pace::default(),
        connected: Box::new(|| {}),
        counted: Box::new(counted),
    };
    Arc::clone(exec).export(params, None, RowRange::ALL, Begin::Counted(counting))
}

/// Every row of `stream`, failing on an error item.
async fn rows(stream: RowStream) -> Vec<Row> {
    let batches: Vec<_> = stream.collect().await;
    batches
        .into_iter()
        .flat_map(|batch| batch.and_then(RowBatch::into_rows).expect("a batch"))
        .collect()
}

/// Where a counted stream's count lands.
fn count_slot() -> (Arc<Mutex<Option<u64>>>, impl FnOnce(u64) + Send + 'static) {
    let slot = Arc::new(Mutex::new(None));
    let set = Arc::clone(&slot);
    (slot, move |n| *set.lock().expect("not poisoned") = Some(n))
}

fn taken(slot: &Mutex<Option<u64>>) -> Option<u64> {
    *slot.lock().expect("not poisoned")
}

#[tokio::test]
async fn the_announced_count_is_the_rows_streamed() {
    let (db, dir) = super::tests::small_db();
    let exec = Arc::new(db.sql_executor());
    for query in [
        "SELECT id, name FROM institutions WHERE control = 'public'",
        "SELECT id, count FROM degrees_awarded",
        "SELECT state, COUNT(*) AS n FROM institutions GROUP BY state",
        "SELECT id FROM institutions WHERE 0",
    ] {
        let (count, announce) = count_slot();
        let streamed = rows(counted(&exec, json!({ "sql": query }), announce)).await;
        assert_eq!(taken(&count), Some(streamed.len() as u64), "{query}");
        // `stream` runs the same statement.
        let plain = rows(Arc::clone(&exec).stream(json!({ "sql": query }), QueryStart::detached())).await;
        assert_eq!(plain, streamed, "{query}");
    }
    // A query that fails is never counted: nothing is announced.
    let (count, announce) = count_slot();
    let failing: Vec<_> = counted(&exec, json!({"sql": "SELECT nope"}), announce)
        .collect()
        .await;
    assert!(failing.first().is_some_and(Result::is_err));
    assert_eq!(taken(&count), None);
    let _ = std::fs::remove_dir_all(dir);
}

/// A database in WAL mode holding [`ROWS`] rows in `t(x)`, a writer connection to it, and the
/// executor over a pool of ONE read-only connection (every query reuses it, so a transaction left
/// open would show as a stale snapshot in the next query).
struct Wal {
    exec: Arc<SqliteExecutor>,
    writer: Arc<Mutex<rusqlite::Connection>>,
    dir: PathBuf,
}

impl Wal {
    fn new(stall: Duration) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "dual-demo-wal-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("wal.sqlite");
        let writer = rusqlite::Connection::open(&path).expect("database");
        writer
            .execute_batch(&format!(
                "PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER); \
                 INSERT INTO t (x) WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {ROWS}) \
                 SELECT i FROM c;"
            ))
            .expect("rows");
        let options = SqliteOptions {
            pool_size: 1,
            export_slots: 1,
            stall,
            ..SqliteOptions::default()
        };
        let db = SqliteDb::open_with(&path, options).expect("opens read-only");
        Self {
            exec: Arc::new(db.sql_executor()),
            writer: Arc::new(Mutex::new(writer)),
            dir,
        }
    }

    /// Inserts `n` rows from the writer connection (committed at once).
    fn insert(writer: &Mutex<rusqlite::Connection>, n: u64) {
        writer
            .lock()
            .expect("not poisoned")
            .execute(
                &format!(
                    "INSERT INTO t (x) WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {n}) \
                     SELECT -i FROM c"
                ),
                [],
            )
            .expect("insert");
    }

    /// The rows of `t` as a live count on the pool's only connection sees them now.
    async fn count_now(&self) -> u64 {
        self.exec
            .count(&json!({"sql": "SELECT x FROM t"}))
            .await
            .expect("count")
    }
}

impl Drop for Wal {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_and_rows_come_from_one_snapshot_while_another_connection_writes() {
    let wal = Wal::new(DEFAULT_STALL);
    let writer = Arc::clone(&wal.writer);
    let (count, announce) = count_slot();
    // Between the count and the first row read, another connection commits 500 rows. Without the
    // read transaction the statement stepped afterwards would see them.
    let stream = counted(&wal.exec, json!({"sql": "SELECT x FROM t"}), move |n| {
        Wal::insert(&writer, 500);
        announce(n);
    });
    let streamed = rows(stream).await;
    assert_eq!(taken(&count), Some(ROWS));
    assert_eq!(streamed.len() as u64, ROWS, "the rows of the counted snapshot");
    assert!(
        streamed
            .iter()
            .all(|row| row["x"].as_i64().is_some_and(|x| x > 0))
    );
    // The transaction ended with the stream: the same connection now sees the new rows.
    assert_eq!(wal.count_now().await, ROWS + 500);
    let again =
        rows(Arc::clone(&wal.exec).stream(json!({"sql": "SELECT x FROM t"}), QueryStart::detached())).await;
    assert_eq!(again.len() as u64, ROWS + 500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_transaction_ends_when_the_stream_is_dropped_ends_or_fails_and_a_pause_is_not_a_stall() {
    let wal = Wal::new(Duration::from_millis(100));
    let mut expected = ROWS;

    // Dropped after its first batch (the rest of the result still unread).
    let mut stream = Arc::clone(&wal.exec).stream(json!({"sql": "SELECT x FROM t"}), QueryStart::detached());
    assert!(stream.next().await.is_some_and(|batch| batch.is_ok()));
    drop(stream);
    Wal::insert(&wal.writer, 10);
    expected += 10;
    assert_eq!(wal.count_now().await, expected, "after a dropped stream");

    // Paused: its reader (the server's writer, waiting for its background turn) takes nothing for
    // longer than the stall time, and the stream still gives every row of its snapshot: the rows
    // inserted meanwhile are not among them.
    let mut stream = Arc::clone(&wal.exec).stream(json!({"sql": "SELECT x FROM t"}), QueryStart::detached());
    let first = stream.next().await.expect("a first batch").expect("rows");
    Wal::insert(&wal.writer, 10);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let rest: Vec<_> = stream.collect().await;
    assert!(
        rest.iter().all(Result::is_ok),
        "a paused snapshot stream does not give up"
    );
    let read = first.len() + rest.iter().flatten().map(RowBatch::len).sum::<usize>();
    assert_eq!(read as u64, expected, "the rows of the stream's own snapshot");
    expected += 10;
    assert_eq!(wal.count_now().await, expected, "after a paused stream");

    // Failing midway: row 15,000 is not JSON.
    let failing =
        json!({"sql": "SELECT x, json(CASE WHEN x = 15000 THEN 'not json' ELSE '1' END) AS j FROM t"});
    let items: Vec<_> = Arc::clone(&wal.exec)
        .stream(failing, QueryStart::detached())
        .collect()
        .await;
    assert!(items.last().is_some_and(Result::is_err), "the stream fails");
    Wal::insert(&wal.writer, 10);
    expected += 10;
    assert_eq!(wal.count_now().await, expected, "after a failed stream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_slower_than_the_count_wait_is_dropped_and_the_rows_still_come() {
    let (_, dir) = super::tests::small_db();
    let options = SqliteOptions {
        pool_size: 1,
        export_slots: 1,
        count_wait: Duration::from_millis(20),
        ..SqliteOptions::default()
    };
    let db = SqliteDb::open_with(&dir.join("small.sqlite"), options).expect("opens");
    let exec = Arc::new(db.sql_executor());
    // Far more than 20 ms of SQLite steps, for its count as for its rows.
    let slow = json!({"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) \
                               SELECT x FROM c WHERE x % 1000 = 0"});
    let (count, announce) = count_slot();
    let streamed = rows(counted(&exec, slow, announce)).await;
    assert_eq!(taken(&count), None, "the count was stopped, never announced");
    assert_eq!(streamed.len(), 3_000, "every row, without a count");
    // A quick count is still announced on the same connection.
    let (count, announce) = count_slot();
    let quick = rows(counted(
        &exec,
        json!({"sql": "SELECT id FROM institutions"}),
        announce,
    ))
    .await;
    assert_eq!(taken(&count), Some(quick.len() as u64));
    let _ = std::fs::remove_dir_all(dir);
}
