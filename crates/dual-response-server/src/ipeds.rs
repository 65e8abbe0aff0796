//! The demo's reporting database: an IPEDS-like dataset generated on first use ([`dataset`]), its
//! SQLite kinds — the model's SQL and the institution search ([`sqlite`]) — and the MCP handler that
//! serves them with a second tool and prompts ([`mcp_server`]). `dual-response demo` narrates a run
//! over it; `dual-response serve --database demo` serves it.

pub mod dataset;
pub mod mcp_server;
pub mod sqlite;
