//! The guard, the errors, the parameters, the count, and the bounds: time limit, cancel, pool.

use std::sync::Arc;
use std::time::{Duration, Instant};

use dual_core::{Row, range::RowRange};
use dual_server::{ExecutorError, QueryExecutor, QueryStart, RowStream};
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::{Database, Limits, sql, stream};
use crate::wait::done_within;

/// A table of `rows` rows `x = 1..=rows`, `label = 'row {x}'`.
async fn numbers(db: &dyn Database, name: &str, rows: u32) -> String {
    let t = db.table(name);
    let values: Vec<String> = (1..=rows).map(|i| format!("({i}, 'row {i}')")).collect();
    db.execute(&format!(
        "CREATE TABLE {t} (x INTEGER, label VARCHAR(20)); INSERT INTO {t} (x, label) VALUES {};",
        values.join(", ")
    ))
    .await;
    t
}

/// Runs the model's `query`, without parameters: its rows, or its first error, and the count it
/// announced.
async fn run_sql(
    executor: &Arc<dyn QueryExecutor>,
    query: &str,
) -> (Result<Vec<Row>, ExecutorError>, Option<u64>) {
    stream(executor, sql(query, Value::Null)).await
}

/// The model's SQL that every executor refuses before it runs, over the table `t` (columns `x` and
/// `label`): writes, DDL, several statements, transaction control and the empty statement. For a
/// crate's own test of its guard, with the statements of its database's dialect added.
#[must_use]
pub fn refused_statements(t: &str) -> Vec<String> {
    vec![
        format!("DELETE FROM {t}"),
        format!("UPDATE {t} SET x = 0"),
        format!("INSERT INTO {t} (x, label) VALUES (3, 'three')"),
        format!("DROP TABLE {t}"),
        format!("CREATE TABLE {t}_new (y INTEGER)"),
        format!("SELECT x FROM {t}; DELETE FROM {t}"),
        "BEGIN".to_owned(),
        "COMMIT".to_owned(),
        String::new(),
        // PostgreSQL nests comments: a DELETE there, a syntax error elsewhere; refused everywhere.
        format!("/* /* */ SELECT */ DELETE FROM {t}"),
        format!("WITH d AS (SELECT x FROM {t}) DELETE FROM {t}"),
    ]
}

/// Parenthesized queries and set operations of them run, counted and streamed like any query.
pub async fn parenthesized_queries_and_set_operations_run(db: Arc<dyn Database>) {
    let t = numbers(db.as_ref(), "parens", 3).await;
    let executor = db.executor(Limits::default()).await;
    for (query, want) in [
        (format!("(SELECT x FROM {t} WHERE x = 1)"), vec![1]),
        (
            format!("(SELECT x FROM {t} WHERE x = 1) UNION (SELECT x FROM {t} WHERE x = 3) ORDER BY x"),
            vec![1, 3],
        ),
        (
            format!("SELECT x FROM {t} WHERE x IN (SELECT x FROM {t} WHERE x > 1) ORDER BY x"),
            vec![2, 3],
        ),
    ] {
        let (rows, count) = run_sql(&executor, &query).await;
        let xs: Vec<u64> = rows
            .unwrap_or_else(|e| panic!("{query}: {e}"))
            .iter()
            .filter_map(|r| r["x"].as_u64())
            .collect();
        assert_eq!(xs, want, "{query}");
        assert!(
            count.is_none_or(|c| c == want.len() as u64),
            "{query}: announced {count:?}"
        );
    }
}

/// Writes, DDL, several statements and transaction control are refused, and nothing is written.
pub async fn writes_are_refused_before_they_run(db: Arc<dyn Database>) {
    let t = numbers(db.as_ref(), "kept", 2).await;
    let executor = db.executor(Limits::default()).await;
    for write in refused_statements(&t) {
        let (rows, _) = run_sql(&executor, &write).await;
        let error = rows.err().unwrap_or_else(|| panic!("ran: {write}"));
        assert!(!error.message().is_empty(), "a refusal says why: {write}");
    }
    let (rows, count) = run_sql(&executor, &format!("SELECT x FROM {t} ORDER BY x")).await;
    let rows = rows.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows.len(), 2, "nothing was written");
    assert!(count.is_none_or(|c| c == 2));
}

