//! One runaway caller beside a small one (issue 41, item 8; figures in `docs/PERFORMANCE.md`, "One
//! runaway caller").
//!
//! ```text
//! cargo bench -p dual-response-server --bench runaway_bench
//! ```
//!
//! A bench target without the test harness (the `--bench` flag cargo passes is ignored).
//!
//! The demo's server with its defaults (`serve::start` in process, as `dual-response serve` runs it: memory
//! spool, `pending_after` 2 s, the scheduler's and the value cap's defaults) on the embedded dataset.
//! The caller `runaway` sends, at once, an endless `WITH RECURSIVE`, `SELECT randomblob(1000000000)`
//! and `SELECT printf('%.*c', 100000000, 'x')`; meanwhile the caller `other` makes a small tool call
//! (2 rows) every 250 ms for `BENCH_SECONDS` (20). Then the runaway results are deleted and the
//! process's CPU time is read every 250 ms until a window uses less than 5 % of a core.
//!
//! Printed: every small call's time (median, max; the issue's bound is 1 s each), the process's
//! peak RSS (`VmHWM`; bound 1 GiB), and the time from the deletes to the first idle window (bound 5 s).

use std::time::{Duration, Instant};

use dual_response_server::ipeds::sqlite::SQL_KIND;
use dual_response_server::serve;
use dual_server::{Caller, CreateResponse, DualResponseServer};
use serde_json::json;

#[allow(
    dead_code,
    reason = "each bench program uses its own part of the shared helpers"
)]
mod common;
use common::{BoxError, env_u64};

const RUNAWAY: [&str; 3] = [
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
    "SELECT randomblob(1000000000) AS b",
    "SELECT printf('%.*c', 100000000, 'x') AS s",
];

const SMALL: &str = "SELECT * FROM degrees_awarded WHERE id <= 2";

/// A window of CPU use under this share of one core is idle.
const IDLE_SHARE: f64 = 0.05;
const WINDOW: Duration = Duration::from_millis(250);

fn main() -> Result<(), BoxError> {
    let (runtime, path) = common::runtime_and_dataset()?;
    let seconds = env_u64("BENCH_SECONDS", 20);
    let rss_before = status_kib("VmRSS:").unwrap_or_default();
    let running = runtime.block_on(serve::start_on(&common::serve_options(), &path))?;
    let server = running.server.clone();
    let report = runtime.block_on(run(&server, Duration::from_secs(seconds)))?;
    runtime.block_on(running.shutdown());

    println!();
    println!("| runaway set beside a small caller | figure | bound |");
    println!("|---|---:|---:|");
    for line in &report.runaway {
        println!("| runaway: {line} | | |");
    }
    println!(
        "| small tool calls ({} over {seconds} s): median / max | {:.1} ms / {:.1} ms | ≤ 1,000 ms each |",
        report.small.len(),
        ms(percentile(&report.small, 0.5)),
        ms(percentile(&report.small, 1.0)),
    );
    println!("| small tool calls refused | {} | 0 |", report.refused);
    println!(
        "| peak RSS of the process (VmHWM; {} MiB before the server) | {} MiB | ≤ 1,024 MiB |",
        rss_before / 1024,
        status_kib("VmHWM:").unwrap_or_default() / 1024
    );
    println!(
        "| from the deletes to the first idle {} ms window (< {:.0} % of a core) | {} | ≤ 5 s |",
        WINDOW.as_millis(),
        IDLE_SHARE * 100.0,
        report.idle_after.map_or_else(
            || "not idle within 30 s".to_owned(),
            |d| format!("{:.2} s", d.as_secs_f64())
        )
    );
    common::print_load_at_end();
    Ok(())
}

struct Report {
    runaway: Vec<String>,
    small: Vec<Duration>,
    refused: usize,
    idle_after: Option<Duration>,
}

async fn run(server: &DualResponseServer, span: Duration) -> Result<Report, BoxError> {
    let runaway = Caller::owner("runaway");
    let mut calls = tokio::task::JoinSet::new();
    for sql in RUNAWAY {
        let server = server.clone();
        calls.spawn(async move {
            let request = CreateResponse::new(SQL_KIND, json!({ "sql": sql })).owner("runaway");
            (sql, server.create_response(request).await)
        });
    }
    // The small caller, while the runaway calls run and after they are answered.
    let started = Instant::now();
    let (mut small, mut refused) = (Vec::new(), 0);
    while started.elapsed() < span {
        let call = Instant::now();
        let request = CreateResponse::new(SQL_KIND, json!({ "sql": SMALL })).owner("other");
        match server.create_response(request).await {
            Ok(response) => {
                small.push(call.elapsed());
                server
                    .delete_resource(response.id, &Caller::owner("other"))
                    .await?;
            }
            Err(error) => {
                eprintln!("small call refused: {error}");
                refused += 1;
            }
        }
        tokio::time::sleep(WINDOW.saturating_sub(call.elapsed())).await;
    }
    let mut lines = Vec::new();
    let mut ids = Vec::new();
    while let Some(joined) = calls.join_next().await {
        let (sql, answered) = joined?;
        let short: String = sql.chars().take(40).collect();
        match answered {
            Ok(response) => {
                let metadata = server.metadata(response.id, &runaway).await?;
                lines.push(format!(
                    "`{short}…` answered {:?}, now {:?}{}",
                    response.status,
                    metadata.status,
                    metadata.error.map(|e| format!(" ({e:?})")).unwrap_or_default()
                ));
                ids.push(response.id);
            }
            Err(error) => lines.push(format!(
                "`{short}…` refused: {}",
                dual_core::error::Report::new(&error)
            )),
        }
    }
    let deleted = Instant::now();
    for id in ids {
        server.delete_resource(id, &runaway).await?;
    }
    let idle_after = idle_within(Duration::from_secs(30))
        .await
        .map(|at| at.duration_since(deleted));
    Ok(Report {
        runaway: lines,
        small,
        refused,
        idle_after,
    })
}

/// The end of the first [`WINDOW`] in which the process used less than [`IDLE_SHARE`] of a core,
/// looking for at most `limit`.
async fn idle_within(limit: Duration) -> Option<Instant> {
    let started = Instant::now();
    let mut before = cpu_seconds()?;
    while started.elapsed() < limit {
        tokio::time::sleep(WINDOW).await;
        let now = cpu_seconds()?;
        if (now - before) / WINDOW.as_secs_f64() < IDLE_SHARE {
            return Some(Instant::now());
        }
        before = now;
    }
    None
}

/// The process's user and system CPU time so far (`/proc/self/stat`, in clock ticks of 1/100 s).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name (which is in parentheses and may hold spaces).
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |at: usize| fields.get(at)?.parse::<f64>().ok();
    // utime and stime are fields 14 and 15 of proc_pid_stat(5); the state, field 3, is at 0 here.
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

/// A `kB` line of `/proc/self/status` (`VmRSS:`, `VmHWM:`), in KiB.
fn status_kib(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn percentile(times: &[Duration], share: f64) -> Duration {
    let mut times = times.to_vec();
    times.sort();
    let at = ((times.len().saturating_sub(1)) as f64 * share).round() as usize;
    times.get(at).copied().unwrap_or_default()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
