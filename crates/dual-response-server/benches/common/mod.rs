//! What the bench programs of `benches/` share (each includes it with `mod common;`).

use std::time::Duration;

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The median of `rounds` timings.
#[allow(
    dead_code,
    reason = "export_formats_bench keeps every round's time (min and max too)"
)]
pub(crate) fn median(
    rounds: u64,
    mut run: impl FnMut() -> Result<Duration, BoxError>,
) -> Result<Duration, BoxError> {
    let mut times = (0..rounds.max(1)).map(|_| run()).collect::<Result<Vec<_>, _>>()?;
    times.sort();
    Ok(times[times.len() / 2])
}

/// The environment variable `name` as an integer, else `default`.
pub(crate) fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The 1-minute load average (`/proc/loadavg`), to print beside the figures; `None` where /proc is not there.
pub(crate) fn load_average() -> Option<String> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

/// The runtime the benches run on (two async workers, as `dual-response serve` on this 2-core machine),
/// after printing the load average; and the demo's default dataset, generated when missing.
#[allow(dead_code, reason = "snapshot_bench and tool_call_bench build their own")]
pub(crate) fn runtime_and_dataset() -> Result<(tokio::runtime::Runtime, std::path::PathBuf), BoxError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    println!("load average at start {}", load_average().unwrap_or_default());
    let path = dual_response_server::ipeds::dataset::default_path();
    dual_response_server::ipeds::dataset::ensure(
        &path,
        dual_response_server::ipeds::dataset::DatasetSize::DEFAULT,
    )?;
    Ok((runtime, path))
}

/// Prints, after a blank line, the load average at the end of a run (beside the figures).
#[allow(dead_code, reason = "snapshot_bench prints no load average")]
pub(crate) fn print_load_at_end() {
    println!();
    println!("load average at end {}", load_average().unwrap_or_default());
}

/// Longest wait for a snapshot to be written.
const SPOOL_LIMIT: Duration = Duration::from_secs(600);

/// Waits (bounded by [`SPOOL_LIMIT`], looking every 5 ms) until every row of `id` is written: the tool
/// call answers at the first sample, and the rest of the snapshot is written behind it.
pub(crate) async fn spooled(
    server: &dual_server::DualResponseServer,
    id: dual_core::ResourceId,
) -> Result<(), BoxError> {
    use dual_core::status::ResourceStatus;
    let deadline = std::time::Instant::now() + SPOOL_LIMIT;
    loop {
        let metadata = server.metadata(id, &dual_server::Caller::anonymous()).await?;
        if metadata.spooled_rows.is_none() && metadata.status == ResourceStatus::Ready {
            return Ok(());
        }
        if metadata.status == ResourceStatus::Failed {
            return Err(format!("the snapshot failed: {:?}", metadata.error).into());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!("the snapshot was not written within {SPOOL_LIMIT:?}").into());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// What the Node reference server does in its database for one tool call, on `conn`: `SELECT
/// COUNT(*) FROM (sql)`, then the first `sample` rows. Returns the count.
#[allow(dead_code, reason = "snapshot_bench does not compare with the reference")]
pub(crate) fn reference_work(conn: &rusqlite::Connection, sql: &str, sample: u64) -> Result<u64, BoxError> {
    let count: i64 = conn.query_row(&format!("SELECT COUNT(*) FROM ({sql})"), [], |row| row.get(0))?;
    let mut stmt = conn.prepare(&format!("SELECT * FROM ({sql}) LIMIT {sample}"))?;
    let width = stmt.column_count();
    let rows = stmt
        .query_map([], |row| {
            (0..width)
                .map(|i| row.get::<_, rusqlite::types::Value>(i))
                .collect::<Result<Vec<_>, _>>()
        })?
        .collect::<Result<Vec<_>, _>>()?;
    std::hint::black_box(rows);
    Ok(u64::try_from(count).unwrap_or_default())
}

/// The demo's server with the command line's defaults (`pending_after` 2 s), on loopback; the
/// snapshots still being written when a bench part ends are not waited for.
#[allow(dead_code, reason = "snapshot_bench and tool_call_bench build their own")]
pub(crate) fn serve_options() -> dual_response_server::serve::ServeOptions {
    let mut options =
        dual_response_server::serve::ServeOptions::new(std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
    options.pending_after = Some(dual_response_server::serve::DEFAULT_PENDING_AFTER);
    options.shutdown_grace = Duration::ZERO;
    options
}
