//! A MySQL or MariaDB database as a complete MCP server, in ten lines: the tools `query` and
//! `describe_schema` at `/mcp` (streamable HTTP) and every result over the REST API at `/resources`.
//!
//! ```text
//! cargo run -p dual-mysql --example mysql_mcp -- mysql://reporter@127.0.0.1/sales
//! ```
//!
//! Connect as a user that may only read (the crate docs show how to create one): the server
//! refuses to start as one that may do more (a superuser, `root`), naming what it found. Set
//! `DUAL_ALLOW_PRIVILEGED_ROLE=1` to start anyway; the model's SQL is still parsed and refused
//! the functions that reach outside the data.
//!
//! Set `DUAL_ADDR` to listen elsewhere (default `127.0.0.1:8080`). `axum::serve` sets no timeouts
//! and no connection cap: behind the open internet, serve the router as dual-http's
//! `examples/axum.rs` does (hyper with a connection cap and header timeouts), and authenticate.

use std::sync::Arc;

use dual_http::DualHttp;
use dual_mysql::{MyDb, MyOptions};
use dual_rmcp::DatabaseMcp;
use dual_server::DualResponseServer;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1).ok_or("usage: mysql_mcp MYSQL_URL")?;
    let addr = std::env::var("DUAL_ADDR").unwrap_or_else(|_| "127.0.0.1:8080".to_owned());
    let allow = std::env::var("DUAL_ALLOW_PRIVILEGED_ROLE").is_ok_and(|v| v == "1");
    if allow {
        eprintln!("warning: DUAL_ALLOW_PRIVILEGED_ROLE=1: starting even if the user may do more than read");
    }
    let db = MyDb::connect(&url, MyOptions::default().allow_privileged_role(allow)).await?;
    let server = DualResponseServer::builder()
        .base_url(format!("http://{addr}/resources"))
        .executor("sql", db.sql_executor())
        .build()?;
    let mcp = DatabaseMcp::new(
        server.clone(),
        db.schema().clone(),
        "sql",
        "A MySQL reporting database.",
    );
    let mcp = StreamableHttpService::new(
        move || Ok(mcp.clone()),
        Arc::new(LocalSessionManager::default()),
        Default::default(),
    );
    let app = axum::Router::new()
        .nest_service("/mcp", mcp)
        .nest_service("/resources", DualHttp::new(server));
    println!("MCP at http://{addr}/mcp, results at http://{addr}/resources");
    axum::serve(tokio::net::TcpListener::bind(&addr).await?, app).await?;
    Ok(())
}
