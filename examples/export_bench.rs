//! Full-result fetch benchmark of issue 4: `fetch_all` and `fetch_stream` of N rows × 8 columns from a
//! dual-http server in another process, against the in-process floor (serialize + parse once).
//!
//! ```sh
//! cargo build --release --example export_bench
//! B=target/release/examples/export_bench
//! $B floor 1000000                       # the floor
//! $B serve 1000000 /tmp/tool.json &      # server process, writes the tool result
//! $B fetch-all /tmp/tool.json; $B stream /tmp/tool.json
//! ```

use std::time::Instant;

use dual_response::client::{DualResponseClient, FetchAllOptions, FetchStreamOptions};
use dual_response::core::Row;
use dual_response::server::CreateResponse;
use futures_util::StreamExt;
use serde_json::json;

#[path = "../tests/support/mod.rs"]
mod support;

type Error = Box<dyn std::error::Error + Send + Sync>;

fn arg(args: &[String], i: usize) -> Result<&str, Error> {
    args.get(i)
        .map(String::as_str)
        .ok_or_else(|| "usage: export_bench floor N | serve N FILE | fetch-all FILE | stream FILE".into())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    match arg(&args, 1)? {
        "floor" => {
            let n: u64 = arg(&args, 2)?.parse()?;
            let rows: Vec<Row> = (0..n).map(support::row).collect();
            let start = Instant::now();
            let mut bytes = Vec::new();
            for row in &rows {
                serde_json::to_writer(&mut bytes, row)?;
                bytes.push(b'\n');
            }
            let serialized = start.elapsed();
            let parsed = bytes
                .split(|b| *b == b'\n')
                .filter(|line| !line.is_empty())
                .map(serde_json::from_slice::<Row>)
                .collect::<Result<Vec<_>, _>>()?;
            let total = start.elapsed();
            println!(
                "floor: {} rows, {} MB NDJSON, serialize {serialized:?}, parse {:?}, total {total:?}",
                parsed.len(),
                bytes.len() / 1_000_000,
                total - serialized
            );
        }
        "serve" => {
            let n: u64 = arg(&args, 2)?.parse()?;
            let (server, _) = support::start().await;
            let created = server
                .create_response(CreateResponse::new("rows", json!({ "n": n })).name("Rows"))
                .await?;
            std::fs::write(
                arg(&args, 3)?,
                serde_json::to_string_pretty(&created.tool_result())?,
            )?;
            eprintln!("serving {}", created.url);
            std::future::pending::<()>().await;
        }
        mode @ ("fetch-all" | "stream") => {
            let text = std::fs::read_to_string(arg(&args, 2)?)?;
            let parsed = DualResponseClient::new().parse_str(&text)?;
            let before = dual_testkit::memory::rss_kib();
            let start = Instant::now();
            let count = if mode == "fetch-all" {
                parsed.fetch_all(FetchAllOptions::new()).await?.len()
            } else {
                let mut batches = parsed.fetch_stream(FetchStreamOptions::new(500));
                let mut count = 0;
                while let Some(batch) = batches.next().await {
                    count += batch?.len();
                }
                count
            };
            println!(
                "{mode}: {count} rows in {:?}; RSS before {} MB, peak {} MB",
                start.elapsed(),
                before / 1024,
                dual_testkit::memory::peak_rss_kib() / 1024
            );
        }
        other => return Err(format!("unknown mode {other:?}").into()),
    }
    Ok(())
}
