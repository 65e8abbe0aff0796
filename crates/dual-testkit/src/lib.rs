//! Test support for dual-response, in the spirit of `tower-test`: what the crates of the workspace
//! (and anyone writing a backend, an adapter or an application on top of them) test against.
//!
//! | module | what it holds |
//! |---|---|
//! | [`store`] | the conformance suite every [`ResourceStore`](dual_store::ResourceStore) backend runs, its outage checks and no-server connect checks |
//! | [`spool`] | the conformance suite every [`SpoolBackend`](dual_spool::SpoolBackend) runs, and its outage checks |
//! | [`http`] | the HTTP conformance suite every adapter of `dual_http::DualHttp` runs, without sockets |
//! | [`client`] | the client conformance suite, run against any server that speaks the REST contract |
//! | [`executor`] | [`Numbers`](executor::Numbers), the one example executor of tests and benches (never of an example a user copies): numbered rows, failure switches, a gated slow mode; [`read_to_end`](executor::read_to_end), a stream read to its end or its first error |
//! | [`burst`] | an agent's burst of tool calls through a server, beside the same SQL in the database's client (`psql`, `mysql`): the burst benches of dual-postgres and dual-mysql |
//! | `mcp_schema` | (feature `mcp-schema`) the published MCP schema of each protocol version, as vendored excerpts: validating what an MCP server sends |
//! | `oauth_issuer` | (feature `oauth-issuer`) a local OAuth 2.1 authorization server on 127.0.0.1 (metadata, key set, introspection) and the access tokens it signs |
//! | [`memory`] | the process's resident set now and at its peak (`/proc/self/status`), for benches |
//! | [`metrics`] | [`Captured`](metrics::Captured), a `metrics` recorder a test installs on its thread and reads counters and gauges back from |
//! | [`json`] | [`strings`](json::strings): every string of a rendered JSON document, keys included, for checks of what its readers see |
//! | [`logs`] | log output captured in a buffer, the check that no raw control character or forged line reached it, and that each failure's line escaped its hostile text |
//! | [`proxy`] | a TCP proxy a test cuts and restores, to simulate an outage of a shared service |
//! | [`raw_mcp`] | [`RawMcp`](raw_mcp::RawMcp), an MCP session over HTTP written by hand (no SDK smoothing anything over) in any protocol version, and [`send`](raw_mcp::send), one HTTP/1.1 exchange on a fresh connection |
//! | [`round_robin`] | a TCP load balancer sending each new connection to the next instance |
//! | `s3` | (feature `s3`) a bucket of one test on the S3-compatible server, removed with everything in it |
//! | [`serve`] | a hyper service on a free loopback port |
//! | [`services`] | the PostgreSQL, Redis and S3 servers some suites need, found through environment variables |
//! | [`wait`] | [`until`](wait::until): polling a condition, failing the test with what it waited for; [`done_within`](wait::done_within): a bounded failure that came in time |
//! | [`cleanup`] | removing what a test wrote to Redis (feature `redis`) or PostgreSQL (feature `postgres`) |
//! | [`Scratch`] | the place of one test on a shared server (a schema, a key prefix), removed when dropped; [`unique_name`] names it |
//! | [`BreakableStore`], [`BreakableSpool`] | a store and a spool backend a test switches off |
//! | [`InProcessShared`] | a process-local spool the server instances of one test share with a shared store |
//! | [`instances`] | [`two`](instances::two): two server instances sharing one store and one spool in this process |
//!
//! Library crates depend on this one only as a dev-dependency, so none of it ships with them.
//!
//! ```
//! use dual_store::MemoryStore;
//!
//! # fn main() {
//! # tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap().block_on(async {
//! // In a backend's tests/suite.rs, inside #[tokio::test(flavor = "multi_thread")]:
//! dual_testkit::store::run(|| async { MemoryStore::new() }).await;
//! # });
//! # }
//! ```

mod breakable_spool;
mod breakable_store;
pub mod burst;
mod case;
pub mod cleanup;
pub mod client;
pub mod database;
pub mod executor;
pub mod http;
mod in_process_spool;
pub mod instances;
pub mod json;
pub mod logs;
#[cfg(feature = "mcp-schema")]
pub mod mcp_schema;
pub mod memory;
pub mod metrics;
#[cfg(feature = "oauth-issuer")]
pub mod oauth_issuer;
pub mod proxy;
pub mod raw_mcp;
pub mod round_robin;
#[cfg(feature = "s3")]
pub mod s3;
mod scratch;
pub mod serve;
pub mod services;
pub mod spool;
pub mod store;
pub mod wait;

pub use breakable_spool::BreakableSpool;
pub use breakable_store::BreakableStore;
pub use in_process_spool::InProcessShared;
pub use scratch::{Scratch, unique_name};
