//! `dual-response demo` (or no subcommand): the whole pattern in one process, narrated.

use std::net::SocketAddr;
use std::time::Instant;

use dual_client::{DualResponseClient, FetchAllOptions};

use crate::ipeds::dataset::{self, DatasetSize};
use crate::ipeds::mcp_server::QUERY_TOOL;
use crate::mcp_client;
use crate::render::{bytes, progress, table, thousands};
use crate::report::{call_query, first_text};
use crate::serve::{self, ServeOptions};

/// The query the demo's "model" sends: every degree row with its institution.
pub const DEMO_SQL: &str = "SELECT d.id, i.name AS institution, i.state, i.control, d.year, d.field, \
d.award_level, d.gender, d.count FROM degrees_awarded d JOIN institutions i ON i.id = d.institution_id \
ORDER BY d.id";

/// Rows of the full result printed at the end.
const HEAD_ROWS: usize = 10;

/// Runs the demo on the dataset at `db` (the embedded one when `None`), printing to stdout.
///
/// # Errors
/// Any failure, as a message.
pub async fn run(db: Option<std::path::PathBuf>) -> Result<(), Box<dyn std::error::Error>> {
    println!("Dual Response demo: the model gets a sample, the application gets every row.\n");

    let options = ServeOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
    let mut database = serve::DatabaseOptions::default();
    if let Some(path) = db {
        database.db = Some(path);
    } else {
        let path = dataset::default_path();
        if !path.exists() {
            println!("Generating the IPEDS-like dataset (first run only) …");
            let started = Instant::now();
            dataset::ensure(&path, DatasetSize::DEFAULT)?;
            println!("  done in {:.1} s\n", started.elapsed().as_secs_f64());
        }
        database.db = Some(path);
    }
    let served = serve::start(&options, &database).await?;
    let running = served.running;
    println!("Dataset  {}", served.database);
    println!(
        "Server   MCP {}   REST http://{}{}\n",
        running.mcp_url(),
        running.addr,
        serve::REST_PREFIX
    );

    let outcome = narrate(&running).await;
    running.shutdown().await;
    outcome
}

async fn narrate(running: &serve::Running) -> Result<(), Box<dyn std::error::Error>> {
    // 1. The model calls the tool, through a real MCP client over streamable HTTP.
    let mcp = mcp_client::connect(&running.mcp_url()).await?;
    println!("1. The model calls the MCP tool `{QUERY_TOOL}`:");
    println!("   {DEMO_SQL}\n");
    let started = Instant::now();
    let result = call_query(&mcp, DEMO_SQL).await?;
    let tool_millis = started.elapsed().as_millis();
    let _ = mcp.cancel().await;
    let model_bytes = serde_json::to_vec(&result)?.len() as u64;

    let client = DualResponseClient::new();
    let parsed = dual_rmcp::client::parse_call_tool_result(&result, &client)
        .ok_or_else(|| format!("the tool did not return a dual response: {}", first_text(&result)))?;

    // 2. What the model sees.
    println!(
        "2. What the model sees ({} in {tool_millis} ms):",
        bytes(model_bytes)
    );
    if let Some(summary) = result.content.first().and_then(|c| c.as_text()) {
        println!("   {}", summary.text);
    }
    println!("{}", table(parsed.columns(), parsed.sample()));
    let columns: Vec<String> = parsed
        .columns()
        .iter()
        .map(|c| format!("{} {}", c.name, c.column_type))
        .collect();
    println!("   columns: {}\n", columns.join(", "));

    // 3. The application fetches everything out of band.
    let total = parsed.total_count().unwrap_or_default();
    println!(
        "3. The application fetches all {} rows from {}",
        thousands(total),
        parsed.resource_url()
    );
    let bar = progress(total);
    let on_progress = bar.clone();
    let started = Instant::now();
    let rows = parsed
        .fetch_all(FetchAllOptions::new().on_progress(move |done, _| on_progress.set_position(done)))
        .await?;
    let seconds = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let app_bytes = serde_json::to_vec(&rows)?.len() as u64;

    let head = &rows[..rows.len().min(HEAD_ROWS)];
    println!("{}", table(parsed.columns(), head));
    if rows.len() > head.len() {
        println!("   … {} more rows", thousands((rows.len() - head.len()) as u64));
    }
    println!(
        "\nTotals: {} rows, {} of JSON, in {seconds:.2} s ({} rows/s).",
        thousands(rows.len() as u64),
        bytes(app_bytes),
        thousands((rows.len() as f64 / seconds.max(1e-9)) as u64),
    );
    println!(
        "The model got {} ({:.3}% of it): a sample to check the query, the count, and a link.",
        bytes(model_bytes),
        100.0 * model_bytes as f64 / app_bytes.max(1) as f64
    );
    Ok(())
}
