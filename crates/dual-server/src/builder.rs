//! The server's builder: options, their validation, and starting the server.

mod validate;

use std::sync::Arc;
use std::time::Duration;

use dual_core::{
    page::{DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, PageLimits},
    uri::DEFAULT_URI_SCHEME,
};
use dual_spool::{MemorySpool, Spool};
use dual_store::{Clock, MemoryStore, ResourceStore};

use crate::config::{
    DEFAULT_CLEANUP_INTERVAL, DEFAULT_EXPIRATION, DEFAULT_MAX_ERROR_TEXT_BYTES, DEFAULT_MAX_PAGE_BYTES,
    DEFAULT_MAX_READ_BYTES, DEFAULT_MAX_RESOURCES, DEFAULT_MAX_SAMPLE_BYTES, DEFAULT_PENDING_AFTER,
    DEFAULT_PROGRESS_INTERVAL, DEFAULT_QUERY_LEASE, DEFAULT_QUERY_TIME_LIMIT, DEFAULT_SAMPLE_SIZE,
    DEFAULT_SHUTDOWN_GRACE, DEFAULT_SNAPSHOT_MAX_BYTES, DEFAULT_SORT_CACHE_BYTES, DEFAULT_SPOOL_WAIT,
    MAX_SAMPLE_SIZE, MAX_SPOOL_WAIT, ServerConfig, SortLimits,
};
use crate::links::{DEFAULT_LINK_LIFETIME, LinkKey, Links, MAX_LINK_LIFETIME};
use crate::registry::Registry;
use crate::{DualResponseServer, OwnerQuotas, QueryExecutor, SchedulerLimits, ServerBuildError};
use validate::{check, refuse_local_spool, validate_base_url, validate_scheduler, validate_scheme};

/// How a server is made: the one `impl DualResponseServer` outside `server.rs`, which holds every
/// operation (the builder depends on the server, never the other way round).
impl DualResponseServer {
    /// A builder; only `base_url` is required.
    pub fn builder() -> DualResponseServerBuilder {
        DualResponseServerBuilder::default()
    }
}

/// Builds a [`DualResponseServer`]. Only `base_url` is required.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// let server = dual_server::DualResponseServer::builder()
///     .base_url("https://api.example.com/resources")
///     .default_expiration(Duration::from_secs(30 * 60))
///     .default_sample_size(10)
///     .build()?;
/// assert_eq!(server.config().default_sample_size, 10);
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use]
pub struct DualResponseServerBuilder {
    base_url: Option<String>,
    uri_scheme: String,
    default_expiration: Duration,
    default_sample_size: u64,
    cleanup_interval: Option<Duration>,
    page_limits: PageLimits,
    max_sample_bytes: usize,
    max_page_bytes: usize,
    max_read_bytes: usize,
    max_error_text_bytes: usize,
    max_resources: Option<u64>,
    store: Option<Arc<dyn ResourceStore>>,
    spool: Option<Spool>,
    snapshot_max_bytes: Option<u64>,
    column_profile: bool,
    sort_cache_bytes: u64,
    sorts: SortLimits,
    pending_after: Option<Duration>,
    query_time_limit: Duration,
    progress_interval: Duration,
    query_lease: Duration,
    spool_wait: Duration,
    owner_quotas: OwnerQuotas,
    link_key: Option<LinkKey>,
    link_lifetime: Duration,
    scheduler: SchedulerLimits,
    shutdown_grace: Duration,
    registry: Registry,
    refine: Option<Arc<dyn crate::RefineEngine>>,
    clock: Clock,
}

