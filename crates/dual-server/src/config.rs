//! Server configuration: the settings a server runs with and their defaults.

use std::time::Duration;

use dual_core::page::PageLimits;

use crate::OwnerQuotas;

/// Default time a resource lives: 15 minutes.
pub const DEFAULT_EXPIRATION: Duration = Duration::from_secs(15 * 60);
/// Default number of sample rows: 15.
pub const DEFAULT_SAMPLE_SIZE: u64 = 15;
/// Default interval of the expiry sweeper: 60 seconds.
pub const DEFAULT_CLEANUP_INTERVAL: Duration = Duration::from_secs(60);
/// Default cap on a whole tool result (its text blocks and `structuredContent` together, in every
/// rendering): 256 KiB of JSON; the sample keeps the whole rows that fit.
pub const DEFAULT_MAX_SAMPLE_BYTES: usize = 256 * 1024;
/// Default cap on a `POST /{id}` page: 16 MiB of JSON, cut to whole rows.
pub const DEFAULT_MAX_PAGE_BYTES: usize = 16 << 20;
/// Default cap on the text of a `resources/read` page, which the model reads: 256 KiB, cut to whole
/// rows.
pub const DEFAULT_MAX_READ_BYTES: usize = 256 * 1024;
/// Default cap on error text returned to the model: 4 KiB, cut with a marker.
pub const DEFAULT_MAX_ERROR_TEXT_BYTES: usize = dual_core::budget::DEFAULT_MAX_ERROR_TEXT_BYTES;
/// Default cap on live resources in the store: 100,000.
pub const DEFAULT_MAX_RESOURCES: u64 = 100_000;
/// Default snapshot size cap: 1 GiB of compact JSON rows; larger results are served live.
pub const DEFAULT_SNAPSHOT_MAX_BYTES: u64 = 1 << 30;
/// Default memory budget of the cache of sorted orders of snapshots: 64 MiB (4 bytes per row).
pub const DEFAULT_SORT_CACHE_BYTES: u64 = 64 << 20;
/// Default most sorted orders derived at once: 2 (each takes a blocking thread and its keys' memory).
pub const DEFAULT_SORT_CONCURRENCY: usize = 2;
/// Default longest wait of a sort for a free derivation slot before it is refused as `OVERLOADED`: 5 s.
pub const DEFAULT_SORT_WAIT: Duration = Duration::from_secs(5);
/// Default working-memory budget of the sorts being derived, all together: 512 MiB (their keys).
pub const DEFAULT_SORT_MEMORY_BYTES: u64 = 512 << 20;
/// Default most rows of a snapshot the server sorts: 5,000,000; a larger one is refused
/// (`INVALID_REQUEST` naming `sort`).
pub const DEFAULT_SORT_MAX_ROWS: u64 = 5_000_000;
/// Default largest snapshot the server sorts: 512 MiB of compact JSON rows; a larger one is
/// refused (`INVALID_REQUEST` naming `sort`).
pub const DEFAULT_SORT_MAX_BYTES: u64 = 512 << 20;
/// Default time `create_response` waits for a snapshot's query before it answers `pending`: 2
/// seconds, the executors' default `count_wait` (a count slower than that is not announced).
pub const DEFAULT_PENDING_AFTER: Duration = Duration::from_secs(2);
/// Default grace of a shutdown for the snapshots of results already answered: 20 seconds (within
/// the 30 s a container orchestrator usually waits after SIGTERM).
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(20);
/// Default time limit of a query: 300 seconds.
pub const DEFAULT_QUERY_TIME_LIMIT: Duration = Duration::from_secs(300);
/// Default interval at which a pending query's progress and lease are written to the store: 1 second.
pub const DEFAULT_PROGRESS_INTERVAL: Duration = Duration::from_secs(1);
/// Default lease of a pending query: 15 seconds without renewal and the resource reads as failed
/// (`query_interrupted`).
pub const DEFAULT_QUERY_LEASE: Duration = Duration::from_secs(15);
/// Default longest wait of a read for rows a snapshot's writer has not yet spooled: 2 seconds.
pub const DEFAULT_SPOOL_WAIT: Duration = Duration::from_secs(2);
/// Longest [`ServerConfig::spool_wait`] the builder accepts: 60 seconds.
pub const MAX_SPOOL_WAIT: Duration = Duration::from_secs(60);
/// Largest sample size accepted, so a tool result stays small enough for a model.
pub const MAX_SAMPLE_SIZE: u64 = 1_000;

