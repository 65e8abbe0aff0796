//! A SQLite database as a complete MCP server: the tools `query` and `describe_schema` at `/mcp`
//! (streamable HTTP) and every result over the REST API at `/resources`, served by dual-serve's
//! bounded hyper server (no web framework).
//!
//! ```text
//! cargo run -p dual-sqlite --example sqlite_mcp -- reports.sqlite
//! ```
//!
//! The file is opened read-only (`PRAGMA query_only` on every connection), and the model's SQL is
//! parsed and must be one query that only reads.
//!
//! Set `DUAL_ADDR` to listen elsewhere (an IP address and port, default `127.0.0.1:8080`). The limits
//! are `dual_serve::ServeOptions`' defaults (connection cap, header, idle and body timeouts, MCP
//! session cap); everyone is served, so before the open internet set its `authentication` too. SIGTERM
//! or Ctrl-C drains the requests in flight and exits; a second one cuts them. To mount the endpoints
//! in an axum app of your own, see dual-http's `examples/axum.rs`.

use std::path::Path;

use dual_serve::shutdown::Signals;
use dual_serve::{ServeOptions, serve_database};
use dual_sqlite::{SqliteDb, SqliteOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: sqlite_mcp DATABASE_FILE")?;
    let addr = std::env::var("DUAL_ADDR").unwrap_or_else(|_| "127.0.0.1:8080".to_owned());
    let addr = addr.parse().map_err(|e| format!("DUAL_ADDR {addr:?}: {e}"))?;
    let db = SqliteDb::open_with(Path::new(&path), SqliteOptions::default())?;
    // From here on SIGTERM and SIGINT shut the server down gracefully instead of killing it.
    let mut signals = Signals::install()?;
    let description = "A SQLite reporting database.";
    let options = ServeOptions::new(addr);
    let running = serve_database(options, db.sql_executor(), db.schema().clone(), description).await?;
    let (mcp, rest) = (running.mcp_url(), running.rest_url());
    println!("{path}: MCP at {mcp}, results at {rest}");
    running.shutdown_on(&mut signals).await;
    Ok(())
}