impl Default for DualResponseServerBuilder {
    fn default() -> Self {
        Self {
            base_url: None,
            uri_scheme: DEFAULT_URI_SCHEME.to_owned(),
            default_expiration: DEFAULT_EXPIRATION,
            default_sample_size: DEFAULT_SAMPLE_SIZE,
            cleanup_interval: Some(DEFAULT_CLEANUP_INTERVAL),
            page_limits: PageLimits {
                default_limit: DEFAULT_PAGE_LIMIT,
                max_limit: MAX_PAGE_LIMIT,
            },
            max_sample_bytes: DEFAULT_MAX_SAMPLE_BYTES,
            max_page_bytes: DEFAULT_MAX_PAGE_BYTES,
            max_read_bytes: DEFAULT_MAX_READ_BYTES,
            max_error_text_bytes: DEFAULT_MAX_ERROR_TEXT_BYTES,
            max_resources: Some(DEFAULT_MAX_RESOURCES),
            store: None,
            spool: None,
            snapshot_max_bytes: Some(DEFAULT_SNAPSHOT_MAX_BYTES),
            column_profile: true,
            sort_cache_bytes: DEFAULT_SORT_CACHE_BYTES,
            sorts: SortLimits::default(),
            pending_after: Some(DEFAULT_PENDING_AFTER),
            query_time_limit: DEFAULT_QUERY_TIME_LIMIT,
            progress_interval: DEFAULT_PROGRESS_INTERVAL,
            query_lease: DEFAULT_QUERY_LEASE,
            spool_wait: DEFAULT_SPOOL_WAIT,
            owner_quotas: OwnerQuotas::default(),
            link_key: None,
            link_lifetime: DEFAULT_LINK_LIFETIME,
            scheduler: SchedulerLimits::default(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            registry: Registry::default(),
            refine: None,
            clock: Clock::system(),
        }
    }
}

impl DualResponseServerBuilder {
    /// Base URL where the REST API is mounted, e.g. `https://api.example.com/resources` (required).
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// The store (default: a fresh [`MemoryStore`]).
    pub fn store(mut self, store: impl ResourceStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// The store, already shared.
    pub fn shared_store(mut self, store: Arc<dyn ResourceStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Registers the executor for `kind`, replacing any earlier one.
    pub fn executor(mut self, kind: impl Into<String>, executor: impl QueryExecutor) -> Self {
        self.registry.insert(kind.into(), Arc::new(executor));
        self
    }

    /// Registers an executor that is already shared.
    pub fn shared_executor(mut self, kind: impl Into<String>, executor: Arc<dyn QueryExecutor>) -> Self {
        self.registry.insert(kind.into(), executor);
        self
    }

    /// Lets callers refine stored results with SQL
    /// ([`DualResponseServer::refine`](crate::DualResponseServer::refine)), run by `engine` (e.g.
    /// dual-sqlite's `SqliteRefiner`) over a snapshot's rows; registers the executor of
    /// [`REFINE_KIND`](crate::REFINE_KIND). Off by default: without an engine, `refine` answers
    /// `NOT_REFINABLE`.
    pub fn refine_engine(mut self, engine: impl crate::RefineEngine) -> Self {
        self.refine = Some(Arc::new(engine));
        self
    }

    /// Default lifetime of a resource (15 minutes).
    pub fn default_expiration(mut self, expiration: Duration) -> Self {
        self.default_expiration = expiration;
        self
    }

    /// Default number of sample rows (15).
    pub fn default_sample_size(mut self, size: u64) -> Self {
        self.default_sample_size = size;
        self
    }

    /// Interval between expiry sweeps (60 s).
    pub fn cleanup_interval(mut self, interval: Duration) -> Self {
        self.cleanup_interval = Some(interval);
        self
    }

    /// Runs no sweeper (expired resources are still never served). Lets `build` run outside a Tokio
    /// runtime.
    ///
    /// The sweeper also removes the snapshots of expired resources and orphaned snapshots from the
    /// spool. Without it, call [`DualResponseServer::purge_expired`](crate::DualResponseServer::purge_expired)
    /// on a schedule of your own, or build `without_snapshots()` too: otherwise the spool keeps the
    /// snapshots of expired resources, even with a store that expires records by itself (Redis).
    pub fn without_sweeper(mut self) -> Self {
        self.cleanup_interval = None;
        self
    }

    /// URI scheme of resource links (`resource`).
    pub fn uri_scheme(mut self, scheme: impl Into<String>) -> Self {
        self.uri_scheme = scheme.into();
        self
    }

    /// Page limit when a request gives none (100).
    pub fn default_page_limit(mut self, limit: u64) -> Self {
        self.page_limits.default_limit = limit;
        self
    }

    /// Largest page limit a request may ask for (10,000).
    pub fn max_page_limit(mut self, limit: u64) -> Self {
        self.page_limits.max_limit = limit;
        self
    }

    /// Largest tool result, in bytes of JSON (default 256 KiB): the text blocks and
    /// `structuredContent` together, in the largest rendering (every protocol version, either text
    /// format), so the sample sent twice counts twice. The sample keeps as many whole rows as fit
    /// (never a value cut in half) and says how many it kept; the count and the link are always
    /// there. A first row too large leaves the sample empty.
    pub fn max_sample_bytes(mut self, bytes: usize) -> Self {
        self.max_sample_bytes = bytes;
        self
    }

    /// Largest `POST /{id}` page, in bytes of JSON (default 16 MiB): a page that would pass it is
    /// cut to whole rows, with `returned_count`, `has_next` and `next_offset` exact, and no row after
    /// the cut is read (from the snapshot, or from the executor:
    /// [`LiveQuery::fetch`](crate::LiveQuery::fetch) gets the budget in its window). A single
    /// row larger than the cap comes alone, so paging by `next_offset` always advances.
    pub fn max_page_bytes(mut self, bytes: usize) -> Self {
        self.max_page_bytes = bytes;
        self
    }

    /// Largest `resources/read` text, in bytes (default 256 KiB), which the model reads: the page is
    /// cut to whole rows like a `POST /{id}` page; a single row larger than it is an error naming
    /// the next offset, not a text for the model.
    pub fn max_read_bytes(mut self, bytes: usize) -> Self {
        self.max_read_bytes = bytes;
        self
    }

    /// Largest error text returned to the model (a tool's `isError` text, a failed query's message),
    /// in bytes (default 4 KiB): longer text is cut at a character boundary and ends with a marker.
    pub fn max_error_text_bytes(mut self, bytes: usize) -> Self {
        self.max_error_text_bytes = bytes;
        self
    }

    /// Cap on live resources in the store (default 100,000). At the cap, `create_response` fails with
    /// the retryable `TOO_MANY_RESOURCES`; nothing existing is evicted, and deleting or expiring
    /// resources frees room. With a shared store, concurrent creations on several instances may pass
    /// the cap by at most their number.
    pub fn max_resources(mut self, max: u64) -> Self {
        self.max_resources = Some(max);
        self
    }

    /// No cap on live resources (see [`DualResponseServerBuilder::max_resources`]).
    pub fn unlimited_resources(mut self) -> Self {
        self.max_resources = None;
        self
    }

    /// The spool snapshots are written to (default: a [`MemorySpool`] with its default budget,
    /// 256 MiB, spilling to a private temporary directory). Share one spool (an S3 one, say) between
    /// the instances that share a store: with a shared store
    /// ([`ResourceStore::is_shared`](dual_store::ResourceStore::is_shared)) `build` refuses a
    /// process-local spool, the default one included, unless snapshots are off.
    pub fn spool(mut self, spool: Spool) -> Self {
        self.spool = Some(spool);
        self
    }

    /// Largest snapshot, in bytes of compact JSON rows (default 1 GiB). A result that passes it is
    /// not kept: its resource is served live (its metadata says `consistency: live`).
    pub fn snapshot_max_bytes(mut self, bytes: u64) -> Self {
        self.snapshot_max_bytes = Some(bytes);
        self
    }

    /// Writes no snapshots: every resource is live, and its pages and exports re-execute the query.
    pub fn without_snapshots(mut self) -> Self {
        self.snapshot_max_bytes = None;
        self
    }

    /// Whether the snapshot writer computes the column profile of every snapshot as it spools
    /// (default `true`; docs/DESIGN.md §4, *The column profile*). Off, results carry no profile and
    /// `profile` answers `PROFILE_UNAVAILABLE`.
    pub fn column_profile(mut self, on: bool) -> Self {
        self.column_profile = on;
        self
    }

    /// Byte budget of the cache of sorted orders of snapshots (default 64 MiB, 4 bytes per row);
    /// the least recently used orders are evicted beyond it.
    pub fn sort_cache_bytes(mut self, bytes: u64) -> Self {
        self.sort_cache_bytes = bytes;
        self
    }

    /// The scheduler of the server's own query work (docs/DESIGN.md §8, "Scheduling"): foreground
    /// slots for tool calls until their sample and count ([`DEFAULT_FOREGROUND_SLOTS`](crate::DEFAULT_FOREGROUND_SLOTS)),
    /// background slots for the snapshots written after the answer ([`DEFAULT_BACKGROUND_SLOTS`](crate::DEFAULT_BACKGROUND_SLOTS)),
    /// and the most results holding a background place ([`DEFAULT_BACKGROUND_QUEUE`](crate::DEFAULT_BACKGROUND_QUEUE)):
    /// past it a tool call is refused with the retryable `OVERLOADED` before its query runs.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), dual_server::ServerBuildError> {
    /// let server = dual_server::DualResponseServer::builder()
    ///     .base_url("http://localhost/resources")
    ///     .scheduler_limits(dual_server::SchedulerLimits::default().background_slots(2))
    ///     .build()?;
    /// assert_eq!(server.config().scheduler.background_slots, 2);
    /// # Ok(()) }
    /// ```
    pub fn scheduler_limits(mut self, limits: SchedulerLimits) -> Self {
        self.scheduler = limits;
        self
    }

    /// How long [`shutdown`](DualResponseServer::shutdown) lets the snapshots of results already
    /// answered finish ([`DEFAULT_SHUTDOWN_GRACE`](crate::DEFAULT_SHUTDOWN_GRACE)) before it stores
    /// those still being written as failed with the retryable `query_interrupted`. Zero interrupts
    /// them at once.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Most sorted orders derived at once (default 2): each scans the snapshot and sorts its keys on
    /// a blocking thread, never on the async workers. A further sort waits up to
    /// [`sort_wait`](Self::sort_wait) for a slot, then fails with the retryable `OVERLOADED`. An order
    /// already cached needs no slot.
    pub fn sort_concurrency(mut self, sorts: usize) -> Self {
        self.sorts.concurrency = sorts;
        self
    }

    /// Longest wait of a sort for a derivation slot (default 5 s); then `OVERLOADED` (REST 503
    /// `overloaded` with `Retry-After`). Zero refuses at once when every slot is taken.
    pub fn sort_wait(mut self, wait: Duration) -> Self {
        self.sorts.wait = wait;
        self
    }

    /// Working-memory budget of the sorts being derived, all together (default 512 MiB): the keys
    /// they hold (24 bytes per row for the key and row number, 4 for the order, plus the bytes of
    /// each string key, or the JSON text of an array or object key). A sort that alone needs more is
    /// refused with `INVALID_REQUEST` naming `sort`; one that finds the budget taken by others fails
    /// with the retryable `OVERLOADED`.
    pub fn sort_memory_bytes(mut self, bytes: u64) -> Self {
        self.sorts.memory_bytes = bytes;
        self
    }

    /// Most rows of a snapshot the server sorts (default 5,000,000; at most 2^32 − 1): a sort of a
    /// larger one is refused with `INVALID_REQUEST` naming `sort` before anything is read.
    pub fn sort_max_rows(mut self, rows: u64) -> Self {
        self.sorts.max_rows = rows;
        self
    }

    /// Largest snapshot the server sorts, in bytes of compact JSON rows (default 512 MiB): a sort of
    /// a larger one is refused with `INVALID_REQUEST` naming `sort` before anything is read.
    pub fn sort_max_bytes(mut self, bytes: u64) -> Self {
        self.sorts.max_bytes = bytes;
        self
    }

    /// Returns a `pending` resource when a snapshot's query has not finished within `wait` of
    /// starting to run (and gave no count with its sample), and lets it finish in the background
    /// (docs/DESIGN.md §8). Default [`DEFAULT_PENDING_AFTER`](crate::DEFAULT_PENDING_AFTER), 2 s: the
    /// `count_wait` the executors of this workspace default to. Resources served live (without
    /// snapshots, or over the snapshot cap) are never pending.
    pub fn pending_after(mut self, wait: Duration) -> Self {
        self.pending_after = Some(wait);
        self
    }

    /// `create_response` waits for the end of a snapshot's query, however long (under the query
    /// time limit), instead of answering `pending` after [`pending_after`](Self::pending_after).
    pub fn wait_for_end(mut self) -> Self {
        self.pending_after = None;
        self
    }

    /// The longest a query may run (default 300 s): past it the query is cancelled, and creation
    /// fails with `QUERY_TIMEOUT` (a pending resource turns failed, `query_timeout`).
    pub fn query_time_limit(mut self, limit: Duration) -> Self {
        self.query_time_limit = limit;
        self
    }

    /// How often a pending query's progress and lease are written to the store (default 1 s), and
    /// how long its lease lasts without renewal (default 15 s); `lease` must be longer than
    /// `interval`. A pending resource whose lease lapsed reads as failed (`query_interrupted`).
    pub fn progress_interval(mut self, interval: Duration, lease: Duration) -> Self {
        self.progress_interval = interval;
        self.query_lease = lease;
        self
    }

    /// How long a read of rows the snapshot's writer has not yet spooled waits for them (default
    /// 2 s, [`DEFAULT_SPOOL_WAIT`](crate::DEFAULT_SPOOL_WAIT)) before it is answered `NOT_READY`
    /// (REST: 409 `not_ready` with `Retry-After`). `create_response` answers as soon as it has the
    /// sample and the exact count (docs/DESIGN.md §8), so the rows after the sample may still be being
    /// written: pages within the spooled rows are served at once, a page past them waits up to this.
    pub fn spool_wait(mut self, wait: Duration) -> Self {
        self.spool_wait = wait;
        self
    }

    /// Cap on the snapshot bytes of one owner's live resources (default 4 GiB,
    /// [`DEFAULT_OWNER_MAX_BYTES`](crate::DEFAULT_OWNER_MAX_BYTES)). A snapshot that would pass it
    /// fails its creation with the retryable `QUOTA_EXCEEDED` (`owner_bytes`); an owner at it is
    /// refused before its query runs. Anonymous callers are one owner.
    ///
    /// The per-owner quotas are counted by each instance (docs/SECURITY.md): N instances sharing a
    /// store allow an owner N times each.
    pub fn owner_max_bytes(mut self, bytes: u64) -> Self {
        self.owner_quotas.max_bytes = bytes;
        self
    }

    /// Cap on one owner's live resources (default 10,000,
    /// [`DEFAULT_OWNER_MAX_RESOURCES`](crate::DEFAULT_OWNER_MAX_RESOURCES)), those being created
    /// included; at it `create_response` fails with `QUOTA_EXCEEDED` (`owner_resources`).
    pub fn owner_max_resources(mut self, max: u64) -> Self {
        self.owner_quotas.max_resources = max;
        self
    }

    /// Cap on one owner's queries running at once, pending ones included (default 64,
    /// [`DEFAULT_OWNER_MAX_QUERIES`](crate::DEFAULT_OWNER_MAX_QUERIES)); beyond it
    /// `create_response` fails with `QUOTA_EXCEEDED` (`owner_queries`).
    pub fn owner_max_queries(mut self, max: u64) -> Self {
        self.owner_quotas.max_queries = max;
        self
    }

    /// Cap on one owner's pinned resources (default 100,
    /// [`DEFAULT_OWNER_MAX_PINS`](crate::DEFAULT_OWNER_MAX_PINS)); beyond it a pin fails with
    /// `QUOTA_EXCEEDED` (`owner_pins`). 0 allows no pins.
    pub fn owner_max_pins(mut self, max: u64) -> Self {
        self.owner_quotas.max_pins = max;
        self
    }

    /// Whether anonymous callers may pin (default `true`: all of them together as one owner, under
    /// [`owner_max_pins`](Self::owner_max_pins)). With `false` an anonymous pin fails with
    /// `QUOTA_EXCEEDED` (`owner_pins`, limit 0) and only authenticated owners pin.
    pub fn anonymous_pins(mut self, allowed: bool) -> Self {
        self.owner_quotas.anonymous_pins = allowed;
        self
    }

    /// The key capability links are signed with (default: [`LinkKey::random`], drawn once for this
    /// server). Give every instance that shares the store the same key, so that a link minted by
    /// one is served by all; a new key revokes every link signed with the old one.
    pub fn link_key(mut self, key: LinkKey) -> Self {
        self.link_key = Some(key);
        self
    }

    /// How long a capability link lives (default 10 minutes,
    /// [`DEFAULT_LINK_LIFETIME`](crate::DEFAULT_LINK_LIFETIME)); at most 24 hours, and not zero
    /// (`build` refuses both).
    pub fn link_lifetime(mut self, lifetime: Duration) -> Self {
        self.link_lifetime = lifetime;
        self
    }

    /// The clock (default: the system clock). Tests pass [`Clock::tokio`] and pause tokio's time.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Validates the configuration and starts the server (and its sweeper).
    ///
    /// # Errors
    /// [`ServerBuildError`] for a missing or malformed `base_url`, an out-of-range option, a shared
    /// store with a process-local spool ([`ServerBuildError::ProcessLocalSpool`]), or a missing
    /// Tokio runtime while the sweeper is enabled.
    pub fn build(self) -> Result<DualResponseServer, ServerBuildError> {
        let base_url = self.base_url.ok_or(ServerBuildError::MissingBaseUrl)?;
        validate_base_url(&base_url)?;
        validate_scheme(&self.uri_scheme)?;
        check(
            self.default_sample_size > 0,
            "default_sample_size",
            "must be at least 1",
        )?;
        check(
            self.default_sample_size <= MAX_SAMPLE_SIZE,
            "default_sample_size",
            "must be at most 1000",
        )?;
        check(
            !self.default_expiration.is_zero(),
            "default_expiration",
            "must be positive",
        )?;
        check(
            self.page_limits.max_limit > 0,
            "max_page_limit",
            "must be at least 1",
        )?;
        check(
            (1..=self.page_limits.max_limit).contains(&self.page_limits.default_limit),
            "default_page_limit",
            "must be between 1 and max_page_limit",
        )?;
        if let Some(max) = self.max_resources {
            check(max > 0, "max_resources", "must be at least 1")?;
        }
        check(
            self.max_page_bytes > dual_core::budget::PAGE_ENVELOPE_BYTES,
            "max_page_bytes",
            "must leave room for rows: more than 216 bytes",
        )?;
        check(
            self.max_read_bytes > dual_core::budget::PAGE_ENVELOPE_BYTES,
            "max_read_bytes",
            "must leave room for rows: more than 216 bytes",
        )?;
        check(
            self.max_error_text_bytes >= 64,
            "max_error_text_bytes",
            "must be at least 64",
        )?;
        let owners = self.owner_quotas;
        check(owners.max_bytes > 0, "owner_max_bytes", "must be at least 1")?;
        check(
            owners.max_resources > 0,
            "owner_max_resources",
            "must be at least 1",
        )?;
        check(owners.max_queries > 0, "owner_max_queries", "must be at least 1")?;
        if let Some(interval) = self.cleanup_interval {
            check(!interval.is_zero(), "cleanup_interval", "must be positive")?;
        }
        check(
            !self.query_time_limit.is_zero(),
            "query_time_limit",
            "must be positive",
        )?;
        check(
            !self.progress_interval.is_zero(),
            "progress_interval",
            "must be positive",
        )?;
        check(
            self.query_lease > self.progress_interval,
            "query_lease",
            "must be longer than progress_interval",
        )?;
        check(
            (1..=tokio::sync::Semaphore::MAX_PERMITS).contains(&self.sorts.concurrency),
            "sort_concurrency",
            "must be at least 1 (and below 2^61)",
        )?;
        check(
            self.sorts.memory_bytes > 0,
            "sort_memory_bytes",
            "must be at least 1",
        )?;
        check(
            (1..=u64::from(u32::MAX)).contains(&self.sorts.max_rows),
            "sort_max_rows",
            "must be between 1 and 4294967295",
        )?;
        check(self.sorts.max_bytes > 0, "sort_max_bytes", "must be at least 1")?;
        check(
            self.spool_wait <= MAX_SPOOL_WAIT,
            "spool_wait",
            "must be at most 60 s (a request holds its connection while it waits)",
        )?;
        check(!self.link_lifetime.is_zero(), "link_lifetime", "must be positive")?;
        validate_scheduler(&self.scheduler)?;
        check(
            self.link_lifetime <= MAX_LINK_LIFETIME,
            "link_lifetime",
            "must be at most 24 hours",
        )?;
        let config = ServerConfig {
            base_url: base_url.trim_end_matches('/').to_owned(),
            uri_scheme: self.uri_scheme,
            default_expiration: self.default_expiration,
            default_sample_size: self.default_sample_size,
            cleanup_interval: self.cleanup_interval,
            page_limits: self.page_limits,
            max_sample_bytes: self.max_sample_bytes,
            max_page_bytes: self.max_page_bytes,
            max_read_bytes: self.max_read_bytes,
            max_error_text_bytes: self.max_error_text_bytes,
            max_resources: self.max_resources,
            snapshot_max_bytes: self.snapshot_max_bytes,
            column_profile: self.column_profile,
            sort_cache_bytes: self.sort_cache_bytes,
            sorts: self.sorts,
            pending_after: self.pending_after,
            query_time_limit: self.query_time_limit,
            progress_interval: self.progress_interval,
            query_lease: self.query_lease,
            spool_wait: self.spool_wait,
            owner_quotas: self.owner_quotas,
            link_lifetime: self.link_lifetime,
            scheduler: self.scheduler,
            shutdown_grace: self.shutdown_grace,
        };
        let store = self.store.unwrap_or_else(|| Arc::new(MemoryStore::new()));
        let spool = match (self.spool, config.snapshot_max_bytes) {
            (_, None) => None,
            (Some(spool), Some(_)) => {
                refuse_local_spool(store.as_ref(), spool.is_shared(), "the spool given to spool()")?;
                Some(spool)
            }
            (None, Some(_)) => {
                refuse_local_spool(store.as_ref(), false, "the default memory spool")?;
                Some(Spool::new(MemorySpool::new().map_err(|e| {
                    ServerBuildError::InvalidOption {
                        option: "spool",
                        reason: e.to_string(),
                    }
                })?))
            }
        };
        let link_key = self.link_key.unwrap_or_else(|| {
            if store.is_shared() {
                tracing::warn!(
                    "the store is shared with other instances but no link_key was set: a capability link minted here will not verify on another instance; give every instance the same link_key()"
                );
            }
            LinkKey::random()
        });
        let links = Links::new(link_key, config.link_lifetime);
        if self.refine.is_some() && self.registry.get(crate::REFINE_KIND).is_ok() {
            return Err(ServerBuildError::InvalidOption {
                option: "executor",
                reason: format!(
                    "the kind `{}` is the refine engine's: register your executor under another kind",
                    crate::REFINE_KIND
                ),
            });
        }
        DualResponseServer::start(
            config,
            store,
            spool,
            self.registry,
            self.refine,
            self.clock,
            links,
        )
    }
}
