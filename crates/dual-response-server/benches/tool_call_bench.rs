//! The tool call against the reference server's database work, in one run (issue 23; figures in
//! `docs/PERFORMANCE.md`, "The model never waits for the snapshot").
//!
//! ```text
//! cargo bench -p dual-response-server --bench tool_call_bench
//! ```
//!
//! A bench target without the test harness (the `--bench` flag cargo passes is ignored).
//!
//! * `create_response` on the demo's server (`serve::start`, in process: no MCP transport) for four
//!   queries on the embedded dataset, against what the Node reference server does in its database for a
//!   tool call: `SELECT COUNT(*) FROM (sql)` then `SELECT * FROM (sql) LIMIT 15` with rusqlite on the same
//!   file, in the same process (a lower bound of the reference's time: no MCP, no JSON);
//! * a 10,000,000-row result (a synthetic table generated once and cached under the target directory):
//!   `create_response` against the same count + 15-row sample, then 100-row pages at offset 0 while the
//!   snapshot is being written and once it is written (pages/s, in process).
//!
//! `BENCH_ROUNDS` (default 5) sets the timed rounds, `BENCH_PAGE_SECONDS` (default 2) the length of
//! each page loop, `BENCH_BIG_ROWS` (default 10,000,000) the rows of the synthetic table.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dual_core::{PageRequest, ResourceId};
use dual_response_server::ipeds::dataset::{self, DatasetSize};
use dual_response_server::ipeds::sqlite::SQL_KIND;
use dual_response_server::serve::{self, Running, ServeOptions};
use dual_server::{Caller, CreateResponse};
use rusqlite::{Connection, OpenFlags};
use serde_json::json;

mod common;
use common::{BoxError, env_u64, median, spooled};

/// The sample the reference server reads, as the demo's default sample size.
const SAMPLE: u64 = dual_server::DEFAULT_SAMPLE_SIZE;

const QUERIES: [(&str, &str); 4] = [
    ("2 rows", "SELECT * FROM degrees_awarded WHERE id <= 2"),
    (
        "~5,000 rows (filter)",
        "SELECT * FROM degrees_awarded WHERE institution_id <= 110",
    ),
    (
        "GROUP BY over 269,000 rows",
        "SELECT field, award_level, gender, SUM(count) AS degrees FROM degrees_awarded \
         GROUP BY field, award_level, gender",
    ),
    (
        "all 269,000 rows (`ORDER BY id`)",
        "SELECT * FROM degrees_awarded ORDER BY id",
    ),
];

const BIG_SQL: &str = "SELECT * FROM big";

fn main() -> Result<(), BoxError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let rounds = env_u64("BENCH_ROUNDS", 5);
    println!(
        "load average at start {}",
        common::load_average().unwrap_or_default()
    );

    // 1. The four queries on the embedded dataset.
    let path = dataset::default_path();
    dataset::ensure(&path, DatasetSize::DEFAULT)?;
    let running = runtime.block_on(serve::start_on(&options(), &path))?;
    println!("dataset {}", path.display());
    println!();
    println!(
        "| query | rows | reference (count + 15-row sample) | dual-response `create_response` | ours / reference | target |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, sql) in QUERIES {
        let (rows, reference) = reference(&path, sql, rounds)?;
        let ours = tool_call(&runtime, &running, sql, rounds, rows, true)?;
        println!(
            "| {name} | {rows} | {} | {} | **{:.2}** | ≤ 1.0 |",
            ms(reference),
            ms(ours),
            ours.as_secs_f64() / reference.as_secs_f64()
        );
    }
    runtime.block_on(running.shutdown());
    println!();

    // 2. Ten million rows.
    let rows = env_u64("BENCH_BIG_ROWS", 10_000_000);
    let big = big_table(rows)?;
    let running = runtime.block_on(serve::start_on(&options(), &big))?;
    let (counted, reference) = reference(&big, BIG_SQL, rounds)?;
    if counted != rows {
        return Err(format!("{} holds {counted} rows, not {rows}", big.display()).into());
    }
    let ours = tool_call(&runtime, &running, BIG_SQL, rounds, rows, false)?;
    println!("| {rows} rows (`{BIG_SQL}`) | figure |");
    println!("|---|---:|");
    println!(
        "| reference: the executor's count + its first 15-row sample (rusqlite) | {} |",
        ms(reference)
    );
    println!(
        "| `create_response` | {} (**{:.2}×**, target ≤ 1.2×) |",
        ms(ours),
        ours.as_secs_f64() / reference.as_secs_f64()
    );
    let seconds = env_u64("BENCH_PAGE_SECONDS", 2);
    let server = running.server.clone();
    let anyone = Caller::anonymous();
    let (during, after, spooled_at_start, written) = runtime.block_on(async {
        let started = Instant::now();
        let response = server
            .create_response(CreateResponse::new(SQL_KIND, json!({ "sql": BIG_SQL })))
            .await?;
        let answered = started.elapsed();
        let spooled_at_start = server.metadata(response.id, &anyone).await?.spooled_rows;
        let during = pages(&server, response.id, seconds).await?;
        let still = server.metadata(response.id, &anyone).await?.spooled_rows;
        if still.is_none() {
            eprintln!("warning: the snapshot was fully written before the page loop ended");
        }
        spooled(&server, response.id).await?;
        let written = started.elapsed();
        let after = pages(&server, response.id, seconds).await?;
        server.delete_resource(response.id, &anyone).await?;
        println!(
            "| this run's `create_response` / snapshot fully written | {} / {:.1} s |",
            ms(answered),
            written.as_secs_f64()
        );
        Ok::<_, BoxError>((during, after, spooled_at_start, written))
    })?;
    let _ = written;
    println!(
        "| 100-row pages at offset 0 while spooling ({} rows spooled when the loop started) | {during:.0} pages/s |",
        spooled_at_start.map_or_else(|| "all".to_owned(), |n| n.to_string())
    );
    println!("| 100-row pages at offset 0 once written | {after:.0} pages/s |");
    println!("| during / after | **{:.2}** (target ≥ 0.8) |", during / after);
    runtime.block_on(running.shutdown());
    common::print_load_at_end();
    Ok(())
}

