//! An agent's burst of tool calls (issue 41; figures in `docs/PERFORMANCE.md`, "An agent's burst").
//!
//! ```text
//! cargo bench -p dual-response-server --bench burst_bench
//! ```
//!
//! A bench target without the test harness (the `--bench` flag cargo passes is ignored).
//!
//! On the demo's embedded dataset (269,000 rows of `degrees_awarded`), the demo's server with its
//! defaults (`serve::start` in process: memory spool, `pending_after` 2 s, the scheduler's defaults)
//! answers a mix of five queries — 2 rows, ~5,000 rows, every row, a `GROUP BY`, and a ~10,000,000-row
//! cross join — as an agent asks them:
//!
//! * **back to back**: 12 tool calls one after the other, none deleted (the snapshots of earlier
//!   answers are written behind the later calls);
//! * **at once**: 10 tool calls started together;
//! * **the five-query table**: each query 5 times back to back, the median against the reference.
//!
//! The reference is what the Node reference server does in its database for a tool call: `SELECT
//! COUNT(*) FROM (sql)` then `SELECT * FROM (sql) LIMIT 15`, here with rusqlite on the same file in the
//! same process (a lower bound of the reference's time: no MCP, no JSON, no Node), run in the same
//! pattern (at once: one connection per call, each on a thread of its own).
//!
//! Each figure is a tool call's time to its answer; "refused" counts calls that ended in an error.
//! `BENCH_BACK_TO_BACK` (12), `BENCH_AT_ONCE` (10) and `BENCH_ROUNDS` (5) change the counts.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dual_response_server::ipeds::sqlite::SQL_KIND;
use dual_response_server::serve;
use dual_server::{CreateResponse, DualResponseServer};
use rusqlite::{Connection, OpenFlags};
use serde_json::json;

#[allow(
    dead_code,
    reason = "each bench program uses its own part of the shared helpers"
)]
mod common;
use common::{BoxError, env_u64};

/// The sample the reference server reads, as the demo's default sample size.
const SAMPLE: u64 = dual_server::DEFAULT_SAMPLE_SIZE;

const QUERIES: [(&str, &str); 5] = [
    ("2 rows", "SELECT * FROM degrees_awarded WHERE id <= 2"),
    (
        "~5,000 rows (filter)",
        "SELECT * FROM degrees_awarded WHERE institution_id <= 110",
    ),
    ("all 269,000 rows", "SELECT * FROM degrees_awarded"),
    (
        "GROUP BY over 269,000 rows",
        "SELECT field, award_level, gender, SUM(count) AS degrees FROM degrees_awarded \
         GROUP BY field, award_level, gender",
    ),
    (
        "~10,000,000-row cross join",
        "SELECT a.id, a.name, b.id AS other FROM institutions AS a, \
         (SELECT id FROM institutions LIMIT 1667) AS b",
    ),
];

