//! A terminal "reporting UI": reads an MCP tool result from a JSON file, recognises the dual response in
//! it, fetches every row with a progress bar, and prints the head of the table and the totals.
//!
//! ```text
//! cargo run -p dual-client --example report -- TOOL_RESULT.json [--base-url URL] [--header 'Name: value'] [--rows N]
//! ```
//!
//! `--base-url` sends every request to `{URL}/{id}` (needed for a lone `resource_link`), `--header` adds a
//! header to every request (e.g. `Authorization: Bearer …`), `--rows` sets how many rows are shown (20).

use std::process::ExitCode;
use std::time::Instant;

use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use dual_client::{ColumnType, DualResponseClient, FetchAllOptions, Row};
use http::{HeaderName, HeaderValue};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

struct Args {
    path: String,
    base_url: Option<String>,
    headers: Vec<(HeaderName, HeaderValue)>,
    rows: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut base_url = None;
    let mut headers = Vec::new();
    let mut rows = 20;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--base-url" => base_url = Some(args.next().ok_or("--base-url needs a URL")?),
            "--rows" => {
                rows = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or("--rows needs a number")?;
            }
            "--header" => {
                let text = args.next().ok_or("--header needs 'Name: value'")?;
                let (name, value) = text.split_once(':').ok_or("--header needs 'Name: value'")?;
                let name = HeaderName::try_from(name.trim()).map_err(|e| format!("header name: {e}"))?;
                let value = HeaderValue::try_from(value.trim()).map_err(|e| format!("header value: {e}"))?;
                headers.push((name, value));
            }
            "-h" | "--help" => return Err(String::new()),
            _ if path.is_none() => path = Some(arg),
            _ => return Err(format!("unexpected argument `{arg}`")),
        }
    }
    Ok(Args {
        path: path.ok_or("missing the tool-result file")?,
        base_url,
        headers,
        rows,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("error: {message}");
            }
            eprintln!("usage: report TOOL_RESULT.json [--base-url URL] [--header 'Name: value'] [--rows N]");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.path).map_err(|e| format!("{}: {e}", args.path))?;
    let mut builder = DualResponseClient::builder();
    if let Some(base_url) = args.base_url {
        builder = builder.base_url(base_url);
    }
    for (name, value) in args.headers {
        builder = builder.header(name, value);
    }
    let client = builder.build().map_err(|e| e.to_string())?;
    let parsed = client.parse_str(&text).map_err(|e| e.to_string())?;

    println!(
        "{} — {} rows (sample of {}), {}",
        parsed.name().unwrap_or("Result"),
        parsed
            .total_count()
            .map_or_else(|| "unknown number of".to_owned(), |n| n.to_string()),
        parsed.sample().len(),
        parsed.resource_url()
    );
    if parsed.is_expired() {
        println!("note: the result says it expired; the server decides");
    }

    let bar = ProgressBar::new(parsed.total_count().unwrap_or(0));
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} rows, eta {eta}",
        )
        .map_err(|e| e.to_string())?,
    );
    let progress = bar.clone();
    let started = Instant::now();
    let rows = parsed
        .fetch_all(FetchAllOptions::new().on_progress(move |fetched, total| {
            progress.set_length(total);
            progress.set_position(fetched);
        }))
        .await;
    bar.finish_and_clear();
    let rows = rows.map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();

    let columns: Vec<(String, Option<ColumnType>)> = if parsed.columns().is_empty() {
        rows.first()
            .map(|row| row.keys().map(|k| (k.clone(), None)).collect())
            .unwrap_or_default()
    } else {
        parsed
            .columns()
            .iter()
            .map(|c| (c.name.clone(), Some(c.column_type)))
            .collect()
    };
    println!("{}", head_table(&columns, &rows, args.rows));
    if rows.len() > args.rows {
        println!("… and {} more rows", rows.len() - args.rows);
    }
    println!("{}", totals_table(&columns, &rows, parsed.total_count()));
    println!(
        "fetched {} rows in {:.2?} ({:.0} rows/s)",
        rows.len(),
        elapsed,
        rows.len() as f64 / elapsed.as_secs_f64().max(1e-9)
    );
    Ok(())
}

fn is_numeric(column_type: Option<ColumnType>) -> bool {
    matches!(column_type, Some(ColumnType::Integer | ColumnType::Number))
}

fn head_table(columns: &[(String, Option<ColumnType>)], rows: &[Row], shown: usize) -> Table {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(columns.iter().map(|(name, _)| Cell::new(name)));
    for row in rows.iter().take(shown) {
        table.add_row(columns.iter().map(|(name, column_type)| {
            let cell = Cell::new(render(row.get(name)));
            if is_numeric(*column_type) {
                cell.set_alignment(CellAlignment::Right)
            } else {
                cell
            }
        }));
    }
    table
}

fn totals_table(columns: &[(String, Option<ColumnType>)], rows: &[Row], total: Option<u64>) -> Table {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(["total", "value"]);
    table.add_row([Cell::new("rows fetched"), Cell::new(rows.len())]);
    if let Some(total) = total {
        table.add_row([Cell::new("rows at creation"), Cell::new(total)]);
    }
    for (name, column_type) in columns {
        if is_numeric(*column_type) {
            let sum: f64 = rows
                .iter()
                .filter_map(|row| row.get(name).and_then(Value::as_f64))
                .sum();
            table.add_row([Cell::new(format!("sum of {name}")), Cell::new(format_number(sum))]);
        } else {
            let present = rows
                .iter()
                .filter(|row| row.get(name).is_some_and(|v| !v.is_null()))
                .count();
            table.add_row([Cell::new(format!("non-empty {name}")), Cell::new(present)]);
        }
    }
    table
}

fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

fn render(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.replace('\n', " "),
        Some(other) => other.to_string(),
    }
}
