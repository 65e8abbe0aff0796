//! A PostgreSQL database as a complete MCP server: the tools `query` and `describe_schema` at `/mcp`
//! (streamable HTTP) and every result over the REST API at `/resources`, served by dual-serve's
//! bounded hyper server (no web framework).
//!
//! ```text
//! cargo run -p dual-postgres --example postgres_mcp -- postgres://reporter@127.0.0.1/sales
//! ```
//!
//! Connect as a role that may only read (the crate docs show how to create one): the server
//! refuses to start as one that may do more (a superuser, `pg_read_server_files`, writes in its
//! `search_path`), naming what it found. Set `DUAL_ALLOW_PRIVILEGED_ROLE=1` to start anyway; the
//! model's SQL is still parsed and refused the functions that reach outside the data.
//!
//! Set `DUAL_ADDR` to listen elsewhere (an IP address and port, default `127.0.0.1:8080`). The limits
//! are `dual_serve::ServeOptions`' defaults (connection cap, header, idle and body timeouts, MCP
//! session cap); everyone is served, so before the open internet set its `authentication` too. SIGTERM
//! or Ctrl-C drains the requests in flight and exits; a second one cuts them. To mount the endpoints
//! in an axum app of your own, see dual-http's `examples/axum.rs`.

use dual_postgres::{PgDb, PgOptions};
use dual_serve::shutdown::Signals;
use dual_serve::{ServeOptions, serve_database};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: postgres_mcp POSTGRES_URL")?;
    let addr = std::env::var("DUAL_ADDR").unwrap_or_else(|_| "127.0.0.1:8080".to_owned());
    let addr = addr.parse().map_err(|e| format!("DUAL_ADDR {addr:?}: {e}"))?;
    let allow = std::env::var("DUAL_ALLOW_PRIVILEGED_ROLE").is_ok_and(|v| v == "1");
    if allow {
        eprintln!("warning: DUAL_ALLOW_PRIVILEGED_ROLE=1: starting even if the role may do more than read");
    }
    let db = PgDb::connect(&url, PgOptions::default().allow_privileged_role(allow)).await?;
    // From here on SIGTERM and SIGINT shut the server down gracefully instead of killing it.
    let mut signals = Signals::install()?;
    let description = "A PostgreSQL reporting database.";
    let options = ServeOptions::new(addr);
    let running = serve_database(options, db.sql_executor(), db.schema().clone(), description).await?;
    let (mcp, rest) = (running.mcp_url(), running.rest_url());
    println!("PostgreSQL: MCP at {mcp}, results at {rest}");
    running.shutdown_on(&mut signals).await;
    Ok(())
}
