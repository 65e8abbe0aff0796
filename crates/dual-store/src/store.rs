//! The `ResourceStore` trait.

use std::fmt;

use async_trait::async_trait;
use dual_core::{ResourceId, ResourceRecord};
use time::OffsetDateTime;

use crate::StoreError;

/// The outcome of looking a resource up at a given instant.
#[derive(Debug, Clone, PartialEq)]
#[expect(
    clippy::large_enum_variant,
    reason = "returned once per store call and matched immediately; boxing would add an allocation per read"
)]
pub enum Lookup {
    /// The record exists and has not expired.
    Found(ResourceRecord),
    /// The record exists but is past its `expires_at` (it is never served, even before a purge).
    Expired,
    /// No record has this id (never created, deleted, or already purged).
    Missing,
}

impl Lookup {
    /// The record, when found.
    #[must_use]
    pub fn found(self) -> Option<ResourceRecord> {
        match self {
            Self::Found(record) => Some(record),
            Self::Expired | Self::Missing => None,
        }
    }
}

/// Where resource records live. Object-safe: a server holds an `Arc<dyn ResourceStore>`.
///
/// Every method takes the caller's `now` where time matters, so a store never reads a clock of its
/// own and tests control time. A record with `expires_at <= now` is expired: `get`, `record_access`
/// and `pin` answer [`Lookup::Expired`] for it until it is purged (a store whose backend drops
/// expired entries by itself may answer [`Lookup::Missing`] once it has).
///
/// Every implementation must pass the conformance suite `dual_testkit::store`.
#[async_trait]
pub trait ResourceStore: Send + Sync + fmt::Debug + 'static {
    /// Stores `record`, replacing any record with the same id.
    async fn save(&self, record: &ResourceRecord) -> Result<(), StoreError>;

    /// Looks `id` up at `now` without counting an access.
    async fn get(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError>;

    /// Atomically adds one to `access_count` and sets `last_accessed_at = now`, returning the updated
    /// record. Expired and missing records are not touched. Concurrent calls never lose a count.
    async fn record_access(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError>;

    /// Removes the expiry of a live record, returning it pinned. Pinning is idempotent; an expired
    /// record cannot be pinned.
    async fn pin(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError>;

    /// Overwrites the query's part of the stored record `record.id` with `record`'s: `status`,
    /// `total_count`, `columns`, `sample`, `consistency`, `lease_expires_at` and `failure`. The rest
    /// (access count, last access, expiry or pin, name, owner, metadata, query, creation time) stays
    /// as stored, so a concurrent `record_access` or `pin` is never lost. Returns whether a record
    /// with that id was there (expired or not); a missing record is not created.
    ///
    /// The server calls it while a pending query runs (progress and lease) and when it ends (docs/DESIGN.md §8).
    async fn update_query(&self, record: &ResourceRecord) -> Result<bool, StoreError>;

    /// Deletes `id`, returning whether a record was there (expired or not).
    async fn delete(&self, id: ResourceId) -> Result<bool, StoreError>;

    /// Up to `limit` ids of records expired at `now`, earliest expiry first.
    async fn find_expired(&self, now: OffsetDateTime, limit: usize) -> Result<Vec<ResourceId>, StoreError>;

    /// Deletes every record expired at `now`, returning how many were deleted. Pinned and live
    /// records are untouched; the cost is proportional to what expires, not to what is stored.
    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, StoreError>;

    /// How many live records the store holds at `now`: records not expired at `now` (pinned records
    /// included); expired records not yet purged are not counted. Used to enforce a cap on live
    /// resources; a shared store may answer with the count as of a moment ago (concurrent saves), but
    /// never counts an expired or deleted record.
    async fn live_count(&self, now: OffsetDateTime) -> Result<u64, StoreError>;

    /// Whether other processes read and write the same records (Redis, PostgreSQL): servers sharing
    /// the store must then share their snapshot spool too, and the server's builder refuses a
    /// process-local one. The default answer is `true`, the safe one for a store that does not say;
    /// a store only this process sees ([`MemoryStore`](crate::MemoryStore)) answers `false`.
    fn is_shared(&self) -> bool {
        true
    }

    /// Releases connections and background work. Later calls may fail with [`StoreError::Closed`].
    async fn close(&self) -> Result<(), StoreError>;
}
