#![doc = include_str!("../README.md")]
//!
//! ## Crates
//!
//! This facade re-exports the workspace's crates behind features; depend on single crates when you
//! need only one side:
//!
//! | module | crate | feature |
//! |---|---|---|
//! | [`core`] | `dual-core`: wire types, MCP formatting | always |
//! | [`store`] | `dual-store`: `ResourceStore`, `MemoryStore` | `server` |
//! | [`server`] | `dual-server`: `DualResponseServer` | `server` |
//! | [`http`] | `dual-http`: the REST handler | `http` |
//! | [`client`] | `dual-client`: parse tool results, fetch full results | `client` |
//!
//! The feature `arrow` (off by default; it implies `http`) turns on `dual-http`'s Arrow IPC stream
//! exports (`Accept: application/vnd.apache.arrow.stream`).

pub use dual_core as core;

#[cfg(feature = "server")]
pub use dual_server as server;
#[cfg(feature = "server")]
pub use dual_store as store;

#[cfg(feature = "http")]
pub use dual_http as http;

#[cfg(feature = "client")]
pub use dual_client as client;
