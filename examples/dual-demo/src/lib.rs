//! The Dual Response demo: an MCP server over an embedded IPEDS-like SQLite dataset, and a reporting
//! client that fetches every row out of band.
//!
//! The binary `dual-response` drives it (`dual-response serve`, `dual-response demo`, `dual-response
//! report`); this library holds its parts so that the end-to-end tests can drive them too.

pub mod config;
pub mod database;
pub mod dataset;
pub mod demo;
pub mod logging;
pub mod mcp_client;
pub mod mcp_server;
pub mod render;
pub mod report;
pub mod serve;
pub mod sqlite;
