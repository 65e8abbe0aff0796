//! The `ResourceStore` trait.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use dual_core::task::{TaskId, TaskRecord};
use dual_core::{ResourceId, ResourceRecord};
use time::OffsetDateTime;

use crate::{ListPage, StoreError};

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

/// Who reads a record through [`ResourceStore::record_access`]: the store counts the access only
/// when this viewer may see the record, so no caller can bump another tenant's `access_count` or
/// `last_accessed_at`.
///
/// The rule is the server's authorization rule: a record created without an owner is visible to
/// every viewer but a grant of another id; a record with an owner only to that owner and to a grant
/// of its id.
///
/// ```
/// use dual_core::ResourceId;
/// use dual_store::{OwnerFilter, Viewer};
/// let id = ResourceId::new();
/// assert_eq!(Viewer::Owner("tenant-a").filter(id), OwnerFilter::UnownedOr("tenant-a"));
/// assert_eq!(Viewer::Anonymous.filter(id), OwnerFilter::Unowned);
/// assert_eq!(Viewer::Grant(id).filter(id), OwnerFilter::Any);
/// assert_eq!(Viewer::Grant(ResourceId::new()).filter(id), OwnerFilter::Nothing);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Viewer<'a> {
    /// A caller nobody authenticated: sees records created without an owner.
    Anonymous,
    /// A caller authenticated as this owner: sees its own records and those without an owner.
    Owner(&'a str),
    /// A capability grant (a verified link) to exactly this resource, whoever owns it: sees that
    /// record and no other.
    Grant(ResourceId),
}

impl<'a> Viewer<'a> {
    /// Which owners' records this viewer sees when it reads `id`: what a backend checks in the
    /// same atomic step as the count.
    #[must_use]
    pub fn filter(self, id: ResourceId) -> OwnerFilter<'a> {
        match self {
            Self::Anonymous => OwnerFilter::Unowned,
            Self::Owner(owner) => OwnerFilter::UnownedOr(owner),
            Self::Grant(granted) if granted == id => OwnerFilter::Any,
            Self::Grant(_) => OwnerFilter::Nothing,
        }
    }

    /// Whether this viewer may see `record`.
    #[must_use]
    pub fn sees(self, record: &ResourceRecord) -> bool {
        self.filter(record.id).admits(record.owner.as_deref())
    }
}

/// The records a [`Viewer`] sees among those with one id, by their owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OwnerFilter<'a> {
    /// Whoever owns it (a grant of this id).
    Any,
    /// Only a record without an owner (an anonymous viewer).
    Unowned,
    /// A record without an owner or with this one (an authenticated viewer).
    UnownedOr(&'a str),
    /// None at all (a grant of another id).
    Nothing,
}

impl OwnerFilter<'_> {
    /// Whether a record owned by `owner` (`None`: created without one) passes.
    #[must_use]
    pub fn admits(self, owner: Option<&str>) -> bool {
        match (self, owner) {
            (Self::Any, _) | (Self::Unowned | Self::UnownedOr(_), None) => true,
            (Self::UnownedOr(viewer), Some(owner)) => viewer == owner,
            (Self::Unowned | Self::Nothing, _) => false,
        }
    }
}

/// The outcome of [`ResourceStore::record_access`].
#[derive(Debug, Clone, PartialEq)]
pub enum Access {
    /// The record is live and the viewer may see it: the access was counted, and this is the record
    /// with the count. Shared: a store that keeps its records in memory answers without copying one
    /// per read (a page's read needs the record only to look at it).
    Counted(Arc<ResourceRecord>),
    /// The record is live but the viewer may not see it: nothing was changed. A server answers this
    /// exactly like [`Access::Missing`], so a resource's existence never leaks.
    NotVisible,
    /// The record exists but is past its `expires_at`: nothing was changed (whoever asks).
    Expired,
    /// No record has this id.
    Missing,
}

impl Access {
    /// The record, when the access was counted (copied only when the store still shares it).
    #[must_use]
    pub fn counted(self) -> Option<ResourceRecord> {
        match self {
            Self::Counted(record) => Some(Arc::unwrap_or_clone(record)),
            Self::NotVisible | Self::Expired | Self::Missing => None,
        }
    }
}

