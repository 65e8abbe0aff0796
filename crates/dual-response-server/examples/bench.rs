//! Throughput of the demo on the 269,000-row `degrees_awarded` table, over real sockets on 127.0.0.1.
//!
//! `cargo run --release -p dual-response-server --example bench`
//!
//! Measures requests/s of 100-row pages at offset 0 and 200,000, the time to fetch every row with
//! `fetch_all` (the streamed `/data` export), with 500-row pages (one at a time and four at a time),
//! and through `fetch_stream`, against the in-process floor: SQLite scan + JSON serialisation.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dual_client::{
    DualResponseClient, FetchAllOptions, FetchOptions, FetchStreamOptions, ParsedDualResponse,
};
use dual_response_server::ipeds::dataset::{self, DatasetSize};
use dual_response_server::mcp_client;
use dual_response_server::serve::{self, ServeOptions};
use futures_util::StreamExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;

const SQL: &str = "SELECT * FROM degrees_awarded";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = dataset::default_path();
    dataset::ensure(&path, DatasetSize::DEFAULT)?;
    let options = ServeOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
    let running = serve::start_on(&options, &path).await?;

    let mcp = mcp_client::connect(&running.mcp_url()).await?;
    let started = Instant::now();
    let arguments = json!({ "sql": SQL }).as_object().cloned().unwrap_or_default();
    let result = mcp
        .call_tool(CallToolRequestParams::new("query").with_arguments(arguments))
        .await?;
    let tool_call = started.elapsed();
    let _ = mcp.cancel().await;
    let client = DualResponseClient::new();
    let parsed = dual_rmcp::client::parse_call_tool_result(&result, &client).ok_or("not a dual response")?;
    let total = parsed.total_count().unwrap_or_default();
    println!("dataset {} — `{SQL}`: {total} rows", path.display());
    println!(
        "tools/call (count + 15-row sample + store), over MCP: {:.1} ms",
        ms(tool_call)
    );

    for (offset, requests) in [(0u64, 2_000u32), (200_000, 200)] {
        let rps = pages_per_second(&parsed, offset, requests).await?;
        println!(
            "POST page, limit 100, offset {offset:>7}: {rps:>8.0} requests/s (sequential, {requests} requests)"
        );
    }

    let started = Instant::now();
    let rows = parsed.fetch_all(FetchAllOptions::new()).await?;
    report("fetch_all (streamed /data export)", rows.len(), started.elapsed());

    for concurrency in [1usize, 4] {
        let started = Instant::now();
        let fetched = all_pages(&parsed, total, 500, concurrency).await?;
        report(
            &format!("500-row pages, {concurrency} at a time"),
            fetched,
            started.elapsed(),
        );
    }

    let started = Instant::now();
    let mut stream = parsed.fetch_stream(FetchStreamOptions::new(1_000));
    let mut streamed = 0usize;
    while let Some(batch) = stream.next().await {
        streamed += batch?.len();
    }
    report(
        "fetch_stream (NDJSON /data, bounded memory)",
        streamed,
        started.elapsed(),
    );

    let started = Instant::now();
    let (scanned, bytes) = floor(&path)?;
    report(
        &format!(
            "in-process floor: SQLite scan + serde_json ({:.1} MB)",
            bytes as f64 / 1e6
        ),
        scanned,
        started.elapsed(),
    );
    running.shutdown().await;
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn report(what: &str, rows: usize, elapsed: Duration) {
    println!(
        "{what:<55} {rows:>7} rows in {:>7.1} ms ({:>9.0} rows/s)",
        ms(elapsed),
        rows as f64 / elapsed.as_secs_f64()
    );
}

async fn pages_per_second(
    parsed: &ParsedDualResponse,
    offset: u64,
    requests: u32,
) -> Result<f64, dual_client::ClientError> {
    let started = Instant::now();
    for _ in 0..requests {
        let page = parsed
            .fetch(FetchOptions::new().offset(offset).limit(100))
            .await?;
        assert_eq!(page.returned_count, 100);
    }
    Ok(f64::from(requests) / started.elapsed().as_secs_f64())
}

async fn all_pages(
    parsed: &ParsedDualResponse,
    total: u64,
    limit: u64,
    concurrency: usize,
) -> Result<usize, dual_client::ClientError> {
    let offsets: Vec<u64> = (0..total).step_by(limit as usize).collect();
    let mut pages = futures_util::stream::iter(offsets)
        .map(|offset| parsed.fetch(FetchOptions::new().offset(offset).limit(limit)))
        .buffered(concurrency);
    let mut rows = 0;
    while let Some(page) = pages.next().await {
        rows += page?.data.len();
    }
    Ok(rows)
}

/// Every row read and serialised in-process, as the executor does, without HTTP.
fn floor(path: &std::path::Path) -> Result<(usize, usize), rusqlite::Error> {
    let conn = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = conn.prepare(SQL)?;
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let mut rows = stmt.query([])?;
    let (mut count, mut bytes) = (0, 0);
    let mut buffer = Vec::with_capacity(256);
    while let Some(row) = rows.next()? {
        let mut out = dual_core::Row::new();
        for (i, name) in names.iter().enumerate() {
            let value = match row.get_ref(i)? {
                rusqlite::types::ValueRef::Integer(n) => json!(n),
                rusqlite::types::ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                rusqlite::types::ValueRef::Real(f) => json!(f),
                _ => serde_json::Value::Null,
            };
            out.insert(name.clone(), value);
        }
        buffer.clear();
        serde_json::to_writer(&mut buffer, &out)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
        bytes += buffer.len() + 1;
        count += 1;
    }
    Ok((count, bytes))
}