/// A query error reaches the model with the database's own message.
pub async fn a_query_error_carries_the_databases_message(db: Arc<dyn Database>) {
    let t = numbers(db.as_ref(), "errors", 1).await;
    let executor = db.executor(Limits::default()).await;
    let (rows, _) = run_sql(&executor, &format!("SELECT no_such_column FROM {t}")).await;
    let error = rows.err().unwrap_or_else(|| panic!("ran"));
    assert!(error.message().contains("no_such_column"), "{}", error.message());
}

/// Values are bound: one matches, a hostile string is a value like any other.
pub async fn params_are_bound_never_interpolated(db: Arc<dyn Database>) {
    let t = numbers(db.as_ref(), "params", 5).await;
    let executor = db.executor(Limits::default()).await;
    let query = format!("SELECT x FROM {t} WHERE x = {}", db.param(1));
    let (rows, _) = stream(&executor, sql(&query, json!([3]))).await;
    assert_eq!(rows.map(|r| r.len()).ok(), Some(1));
    let by_label = format!("SELECT x FROM {t} WHERE label = {}", db.param(1));
    let (rows, _) = stream(&executor, sql(&by_label, json!(["row 2"]))).await;
    assert_eq!(rows.map(|r| r.len()).ok(), Some(1));
    let (rows, _) = stream(&executor, sql(&by_label, json!(["row 2' OR '1'='1"]))).await;
    assert_eq!(
        rows.map(|r| r.len()).ok(),
        Some(0),
        "the quote is part of the value"
    );
    let (rows, _) = stream(&executor, sql(&query, json!([]))).await;
    assert!(rows.is_err(), "a parameter without a value is refused");
}

/// The count a stream announces (if it does) is exactly the rows it yields, in order.
pub async fn the_count_is_the_rows_streamed(db: Arc<dyn Database>) {
    let t = numbers(db.as_ref(), "counted", 2_500).await;
    let executor = db.executor(Limits::default()).await;
    let (rows, count) = run_sql(&executor, &format!("SELECT x FROM {t} ORDER BY x")).await;
    let ids: Vec<u64> = rows
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .filter_map(|r| r["x"].as_u64())
        .collect();
    assert_eq!(ids, (1..=2_500).collect::<Vec<u64>>());
    assert!(count.is_none_or(|c| c == 2_500), "announced {count:?}");
}

/// A slow query stops at the time limit, within seconds, with an error that names the limit.
pub async fn the_time_limit_stops_a_slow_query(db: Arc<dyn Database>) {
    let limits = Limits {
        time_limit: Duration::from_millis(300),
        ..Limits::default()
    };
    let executor = db.executor(limits).await;
    let started = Instant::now();
    let (rows, _) = run_sql(&executor, &db.slow_query(20)).await;
    let error = rows.err().unwrap_or_else(|| panic!("ran through the time limit"));
    assert!(
        error.message().contains("time limit of 300 ms"),
        "names its limit: {}",
        error.message()
    );
    done_within("the time-limited query", started, Duration::from_secs(5));
}

/// An executor whose pool has one connection for streams, waited for at most `wait`, and a live
/// export of a query of about `seconds` on it, not yet polled: polled, it takes that one connection.
/// (A snapshot's `stream` may take a connection of its own: the server's scheduler bounds those.)
async fn busy_pool_of_one(
    db: &dyn Database,
    wait: Duration,
    seconds: u32,
) -> (Arc<dyn QueryExecutor>, RowStream) {
    let limits = Limits {
        pool_size: 1,
        wait,
        ..Limits::default()
    };
    let executor = db.executor(limits).await;
    let slow = export(&executor, &db.slow_query(seconds));
    (executor, slow)
}

/// A live export of the model's `query` (pool-bound on every executor).
fn export(executor: &Arc<dyn QueryExecutor>, query: &str) -> RowStream {
    Arc::clone(executor).stream_range(sql(query, Value::Null), None, RowRange::ALL)
}

