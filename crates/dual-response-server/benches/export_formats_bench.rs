//! The export formats on the demo's 269,000-row result, side by side in one run (issue 45, item 7;
//! figures in `docs/PERFORMANCE.md`): the full `GET /{id}/data` as JSON, as an Arrow IPC stream and as
//! Parquet, each downloaded with curl from the demo's whole stack (a snapshot), in turn within each round
//! so that the three share the machine's noise.
//!
//! ```text
//! cargo bench -p dual-response-server --bench export_formats_bench      # about a minute
//! BENCH_ROUNDS=9 cargo bench -p dual-response-server --bench export_formats_bench
//! ```
//!
//! Prints each format's bytes and median time (and rows per second), and the two targets: the Parquet
//! export at most a third of the JSON bytes, and at least half the Arrow export's rows per second.
//! A bench target without the test harness (the `--bench` flag cargo passes is ignored).

use std::time::Duration;

use dual_response_server::ipeds::sqlite::SQL_KIND;
use dual_response_server::serve;
use dual_server::CreateResponse;
use serde_json::json;

mod common;
use common::{BoxError, env_u64};

const SQL: &str = "SELECT * FROM degrees_awarded";

/// The formats, by the `Accept` that asks for each.
const FORMATS: [(&str, &str); 3] = [
    ("JSON", "application/json"),
    ("Arrow IPC stream", "application/vnd.apache.arrow.stream"),
    ("Parquet (zstd)", "application/vnd.apache.parquet"),
];

fn main() -> Result<(), BoxError> {
    let (runtime, path) = common::runtime_and_dataset()?;
    let running = runtime.block_on(serve::start_on(&common::serve_options(), &path))?;
    let server = running.server.clone();
    let response =
        runtime.block_on(server.create_response(CreateResponse::new(SQL_KIND, json!({ "sql": SQL }))))?;
    runtime.block_on(common::spooled(&server, response.id))?;
    let total = response.total_count;
    let url = format!("http://{}/resources/{}/data", running.addr, response.id);
    println!("dataset {} — `{SQL}`: {total} rows, a snapshot", path.display());

    let rounds = env_u64("BENCH_ROUNDS", 5).max(1);
    // One download of each first (warm-up), then `rounds` rounds of the three in turn.
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); FORMATS.len()];
    let mut sizes = [0_u64; FORMATS.len()];
    for round in 0..=rounds {
        for (i, (_, accept)) in FORMATS.iter().enumerate() {
            let (time, size) = curl(&url, accept)?;
            if round > 0 {
                times[i].push(time);
            }
            sizes[i] = size;
        }
    }
    let medians: Vec<Duration> = times
        .iter_mut()
        .map(|t| {
            t.sort();
            t[t.len() / 2]
        })
        .collect();
    println!();
    println!("| format | bytes | median time ({rounds} rounds; min–max) | rows/s |");
    println!("|---|---:|---:|---:|");
    for (i, (name, _)) in FORMATS.iter().enumerate() {
        let t = &times[i];
        println!(
            "| {name} | {:.1} MB | {:.0} ms ({:.0}–{:.0}) | {:.2} M |",
            sizes[i] as f64 / 1e6,
            ms(medians[i]),
            ms(t[0]),
            ms(t[t.len() - 1]),
            total as f64 / medians[i].as_secs_f64() / 1e6
        );
    }
    let bytes_ratio = sizes[2] as f64 / sizes[0] as f64;
    // Rows per second of Parquet over Arrow's: the inverse ratio of their times.
    let speed_ratio = medians[1].as_secs_f64() / medians[2].as_secs_f64();
    println!();
    println!(
        "Parquet bytes / JSON bytes: **{bytes_ratio:.3}** (target ≤ 0.333: {})",
        if bytes_ratio <= 1.0 / 3.0 {
            "met"
        } else {
            "NOT met"
        }
    );
    println!(
        "Parquet rows/s / Arrow rows/s: **{speed_ratio:.2}** (target ≥ 0.5: {})",
        if speed_ratio >= 0.5 { "met" } else { "NOT met" }
    );
    common::print_load_at_end();
    runtime.block_on(running.shutdown());
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `curl` downloading `url` with `Accept: accept` to /dev/null: its total time and the bytes it got.
fn curl(url: &str, accept: &str) -> Result<(Duration, u64), BoxError> {
    let output = std::process::Command::new("curl")
        .args([
            "-sS",
            "--fail",
            "-o",
            "/dev/null",
            "-w",
            "%{time_total} %{size_download}",
        ])
        .args(["-H", &format!("Accept: {accept}"), url])
        .output()?;
    if !output.status.success() {
        return Err(format!(
            "curl {url} ({accept}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut parts = text.split_whitespace();
    let secs: f64 = parts.next().unwrap_or_default().parse()?;
    let size: u64 = parts.next().unwrap_or_default().parse()?;
    Ok((Duration::from_secs_f64(secs), size))
}