/// The demo's server with its defaults (memory spool, no `pending_after`), on loopback.
fn options() -> ServeOptions {
    ServeOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)))
}

/// The reference server's database work for a tool call, median of `rounds`: the count, then the
/// first rows, on a connection opened once. Returns the count too.
fn reference(db: &Path, sql: &str, rounds: u64) -> Result<(u64, Duration), BoxError> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut rows = 0;
    let time = median(rounds, || {
        let started = Instant::now();
        rows = common::reference_work(&conn, sql, SAMPLE)?;
        Ok(started.elapsed())
    })?;
    Ok((rows, time))
}

/// `create_response` for `sql`, median of `rounds`. With `settle`, each resource is deleted once its
/// snapshot is written (not timed), so that no writer of a previous round runs during the next;
/// without, at once (its writer cancelled).
fn tool_call(
    runtime: &tokio::runtime::Runtime,
    running: &Running,
    sql: &str,
    rounds: u64,
    rows: u64,
    settle: bool,
) -> Result<Duration, BoxError> {
    let server = running.server.clone();
    median(rounds, || {
        runtime.block_on(async {
            let started = Instant::now();
            let response = server
                .create_response(CreateResponse::new(SQL_KIND, json!({ "sql": sql })))
                .await?;
            let elapsed = started.elapsed();
            if response.total_count != rows {
                return Err(format!("`{sql}`: total_count {} ≠ {rows}", response.total_count).into());
            }
            if settle {
                spooled(&server, response.id).await?;
            }
            server.delete_resource(response.id, &Caller::anonymous()).await?;
            Ok::<_, BoxError>(elapsed)
        })
    })
}

/// 100-row pages at offset 0, back to back for `seconds`: pages/s.
async fn pages(
    server: &dual_server::DualResponseServer,
    id: ResourceId,
    seconds: u64,
) -> Result<f64, BoxError> {
    let request = PageRequest::from_json(br#"{"offset":0,"limit":100}"#)?;
    let anyone = Caller::anonymous();
    let started = Instant::now();
    let duration = Duration::from_secs(seconds.max(1));
    let mut done = 0u64;
    while started.elapsed() < duration {
        let page = server.fetch_page_encoded(id, &anyone, &request).await?;
        std::hint::black_box(page);
        done += 1;
    }
    Ok(done as f64 / started.elapsed().as_secs_f64())
}

/// The synthetic table `big(id, grp, label)` of `rows` rows, generated once into the target directory
/// (next to the bench binary's `release/`), through a temporary file renamed into place.
fn big_table(rows: u64) -> Result<PathBuf, BoxError> {
    let dir = std::env::current_exe()?
        .ancestors()
        .nth(3)
        .map_or_else(std::env::temp_dir, Path::to_path_buf)
        .join("dual-demo-bench");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("big-{rows}-v1.sqlite"));
    if path.exists() {
        println!("synthetic table: {} (cached)", path.display());
        return Ok(path);
    }
    let tmp = dir.join(format!("big-{rows}-v1.{}.tmp", std::process::id()));
    let started = Instant::now();
    let conn = Connection::open(&tmp)?;
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
         CREATE TABLE big (id INTEGER PRIMARY KEY, grp INTEGER NOT NULL, label TEXT NOT NULL);
         WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < {rows})
         INSERT INTO big SELECT x, x % 1000, 'row ' || x FROM n;"
    ))?;
    drop(conn);
    std::fs::rename(&tmp, &path)?;
    println!(
        "synthetic table: {} generated in {:.1} s",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(path)
}

fn ms(time: Duration) -> String {
    format!("{:.1} ms", time.as_secs_f64() * 1e3)
}
