//! The demo: an IPEDS-like dataset generated on first use ([`dataset`]), its SQLite kinds ([`sqlite`]), the
//! demo's MCP handler with a second tool and prompts ([`mcp_server`]), and the narrated run of
//! `dual-response demo` ([`run`]).

pub mod dataset;
pub mod mcp_server;
mod narration;
pub mod sqlite;

pub use narration::{DEMO_SQL, run};