/// Where resource records live. Object-safe: a server holds an `Arc<dyn ResourceStore>`.
///
/// Every method takes the caller's `now` where time matters, so a store never reads a clock of its
/// own and tests control time. A record with `expires_at <= now` is expired: `get` and `pin` answer
/// [`Lookup::Expired`] for it, and `record_access` [`Access::Expired`], until it is purged (a store
/// whose backend drops expired entries by itself may answer `Missing` once it has).
///
/// Every implementation must pass the conformance suite `dual_testkit::store`.
#[async_trait]
pub trait ResourceStore: Send + Sync + fmt::Debug + 'static {
    /// Stores `record`, replacing any record with the same id.
    async fn save(&self, record: &ResourceRecord) -> Result<(), StoreError>;

    /// Looks `id` up at `now` without counting an access.
    async fn get(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError>;

    /// The read of a resource in one round trip: when the record of `id` is live at `now` and
    /// `viewer` may see it ([`Viewer::sees`]), atomically adds one to `access_count`, sets
    /// `last_accessed_at = now` and answers [`Access::Counted`] with the updated record.
    ///
    /// The check and the count are one atomic step (one script, one statement, one lock): a record
    /// the viewer may not see is answered [`Access::NotVisible`] and left untouched. A missing record
    /// is [`Access::Missing`] and an expired one [`Access::Expired`], whoever the viewer. Concurrent
    /// calls never lose a count.
    async fn record_access(
        &self,
        id: ResourceId,
        viewer: Viewer<'_>,
        now: OffsetDateTime,
    ) -> Result<Access, StoreError>;

    /// Removes the expiry of a live record, returning it pinned. Pinning is idempotent; an expired
    /// record cannot be pinned.
    async fn pin(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError>;

    /// Overwrites the query's part of the stored record `record.id` with `record`'s: `status`,
    /// `total_count`, `spooled_rows`, `columns`, `sample`, `consistency`, `lease_expires_at` and
    /// `failure`. The rest
    /// (access count, last access, expiry or pin, name, owner, metadata, query, creation time) stays
    /// as stored, so a concurrent `record_access` or `pin` is never lost. Returns whether a record
    /// with that id was there (expired or not); a missing record is not created.
    ///
    /// The server calls it while a query runs in the background, pending or spooling (progress and
    /// lease), and when it ends (docs/DESIGN.md §8).
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

    /// Up to `page.limit` records live at `now` whose owner is exactly `page.owner` (`None`: the
    /// records created without one), newest first: by id, descending (a [`ResourceId`] is a ULID, so
    /// that is creation order), and only ids below `page.before` when it is given (the last id of the
    /// previous page). Expired records not yet purged are skipped; a store may forget the listing entry of a
    /// record expired at `now` as it meets it (such a record is never listed again). `resources/list`
    /// pages through it.
    async fn list(&self, page: ListPage<'_>, now: OffsetDateTime) -> Result<Vec<ResourceRecord>, StoreError>;

    /// Stores `task`, replacing any task with the same id. A task is forgotten at its `expires_at`.
    async fn save_task(&self, task: &TaskRecord) -> Result<(), StoreError>;

    /// The task `id` at `now`; `None` when there is none or it has expired (`expires_at <= now`).
    async fn get_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError>;

    /// Overwrites the running instance's part of the stored task `task.id` with `task`'s: `state`,
    /// `resource`, `rows_so_far`, `status_message`, `updated_at`, `poll_interval_ms`,
    /// `lease_expires_at` and `result`. The owner, the creation time, the expiry and
    /// `cancel_requested` stay as stored, so a concurrent [`cancel_task`](Self::cancel_task) is
    /// never lost. Answers the stored `cancel_requested` (the running instance learns of a
    /// cancellation from its own renewal), or `None` when no live task has that id.
    async fn update_task(&self, task: &TaskRecord, now: OffsetDateTime) -> Result<Option<bool>, StoreError>;

    /// Marks the live task `id` for cancellation (`cancel_requested = true`, in one atomic step)
    /// and answers it as it is now stored; `None` when no live task has that id.
    async fn cancel_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError>;

    /// Keeps the state of an MCP session (`state`, opaque text: the client's `initialize`
    /// parameters as JSON) under `id` until `expires`, replacing any state with that id, so that
    /// any instance sharing the store can restore the session.
    async fn save_session(&self, id: &str, state: &str, expires: OffsetDateTime) -> Result<(), StoreError>;

    /// The state saved under `id`; `None` when there is none or it expired (`expires_at <= now`).
    async fn load_session(&self, id: &str, now: OffsetDateTime) -> Result<Option<String>, StoreError>;

    /// Forgets the session `id`, answering whether it was there.
    async fn delete_session(&self, id: &str) -> Result<bool, StoreError>;

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
