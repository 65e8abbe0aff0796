//! `dual-response report --mcp URL --sql SQL [--csv FILE]`: the reporting client.
//!
//! What it prints (the summary, the tables, an error) has its control characters escaped: the
//! names and values come from the model's SQL and the database. The CSV file keeps the data exact,
//! unless the file is a terminal ([`CsvText`]).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use dual_client::{DualResponseClient, FetchAllOptions, FetchStreamOptions, ResourceStatus, WaitOptions};
use dual_core::escape::display_safe;
use futures_util::StreamExt;
use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use serde_json::json;

use crate::ipeds::mcp_server::QUERY_TOOL;
use crate::mcp_client;
use crate::render::{self, CsvText, bytes, pending_spinner, progress, table, thousands};

/// Calls the `query` tool with `sql`.
pub(crate) async fn call_query(
    mcp: &RunningService<RoleClient, ()>,
    sql: &str,
) -> Result<CallToolResult, ServiceError> {
    let arguments = json!({ "sql": sql }).as_object().cloned().unwrap_or_default();
    mcp.call_tool(CallToolRequestParams::new(QUERY_TOOL).with_arguments(arguments))
        .await
}

/// The first text block of a tool result (empty when there is none).
pub(crate) fn first_text(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

/// What to report.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// The MCP endpoint, e.g. `http://127.0.0.1:8080/mcp`.
    pub mcp: String,
    /// The SQL passed to the `query` tool.
    pub sql: String,
    /// Write every row to this CSV file instead of printing a table.
    pub csv: Option<PathBuf>,
    /// Rows of the table printed (when not writing CSV).
    pub rows: usize,
    /// Bearer token for a server started with `--auth-tokens`, sent to MCP and REST alike.
    pub token: Option<String>,
}

/// Calls the tool, shows the sample, fetches every row and prints a table or writes CSV.
///
/// # Errors
/// A connection failure, an `isError` tool result (with the tool's message), a fetch failure, or an
/// IO error writing the CSV.
pub async fn run(options: &ReportOptions) -> Result<(), Box<dyn std::error::Error>> {
    let mcp = match &options.token {
        Some(token) => mcp_client::connect_with_token(&options.mcp, token).await?,
        None => mcp_client::connect(&options.mcp).await?,
    };
    let result = call_query(&mcp, &options.sql).await;
    let _ = mcp.cancel().await;
    let result = result?;
    let text = first_text(&result);
    if result.is_error == Some(true) {
        return Err(format!("the tool reported an error: {text}").into());
    }
    let client = match &options.token {
        Some(token) => {
            let mut value = http::HeaderValue::try_from(format!("Bearer {token}"))
                .map_err(|_| "the token must be printable ASCII")?;
            value.set_sensitive(true);
            DualResponseClient::builder()
                .header(http::header::AUTHORIZATION, value)
                .build()?
        }
        None => DualResponseClient::new(),
    };
    let mut parsed = dual_rmcp::client::parse_call_tool_result(&result, &client)
        .ok_or_else(|| format!("the tool result is not a dual response: {text}"))?;
    let model_bytes = serde_json::to_vec(&result)?.len() as u64;
    // The summary comes from whatever server answered: escaped like every other terminal line.
    println!("{}", display_safe(&text));
    println!("Sample the model saw ({}):", bytes(model_bytes));
    println!("{}", table(parsed.columns(), parsed.sample()));

    if parsed.status() == ResourceStatus::Pending {
        // The query outlived the tool call: it goes on on the server; wait for it, showing the rows
        // so far, then fetch as usual.
        let spinner = pending_spinner();
        let on_progress = spinner.clone();
        spinner.set_message(format!(
            "{} rows so far",
            thousands(parsed.total_count().unwrap_or_default())
        ));
        let ready = parsed
            .wait_ready(WaitOptions::new().on_progress(move |rows, _| {
                on_progress.set_message(format!("{} rows so far", thousands(rows)));
            }))
            .await;
        spinner.finish_and_clear();
        let metadata = ready?;
        println!(
            "The query finished: {} rows, ready after {:.1} s.",
            thousands(metadata.total_count),
            spinner.elapsed().as_secs_f64()
        );
    }
    let total = parsed.total_count().unwrap_or_default();
    let bar = progress(total);
    let started = Instant::now();
    let fetched = if let Some(path) = &options.csv {
        let names: Vec<String> = parsed.columns().iter().map(|c| c.name.clone()).collect();
        let file = File::create(path)?;
        // A file keeps the data exact; a terminal named as the file (`--csv /dev/tty`) gets it escaped.
        let csv_text = CsvText::for_file(&file);
        let mut out = BufWriter::new(file);
        render::write_csv_header(&mut out, &names, csv_text)?;
        let mut batches = parsed.fetch_stream(FetchStreamOptions::new(dual_client::DEFAULT_BATCH_SIZE));
        let mut fetched = 0u64;
        while let Some(batch) = batches.next().await {
            let batch = batch?;
            render::write_csv_rows(&mut out, &names, &batch, csv_text)?;
            fetched += batch.len() as u64;
            bar.set_position(fetched);
        }
        out.flush()?;
        bar.finish_and_clear();
        println!("Wrote {} rows to {}", thousands(fetched), path.display());
        fetched
    } else {
        let on_progress = bar.clone();
        let rows = parsed
            .fetch_all(FetchAllOptions::new().on_progress(move |done, _| on_progress.set_position(done)))
            .await?;
        bar.finish_and_clear();
        let head = &rows[..rows.len().min(options.rows)];
        println!("{}", table(parsed.columns(), head));
        if rows.len() > head.len() {
            println!(
                "… {} more rows (write them all with --csv FILE)",
                thousands((rows.len() - head.len()) as u64)
            );
        }
        rows.len() as u64
    };
    println!(
        "{} rows fetched out of band in {:.2} s.",
        thousands(fetched),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