/// The settings a server runs with (read them back with
/// [`DualResponseServer::config`](crate::DualResponseServer::config)).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Base URL of the REST API; a resource's URL is `base_url + "/" + id`.
    pub base_url: String,
    /// URI scheme of resource links (`resource`).
    pub uri_scheme: String,
    /// Default lifetime of a resource.
    pub default_expiration: Duration,
    /// Default number of sample rows.
    pub default_sample_size: u64,
    /// Interval between expiry sweeps; `None` when the sweeper is disabled.
    pub cleanup_interval: Option<Duration>,
    /// Default and maximum page limits.
    pub page_limits: PageLimits,
    /// Largest tool result, in bytes of JSON, text blocks and `structuredContent` together in every
    /// rendering: the sample keeps as many whole rows as fit.
    pub max_sample_bytes: usize,
    /// Largest page in bytes of JSON (`POST /{id}`): a page that would pass it is cut to whole rows
    /// (`has_next` and `next_offset` exact); a single row larger than it comes alone.
    pub max_page_bytes: usize,
    /// Largest `resources/read` text in bytes, cut to whole rows like a page.
    pub max_read_bytes: usize,
    /// Largest error text returned to the model, in bytes (cut at a character boundary with a marker).
    pub max_error_text_bytes: usize,
    /// Cap on live resources in the store (`None`: no cap); at the cap `create_response` fails with
    /// the retryable `TOO_MANY_RESOURCES` and nothing is evicted.
    pub max_resources: Option<u64>,
    /// Largest snapshot in bytes of compact JSON rows; `None` when snapshots are off (every resource
    /// is live). A result over it is served live.
    pub snapshot_max_bytes: Option<u64>,
    /// Whether the snapshot writer computes each snapshot's column profile.
    pub column_profile: bool,
    /// Byte budget of the in-memory cache of sorted orders of snapshots.
    pub sort_cache_bytes: u64,
    /// The limits of deriving sorted orders (docs/DESIGN.md §3).
    pub sorts: SortLimits,
    /// How long `create_response` waits for a snapshot's query before it returns a `pending`
    /// resource and lets the query finish in the background ([`DEFAULT_PENDING_AFTER`]); `None`
    /// waits for the end.
    pub pending_after: Option<Duration>,
    /// The longest a query may run, in the background or not; past it, it is cancelled
    /// (`QUERY_TIMEOUT`, or a failed resource with `query_timeout`).
    pub query_time_limit: Duration,
    /// How often a pending query's progress and lease are written to the store.
    pub progress_interval: Duration,
    /// How long a pending query's lease lasts without renewal.
    pub query_lease: Duration,
    /// How long a read of rows not yet spooled (a page past them, a sorted page, an export on
    /// another instance) waits for the snapshot's writer before it is answered `NOT_READY`.
    pub spool_wait: Duration,
    /// The per-owner quotas, counted by this instance.
    pub owner_quotas: OwnerQuotas,
    /// How long a capability link lives
    /// ([`DualResponseServer::download_link`](crate::DualResponseServer::download_link)).
    pub link_lifetime: Duration,
    /// The scheduler's slots and queue for the server's own query work (docs/DESIGN.md §8).
    pub scheduler: crate::SchedulerLimits,
    /// How long [`DualResponseServer::shutdown`](crate::DualResponseServer::shutdown) lets the
    /// snapshots of results already answered finish before it stores them as interrupted.
    pub shutdown_grace: Duration,
}

/// The limits of deriving sorted orders of snapshots: how many at once, how long a sort waits for
/// its turn, the working memory of those being derived, and the largest snapshot sorted at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SortLimits {
    /// Most orders derived at once, each on a blocking thread.
    pub concurrency: usize,
    /// Longest wait for a derivation slot; then `OVERLOADED` (retryable).
    pub wait: Duration,
    /// Working memory (the sort keys) of every derivation in progress, together.
    pub memory_bytes: u64,
    /// Most rows of a snapshot sorted; above, `INVALID_REQUEST` naming `sort`.
    pub max_rows: u64,
    /// Largest snapshot sorted, in bytes of compact JSON rows; above, `INVALID_REQUEST`.
    pub max_bytes: u64,
}

impl Default for SortLimits {
    fn default() -> Self {
        Self {
            concurrency: DEFAULT_SORT_CONCURRENCY,
            wait: DEFAULT_SORT_WAIT,
            memory_bytes: DEFAULT_SORT_MEMORY_BYTES,
            max_rows: DEFAULT_SORT_MAX_ROWS,
            max_bytes: DEFAULT_SORT_MAX_BYTES,
        }
    }
}