/// A stream dropped while its query runs frees the pool's one connection at once: the query was
/// cancelled, not left to finish.
pub async fn a_dropped_stream_frees_its_connection(db: Arc<dyn Database>) {
    let (executor, mut slow) = busy_pool_of_one(db.as_ref(), Duration::from_secs(5), 60).await;
    assert!(
        tokio::time::timeout(Duration::from_millis(500), slow.next())
            .await
            .is_err(),
        "the slow query answered"
    );
    drop(slow);
    let started = Instant::now();
    let rows = super::collect(export(&executor, "SELECT 1 AS one")).await;
    assert_eq!(rows.map(|r| r.len()).ok(), Some(1));
    done_within("the connection's return", started, Duration::from_secs(3));
}

/// A query that finds no free connection within the wait is the retryable `overloaded`.
pub async fn an_exhausted_pool_is_overloaded(db: Arc<dyn Database>) {
    let (executor, mut busy) = busy_pool_of_one(db.as_ref(), Duration::from_millis(200), 5).await;
    let _ = tokio::time::timeout(Duration::from_millis(300), busy.next()).await;
    let started = Instant::now();
    let rows = super::collect(export(&executor, "SELECT 1 AS one")).await;
    let error = rows.err().unwrap_or_else(|| panic!("ran on a busy pool"));
    assert!(error.retry_after().is_some(), "retryable: {}", error.message());
    done_within("the refusal of a busy pool", started, Duration::from_secs(3));
    drop(busy);
}

