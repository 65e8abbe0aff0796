//! docs/PERFORMANCE.md's dual-postgres figures (issue 24, item 7), against the PostgreSQL of
//! `DUAL_TEST_POSTGRES_URL` (`bash .ci/services` starts one):
//!
//! * `create_response` of `SELECT * FROM` a 1,000,000-row × 8-column table, snapshot included (until
//!   every row is written), beside `psql -c "\copy (SELECT …) TO /dev/null"` of the same query;
//! * the peak memory of a process that streams the executor over 1,000,000 and over 10,000,000 rows
//!   (each in a child process of its own, `VmHWM`), which should not grow with the rows.
//!
//! ```text
//! cargo bench -p dual-postgres --features services --bench pg_bench      # BENCH_ROUNDS=5 by default
//! ```
//!
//! `BENCH_ONLY=create` or `BENCH_ONLY=memory` runs one half; `BENCH_FETCH_ROWS=N` sets the rows per
//! portal fetch (`PgOptions::fetch_rows`).
//!
//! The tables are made once in the schema `dual_bench` (10,000,000 rows take a minute) and kept.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dual_core::PageRequest;
use dual_postgres::{PgDb, PgOptions};
use dual_server::{Caller, CreateResponse, DualResponseServer, QueryExecutor, QueryStart};
use futures_util::StreamExt;
use serde_json::json;
use tokio_postgres::NoTls;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const SMALL: u64 = 1_000_000;
const LARGE: u64 = 10_000_000;

fn url() -> String {
    std::env::var("DUAL_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

fn table(rows: u64) -> String {
    format!("dual_bench.rows_{rows}")
}

/// Makes `dual_bench.rows_{rows}` (8 columns) unless it is there with its rows.
async fn ensure(client: &tokio_postgres::Client, rows: u64) -> Result<(), BoxError> {
    client
        .batch_execute("CREATE SCHEMA IF NOT EXISTS dual_bench")
        .await?;
    let t = table(rows);
    let exists = client
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&t])
        .await?
        .get::<_, bool>(0);
    if exists {
        let n: i64 = client
            .query_one(&format!("SELECT count(*) FROM {t}"), &[])
            .await?
            .get(0);
        if u64::try_from(n).unwrap_or_default() == rows {
            return Ok(());
        }
        client.batch_execute(&format!("DROP TABLE {t}")).await?;
    }
    eprintln!("making {t} ({rows} rows)…");
    client
        .batch_execute(&format!(
            "CREATE UNLOGGED TABLE {t} AS SELECT g::int8 AS id, (g % 1000)::int4 AS small,
               (g * 0.5)::float8 AS ratio, (g % 100000)::numeric(12,2) / 100 AS amount,
               'row ' || g AS label, DATE '2000-01-01' + (g % 9000)::int AS day,
               TIMESTAMPTZ '2020-01-01 00:00:00+00' + make_interval(secs => g) AS at, g % 2 = 0 AS even
             FROM generate_series(1, {rows}) g; ANALYZE {t};"
        ))
        .await?;
    Ok(())
}

/// The executor's options: the defaults, or `BENCH_FETCH_ROWS` rows per portal fetch.
fn options() -> PgOptions {
    match std::env::var("BENCH_FETCH_ROWS")
        .ok()
        .and_then(|r| r.parse().ok())
    {
        Some(rows) => PgOptions::default().fetch_rows(rows),
        None => PgOptions::default(),
    }
    // The bench connects as the URL's role (the CI's superuser).
    .allow_privileged_role(true)
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort_unstable();
    values[values.len() / 2]
}

/// In a child process: streams the executor over `rows` rows, discarding them, and prints the peak RSS.
async fn stream_child(rows: u64) -> Result<(), BoxError> {
    let db = PgDb::connect(&url(), options()).await?;
    let executor = Arc::new(db.sql_executor());
    let before = dual_testkit::memory::peak_rss_kib();
    let started = Instant::now();
    let mut stream = executor.stream(
        json!({"sql": format!("SELECT * FROM {}", table(rows))}),
        QueryStart::detached(),
    );
    let mut n = 0u64;
    while let Some(batch) = stream.next().await {
        n += batch?.len() as u64;
    }
    println!(
        "rows={n} seconds={:.2} peak_rss_before_kib={before} peak_rss_kib={}",
        started.elapsed().as_secs_f64(),
        dual_testkit::memory::peak_rss_kib()
    );
    Ok(())
}

/// `psql \copy` of the query to /dev/null.
fn psql(rows: u64) -> Result<Duration, BoxError> {
    let started = Instant::now();
    let status = Command::new("psql")
        .arg(url())
        .arg("-q")
        .arg("-c")
        .arg(format!("\\copy (SELECT * FROM {}) TO /dev/null", table(rows)))
        .status()?;
    if !status.success() {
        return Err(format!("psql exited with {status}").into());
    }
    Ok(started.elapsed())
}

/// `create_response` of the query until every row is in the snapshot.
async fn create(server: &DualResponseServer, rows: u64) -> Result<Duration, BoxError> {
    let started = Instant::now();
    let response = server
        .create_response(CreateResponse::new(
            "sql",
            json!({"sql": format!("SELECT * FROM {}", table(rows))}),
        ))
        .await?;
    loop {
        let record = server.get_resource(response.id, &Caller::anonymous()).await?;
        if !record.is_running() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let elapsed = started.elapsed();
    let last = server
        .fetch_page(
            response.id,
            &Caller::anonymous(),
            &PageRequest {
                offset: Some(rows - 1),
                limit: Some(1),
                ..PageRequest::default()
            },
        )
        .await?;
    if last.data.len() != 1 || response.total_count != rows {
        return Err(format!("expected {rows} rows, got total {}", response.total_count).into());
    }
    server.delete_resource(response.id, &Caller::anonymous()).await?;
    Ok(elapsed)
}

fn child(rows: u64) -> Result<String, BoxError> {
    let output = Command::new(std::env::current_exe()?)
        .arg("stream")
        .arg(rows.to_string())
        .output()?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned().into());
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    if args.first().map(String::as_str) == Some("stream") {
        let rows = args.get(1).and_then(|r| r.parse().ok()).ok_or("stream ROWS")?;
        return runtime.block_on(stream_child(rows));
    }
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    if only != "memory" {
        runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&url(), NoTls).await?;
        tokio::spawn(connection);
        ensure(&client, SMALL).await?;
        ensure(&client, LARGE).await?;
        let db = PgDb::connect(&url(), options()).await?;
        let server = DualResponseServer::builder()
            .base_url("http://127.0.0.1/resources")
            .executor("sql", db.sql_executor())
            .build()?;
        // Warm the database's cache and the executor's connections once.
        let _ = psql(SMALL)?;
        let _ = create(&server, SMALL).await?;
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            theirs.push(psql(SMALL)?);
            ours.push(create(&server, SMALL).await?);
        }
        let (ours, theirs) = (median(ours), median(theirs));
        println!(
            "create_response of {SMALL} rows x 8 columns, snapshot included: {:.0} ms; psql \\copy to /dev/null: {:.0} ms; ratio {:.2} (median of {rounds})",
            ours.as_secs_f64() * 1e3,
            theirs.as_secs_f64() * 1e3,
            ours.as_secs_f64() / theirs.as_secs_f64()
        );
        Ok::<(), BoxError>(())
        })?;
    }
    if only == "create" {
        return Ok(());
    }
    let small = child(SMALL)?;
    let large = child(LARGE)?;
    println!("executor stream, {SMALL} rows: {small}");
    println!("executor stream, {LARGE} rows: {large}");
    Ok(())
}
