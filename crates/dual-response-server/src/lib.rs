//! The `dual-response` server people install: `dual-response serve --database URL` serves a PostgreSQL,
//! MySQL/MariaDB or SQLite database (or the embedded demo dataset) over MCP with Dual Response, on
//! [`dual_serve`]; `dual-response demo` runs the demo (an IPEDS-like dataset and a narrated reporting client);
//! `dual-response report` is the reporting client.
//!
//! This library holds the binary's parts so that its tests and benches can drive them too; it is not an
//! API for other crates (build on `dual-serve`, `dual-rmcp` and the executor crates instead).

pub mod config;
pub mod database;
pub mod demo;
pub mod ipeds;
pub mod logging;
pub mod mcp_client;
pub mod render;
pub mod report;
pub mod serve;