/// Snapshot streams — what the server's writers hold, unread while they wait for their background
/// turn — never take the connections of pages, counts and exports: with a pool of one and three
/// snapshot streams left unread longer than any stall limit, a count and an export still run within
/// the pool's wait, and each snapshot stream then gives every row.
pub async fn unread_snapshot_streams_leave_the_pool_to_pages_and_counts(db: Arc<dyn Database>) {
    const ROWS: u32 = 30_000;
    let t = numbers(db.as_ref(), "unread", ROWS).await;
    let limits = Limits {
        pool_size: 1,
        wait: Duration::from_millis(500),
        ..Limits::default()
    };
    let executor = db.executor(limits).await;
    let everything = sql(&format!("SELECT x, label FROM {t} ORDER BY x"), Value::Null);
    let mut unread = Vec::new();
    for _ in 0..3 {
        let mut stream = Arc::clone(&executor).stream(everything.clone(), QueryStart::detached());
        let first = match stream.next().await {
            Some(Ok(batch)) => batch.len(),
            Some(Err(error)) => panic!("a snapshot stream failed: {}", error.message()),
            None => panic!("a snapshot stream ended without rows"),
        };
        unread.push((first, stream));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let Some(live) = executor.live() else {
        panic!("the executor has no live paging");
    };
    let few = sql(&format!("SELECT x FROM {t} WHERE x <= 3"), Value::Null);
    for _ in 0..3 {
        let started = Instant::now();
        let counted = live.count(&few).await;
        assert_eq!(counted.map_err(|e| e.message().to_owned()), Ok(3));
        let exported =
            super::collect(Arc::clone(&executor).stream_range(few.clone(), None, RowRange::ALL)).await;
        assert_eq!(exported.map(|rows| rows.len()).ok(), Some(3));
        done_within(
            "a count and an export beside unread snapshots",
            started,
            Duration::from_secs(3),
        );
    }
    for (first, stream) in unread {
        let rest = super::collect(stream)
            .await
            .unwrap_or_else(|e| panic!("{}", e.message()));
        assert_eq!(
            first + rest.len(),
            ROWS as usize,
            "every row of the unread snapshot stream"
        );
    }
}

/// An agent's burst through a server over a pool of one connection and a short wait: ten tool calls
/// at once, whole-table results and two-row questions mixed, are all answered (none refused for
/// capacity), and every announced result is then written in full, exactly as counted.
pub async fn a_burst_of_tool_calls_is_never_refused(db: Arc<dyn Database>) {
    const ROWS: u32 = 20_000;
    let t = numbers(db.as_ref(), "burst", ROWS).await;
    let limits = Limits {
        pool_size: 1,
        wait: Duration::from_millis(200),
        ..Limits::default()
    };
    let server = Arc::new(
        dual_server::DualResponseServer::builder()
            .base_url("http://localhost/resources")
            .shared_executor("sql", db.executor(limits).await)
            .build()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..10 {
        let server = Arc::clone(&server);
        let query = if i % 3 == 2 {
            format!("SELECT x, label FROM {t} WHERE x <= 2")
        } else {
            format!("SELECT x, label FROM {t}")
        };
        calls.spawn(async move {
            let request = dual_server::CreateResponse::new("sql", sql(&query, Value::Null));
            server.create_response(request).await
        });
    }
    let mut ids = Vec::new();
    while let Some(joined) = calls.join_next().await {
        let answered = joined.unwrap_or_else(|e| panic!("{e}"));
        let response = answered.unwrap_or_else(|e| panic!("a tool call of the burst was refused: {e}"));
        assert!(
            [2, u64::from(ROWS)].contains(&response.total_count),
            "{}",
            response.total_count
        );
        ids.push((response.id, response.total_count));
    }
    let anyone = dual_server::Caller::anonymous();
    for (id, total) in ids {
        let started = Instant::now();
        loop {
            let record = server
                .get_resource(id, &anyone)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_ne!(
                record.status,
                dual_core::status::ResourceStatus::Failed,
                "{:?}",
                record.failure
            );
            if record.status == dual_core::status::ResourceStatus::Ready && record.spooled_rows.is_none() {
                assert_eq!(record.total_count, total);
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{id} not written within 60 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A value over `max_value_bytes`, or a row whose values together pass it, fails the query — its
/// snapshot stream and a live page — with an error naming the cap; a row's error names the column
/// that passed it. (A single value may be refused by the database itself, SQLite's
/// `SQLITE_LIMIT_LENGTH`, which does not say which column.) Under the cap, the same rows are read.
pub async fn a_value_or_row_over_the_cap_fails_naming_it(db: Arc<dyn Database>) {
    const CAP: usize = 4_096;
    let t = db.table("wide");
    let (big, half_a, half_b) = ("x".repeat(5_000), "y".repeat(3_000), "z".repeat(3_000));
    db.execute(&format!(
        "CREATE TABLE {t} (k INTEGER, a TEXT, b TEXT); \
         INSERT INTO {t} (k, a, b) VALUES (1, '{big}', 'short'), (2, '{half_a}', '{half_b}'), (3, 'a', 'b');"
    ))
    .await;
    let limits = Limits {
        max_value_bytes: CAP,
        ..Limits::default()
    };
    let executor = db.executor(limits).await;
    let live = |query: String| {
        let executor = Arc::clone(&executor);
        async move {
            let live = executor
                .live()
                .unwrap_or_else(|| panic!("every SQL executor pages live"));
            live.fetch(&sql(&query, Value::Null), dual_server::RowWindow::new(0, 10))
                .await
        }
    };
    for (query, column) in [
        (format!("SELECT a FROM {t} WHERE k = 1"), None),
        (format!("SELECT a, b FROM {t} WHERE k = 2"), Some("`b`")),
    ] {
        let (rows, _) = run_sql(&executor, &query).await;
        let page = live(query.clone()).await;
        for (surface, error) in [("stream", rows.err()), ("live page", page.err())] {
            let error = error.unwrap_or_else(|| panic!("{surface} read past the cap: {query}"));
            let message = error.message();
            assert!(
                message.contains("max_value_bytes") && message.contains(&CAP.to_string()),
                "{surface}: names the cap: {message}"
            );
            if let Some(column) = column {
                assert!(message.contains(column), "{surface}: names {column}: {message}");
            }
        }
    }
    let (rows, _) = run_sql(&executor, &format!("SELECT k, a, b FROM {t} WHERE k = 3")).await;
    assert_eq!(
        rows.map(|rows| rows.len()).ok(),
        Some(1),
        "a row under the cap is read"
    );
}