fn main() -> Result<(), BoxError> {
    let (runtime, path) = common::runtime_and_dataset()?;
    let back_to_back = usize::try_from(env_u64("BENCH_BACK_TO_BACK", 12)).unwrap_or(12);
    let at_once = usize::try_from(env_u64("BENCH_AT_ONCE", 10)).unwrap_or(10);
    let rounds = usize::try_from(env_u64("BENCH_ROUNDS", 5)).unwrap_or(5);
    let sqls = |n: usize| -> Vec<&'static str> { (0..n).map(|i| QUERIES[i % QUERIES.len()].1).collect() };

    println!();
    println!(
        "| burst | reference: median / max / refused | dual-response: median / max / refused | median ours / reference |"
    );
    println!("|---|---:|---:|---:|");
    // Back to back: one call after another, every answer kept (its snapshot written behind).
    let reference_calls = sqls(back_to_back)
        .into_iter()
        .map(|sql| reference(&path, sql))
        .collect::<Vec<_>>();
    let ours_calls = {
        let running = runtime.block_on(serve::start_on(&common::serve_options(), &path))?;
        let server = running.server.clone();
        let calls = runtime.block_on(async {
            let mut calls = Vec::new();
            for sql in sqls(back_to_back) {
                calls.push(tool_call(&server, sql).await);
            }
            calls
        });
        runtime.block_on(running.shutdown());
        calls
    };
    row(
        &format!("{back_to_back} back to back"),
        &reference_calls,
        &ours_calls,
    );

    // At once: every call started together.
    let reference_calls = std::thread::scope(|scope| {
        let handles: Vec<_> = sqls(at_once)
            .into_iter()
            .map(|sql| scope.spawn(|| reference(&path, sql)))
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err("a reference thread panicked".into()))
            })
            .collect::<Vec<_>>()
    });
    let ours_calls = {
        let running = runtime.block_on(serve::start_on(&common::serve_options(), &path))?;
        let server = Arc::new(running.server.clone());
        let calls = runtime.block_on(async {
            let mut set = tokio::task::JoinSet::new();
            for sql in sqls(at_once) {
                let server = Arc::clone(&server);
                set.spawn(async move { tool_call(&server, sql).await });
            }
            let mut calls = Vec::new();
            while let Some(joined) = set.join_next().await {
                calls.push(joined.unwrap_or_else(|e| Err(e.to_string().into())));
            }
            calls
        });
        runtime.block_on(running.shutdown());
        calls
    };
    row(&format!("{at_once} at once"), &reference_calls, &ours_calls);

    // The five-query table, each query `rounds` times back to back (nothing deleted between).
    println!();
    println!(
        "| query ({rounds} calls back to back) | rows | reference median | dual-response median | ours / reference |"
    );
    println!("|---|---:|---:|---:|---:|");
    let running = runtime.block_on(serve::start_on(&common::serve_options(), &path))?;
    let server = running.server.clone();
    for (name, sql) in QUERIES {
        let reference_calls: Vec<_> = (0..rounds).map(|_| reference(&path, sql)).collect();
        let ours_calls: Vec<_> = runtime.block_on(async {
            let mut calls = Vec::new();
            for _ in 0..rounds {
                calls.push(tool_call(&server, sql).await);
            }
            calls
        });
        let rows = reference_calls
            .iter()
            .find_map(|call| call.as_ref().ok().map(|(rows, _)| *rows))
            .unwrap_or_default();
        let (reference_median, ours_median) = (median(&reference_calls), median(&ours_calls));
        println!(
            "| {name} | {rows} | {} | {} | **{:.2}** |",
            ms(reference_median),
            ms(ours_median),
            ratio(ours_median, reference_median)
        );
    }
    runtime.block_on(running.shutdown());
    common::print_load_at_end();
    Ok(())
}

/// One call's outcome: the rows it counted and its time, or why it was refused.
type Call = Result<(u64, Duration), BoxError>;

/// The reference server's database work for one tool call on a connection of its own: the count,
/// then the first rows.
fn reference(db: &Path, sql: &str) -> Call {
    let started = Instant::now();
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let count = common::reference_work(&conn, sql, SAMPLE)?;
    Ok((count, started.elapsed()))
}

/// `create_response` for `sql`: its total and the time to its answer.
async fn tool_call(server: &DualResponseServer, sql: &str) -> Call {
    let started = Instant::now();
    let response = server
        .create_response(CreateResponse::new(SQL_KIND, json!({ "sql": sql })))
        .await?;
    Ok((response.total_count, started.elapsed()))
}

fn row(name: &str, reference: &[Call], ours: &[Call]) {
    let (reference_median, ours_median) = (median(reference), median(ours));
    println!(
        "| {name} | {} / {} / {} | {} / {} / {} | **{:.2}** |",
        ms(reference_median),
        ms(max(reference)),
        refused(reference),
        ms(ours_median),
        ms(max(ours)),
        refused(ours),
        ratio(ours_median, reference_median)
    );
    for call in ours.iter().filter_map(|call| call.as_ref().err()) {
        eprintln!("refused: {call}");
    }
}

fn times(calls: &[Call]) -> Vec<Duration> {
    let mut times: Vec<Duration> = calls
        .iter()
        .filter_map(|c| c.as_ref().ok().map(|(_, t)| *t))
        .collect();
    times.sort();
    times
}

fn median(calls: &[Call]) -> Duration {
    let times = times(calls);
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn max(calls: &[Call]) -> Duration {
    times(calls).last().copied().unwrap_or_default()
}

fn refused(calls: &[Call]) -> usize {
    calls.iter().filter(|call| call.is_err()).count()
}

fn ratio(ours: Duration, reference: Duration) -> f64 {
    ours.as_secs_f64() / reference.as_secs_f64().max(1e-9)
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}
