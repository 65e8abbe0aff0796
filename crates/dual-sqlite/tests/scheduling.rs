//! The server's scheduler over a real SQLite pool (docs/DESIGN.md §8, "Scheduling"): the snapshots of
//! answers already given never take the connections of tool calls, a queued result finishes when its
//! turn comes, and a full background queue refuses before the query runs, naming its limit.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dual_core::{ResourceId, status::ResourceStatus};
use dual_server::{Caller, CreateResponse, DualResponseServer, SchedulerLimits, ServerError};
use dual_sqlite::{SqliteDb, SqliteOptions};
use serde_json::json;

/// Rows of the table `t`.
const ROWS: u64 = 100_000;

/// A SQLite file with `t(x, label)` of [`ROWS`] rows, removed when dropped.
struct Dataset(PathBuf);

impl Dataset {
    fn new() -> Self {
        let path = std::env::temp_dir().join(format!(
            "dual-sqlite-scheduling-{}.sqlite",
            dual_testkit::unique_name("t")
        ));
        let conn = dual_sqlite::rusqlite::Connection::open(&path).unwrap_or_else(|e| panic!("{e}"));
        conn.execute_batch(&format!(
            "CREATE TABLE t (x INTEGER, label TEXT);
             INSERT INTO t SELECT value, 'row ' || value FROM (
               WITH RECURSIVE c(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM c WHERE value < {ROWS})
               SELECT value FROM c);"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        Self(path)
    }

    /// A server over this file whose pool is tight: two connections, one for exports, a 100 ms wait.
    fn server(&self, limits: SchedulerLimits, pending_after: Duration) -> DualResponseServer {
        let options = SqliteOptions::default()
            .pool_size(2)
            .export_slots(1)
            .wait(Duration::from_millis(100))
            .count_wait(pending_after);
        let db = SqliteDb::open_with(&self.0, options).unwrap_or_else(|e| panic!("{e}"));
        DualResponseServer::builder()
            .base_url("http://localhost/resources")
            .executor("sql", db.sql_executor())
            .pending_after(pending_after)
            .scheduler_limits(limits)
            .build()
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

impl Drop for Dataset {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

async fn call(server: &DualResponseServer, sql: &str) -> Result<dual_core::DualResponse, ServerError> {
    server
        .create_response(CreateResponse::new("sql", json!({ "sql": sql })))
        .await
}

/// Waits until every row of `id` is spooled (at most `within`).
async fn wait_written(server: &DualResponseServer, id: ResourceId, within: Duration) {
    let started = Instant::now();
    loop {
        let record = server
            .get_resource(id, &Caller::anonymous())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(record.status, ResourceStatus::Failed, "{:?}", record.failure);
        if record.status == ResourceStatus::Ready && record.spooled_rows.is_none() {
            return;
        }
        assert!(started.elapsed() < within, "{id} not written within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_is_never_refused_while_the_only_load_is_background_work() {
    let dataset = Dataset::new();
    let server = Arc::new(dataset.server(SchedulerLimits::default(), Duration::from_secs(2)));
    let mut calls = tokio::task::JoinSet::new();
    // Eight whole-table results (their snapshots written one at a time in the background) and four
    // two-row questions, all at once, over a pool of two connections with a 100 ms wait.
    for i in 0..12 {
        let server = Arc::clone(&server);
        calls.spawn(async move {
            let sql = if i % 3 == 2 {
                "SELECT x FROM t WHERE x <= 2"
            } else {
                "SELECT x, label FROM t"
            };
            (sql, call(&server, sql).await)
        });
    }
    let mut big = Vec::new();
    while let Some(joined) = calls.join_next().await {
        let (sql, answered) = joined.unwrap_or_else(|e| panic!("{e}"));
        let response = answered.unwrap_or_else(|e| panic!("`{sql}` was refused: {e}"));
        assert_eq!(response.status, ResourceStatus::Ready);
        if sql.contains("<=") {
            assert_eq!(response.total_count, 2);
        } else {
            assert_eq!(
                response.total_count, ROWS,
                "the exact count, answered before the rows"
            );
            big.push(response.id);
        }
    }
    assert_eq!(big.len(), 8);
    // Every announced result is written in its turn, exactly as counted.
    for id in big {
        wait_written(&server, id, Duration::from_secs(120)).await;
        let last = server
            .fetch_page(
                id,
                &Caller::anonymous(),
                &dual_core::PageRequest {
                    offset: Some(ROWS - 1),
                    limit: Some(10),
                    sort: None,
                },
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(last.returned_count, 1);
        assert_eq!(last.data[0]["x"], json!(ROWS));
    }
    // The pool's connections were all given back: a live export (pool-bound) runs at once.
    let started = Instant::now();
    let answered = call(&server, "SELECT x FROM t WHERE x = 7").await;
    assert_eq!(answered.map(|r| r.total_count).ok(), Some(1));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_background_queue_refuses_before_the_query_runs_and_a_delete_frees_its_place() {
    let dataset = Dataset::new();
    let limits = SchedulerLimits::default().background_slots(1).background_queue(1);
    let server = dataset.server(limits, Duration::from_millis(200));
    // A result that never ends within the test: answered pending, then written in the background.
    let endless = call(&server, "SELECT a.x, b.label FROM t AS a, t AS b")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(endless.status, ResourceStatus::Pending);

    let refused = call(&server, "SELECT x FROM t WHERE x <= 2")
        .await
        .err()
        .unwrap_or_else(|| panic!("a call past the background queue ran"));
    assert!(matches!(refused, ServerError::Overloaded(_)), "{refused}");
    assert_eq!(refused.retry_after(), Some(dual_server::SCHEDULER_RETRY_AFTER));
    let message = dual_core::error::Report::new(&refused).to_string();
    assert!(
        message.contains("background_queue = 1"),
        "the limit is named: {message}"
    );

    // Deleting the running result stops its writer and gives its place back.
    server
        .delete_resource(endless.id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let answered = loop {
        match call(&server, "SELECT x FROM t WHERE x <= 2").await {
            Err(ServerError::Overloaded(_)) if started.elapsed() < Duration::from_secs(1) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            other => break other,
        }
    };
    assert_eq!(
        answered.map(|r| r.total_count).ok(),
        Some(2),
        "the place came back within 1 s of the delete"
    );
}
