//! Where dual-response resources live: the [`ResourceStore`] trait, and the in-memory
//! [`MemoryStore`]. The conformance suite every backend runs is `dual_testkit::store`.
//!
//! Depend on this crate to write a store of your own; servers get [`MemoryStore`] by default through
//! `dual-server`. Shared backends for several server instances are `dual-store-redis` and
//! `dual-store-postgres`.
//!
//! [`id_hash`] is the hasher of the maps keyed by the ids the server makes: the memory store's
//! shards, and dual-spool's memory spool.
//!
//! ```
//! use dual_core::{QuerySpec, ResourceId, ResourceRecord};
//! use dual_store::{Access, Clock, MemoryStore, ResourceStore, Viewer};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), dual_store::StoreError> {
//! let store = MemoryStore::new();
//! let now = Clock::system().now();
//! let record = ResourceRecord {
//!     id: ResourceId::new(),
//!     name: "Results".into(),
//!     query: QuerySpec::new("institutions", serde_json::json!({"state": "NJ"})),
//!     columns: vec![],
//!     total_count: 0,
//!     spooled_rows: None,
//!     sample: Vec::new().into(),
//!     created_at: now,
//!     expires_at: Some(now + time::Duration::minutes(15)),
//!     access_count: 0,
//!     last_accessed_at: None,
//!     owner: None,
//!     metadata: serde_json::Value::Null,
//!     consistency: dual_core::consistency::Consistency::Live,
//!     status: dual_core::status::ResourceStatus::Ready,
//!     lease_expires_at: None,
//!     failure: None,
//! };
//! store.save(&record).await?;
//! let Access::Counted(seen) = store.record_access(record.id, Viewer::Anonymous, now).await? else {
//!     unreachable!()
//! };
//! assert_eq!(seen.access_count, 1);
//! # Ok(()) }
//! ```

mod clock;
mod connect;
mod error;
pub mod id_hash;
mod list_page;
mod memory;
mod redact;
mod store;

pub use clock::Clock;
pub use connect::ConnectError;
pub use error::{BoxError, StoreError};
pub use list_page::{ListPage, Listing};
pub use memory::MemoryStore;
pub use redact::redact_secrets;
pub use store::{Access, Lookup, OwnerFilter, ResourceStore, Viewer};
