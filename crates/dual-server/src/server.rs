//! `DualResponseServer`: creates dual responses and serves their resources.

mod durable_tasks;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use dual_core::{
    DualResponse, PageRequest, PageResponse, ResourceId, ResourceRecord, Sort, consistency::Consistency,
    mcp::ResponseProfile, metadata::ResourceMetadata, page::validate_sort, range::RowRange,
};
use dual_spool::Spool;
use dual_store::{Clock, ListPage, ResourceStore};
use tracing::Instrument;

use crate::access::{accessed, authorized, found, readable, refuse_grant};
use crate::batch::decoded;
use crate::config::ServerConfig;
use crate::encoded::{EncodedPage, PageFreshness};
use crate::inner::Inner;
use crate::links::{DownloadLink, LinkFormat, Links};
use crate::owners::OwnerLedger;
use crate::registry::Registry;
use crate::runs::Runs;
use crate::sorted::SortCache;
use crate::source::{Source, spooled_rows};
use crate::sweeper::Sweeper;
use crate::{
    Caller, CreateResponse, RowStream, ServerBuildError, ServerError, creation, export_check, link_minting,
};

/// Creates dual responses and serves their resources: the heart of the server side.
///
/// A cheap `Clone` handle: share one between your MCP tool handlers and the REST handler.
#[derive(Clone)]
pub struct DualResponseServer {
    inner: Arc<Inner>,
}

impl fmt::Debug for DualResponseServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DualResponseServer")
            .field("config", &self.inner.config)
            .field("store", &self.inner.store)
            .field("spool", &self.inner.spool)
            .field("registry", &self.inner.registry)
            .finish_non_exhaustive()
    }
}

/// How long a shutdown waits for the interrupted runs to store their state before it cancels them.
const INTERRUPT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl DualResponseServer {
    pub(crate) fn start(
        config: ServerConfig,
        store: Arc<dyn ResourceStore>,
        spool: Option<Spool>,
        mut registry: Registry,
        refine: Option<Arc<dyn crate::RefineEngine>>,
        clock: Clock,
        links: Links,
    ) -> Result<Self, ServerBuildError> {
        let sorts = Arc::new(SortCache::new(config.sort_cache_bytes, config.sorts));
        crate::metrics::limits(config.max_resources);
        let sweeper = match config.cleanup_interval {
            Some(interval) => {
                tokio::runtime::Handle::try_current().map_err(|_| ServerBuildError::NoRuntime)?;
                Some(Sweeper::spawn(
                    Arc::clone(&store),
                    spool.clone(),
                    Arc::clone(&sorts),
                    clock,
                    interval,
                ))
            }
            None => None,
        };
        let owners = Arc::new(OwnerLedger::new(config.owner_quotas));
        // The refine executor reads the server's own snapshots: it holds the server weakly.
        let inner = Arc::new_cyclic(|weak| {
            if let Some(engine) = &refine {
                registry.insert(
                    crate::REFINE_KIND.to_owned(),
                    Arc::new(crate::refine::RefineExecutor {
                        engine: Arc::clone(engine),
                        inner: weak.clone(),
                    }),
                );
            }
            Inner {
                scheduler: crate::scheduler::Scheduler::new(config.scheduler),
                config,
                store,
                spool,
                sorts,
                registry,
                refine,
                clock,
                runs: Runs::default(),
                owners,
                links,
                sweeper: Mutex::new(sweeper),
                shut_down: AtomicBool::new(false),
            }
        });
        Ok(Self { inner })
    }

    /// The configuration in force.
    #[must_use]
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// The store.
    #[must_use]
    pub fn store(&self) -> &Arc<dyn ResourceStore> {
        &self.inner.store
    }

    /// The snapshot spool; `None` when snapshots are off.
    #[must_use]
    pub fn spool(&self) -> Option<&Spool> {
        self.inner.spool.as_ref()
    }

    /// The server's clock.
    #[must_use]
    pub fn clock(&self) -> Clock {
        self.inner.clock
    }

    /// The registered executor kinds, sorted.
    #[must_use]
    pub fn kinds(&self) -> Vec<String> {
        let mut kinds: Vec<String> = self.inner.registry.kinds().map(str::to_owned).collect();
        kinds.sort_unstable();
        kinds
    }

    /// Runs the query, stores the resource and returns the dual response.
    ///
    /// With snapshots (the default), one pass of the executor's `stream` writes every row to the
    /// spool, keeps the sample and counts the rows, so `total_count` is exactly the rows that pages
    /// and exports serve (`consistency: snapshot`). It answers as soon as it can:
    ///
    /// * when the executor gives its consistent count ([`QueryStart::started_with_count`]), once
    ///   the sample is in, with that exact total, while the rest is written in the background (the
    ///   metadata's `spooled_rows` tells how far; reads past it wait for the writer, at most the
    ///   server's `spool_wait`);
    /// * otherwise at the end of the stream, or as a `pending` resource once the query has run for
    ///   `pending_after` ([`DualResponseServerBuilder::pending_after`]).
    ///
    /// A writer that fails after the answer turns the resource `failed` with the reason (never a
    /// short result). A result over the snapshot cap, or a server without snapshots, is counted and
    /// sampled by the executor's live paging ([`QueryExecutor::live`]) and served by executing the
    /// query again (`consistency: live`).
    ///
    /// [`QueryStart::started_with_count`]: crate::QueryStart::started_with_count
    /// [`DualResponseServerBuilder::pending_after`]: crate::DualResponseServerBuilder::pending_after
    /// [`QueryExecutor::live`]: crate::QueryExecutor::live
    ///
    /// # Errors
    /// `UNKNOWN_QUERY_KIND`, `INVALID_REQUEST` (sample size or expiration out of range),
    /// `TOO_MANY_RESOURCES`, `QUOTA_EXCEEDED`, `COUNT_EXECUTION_FAILED` / `QUERY_EXECUTION_FAILED`
    /// carrying the executor's message (also for a live resource whose executor has no live paging,
    /// and for a stream whose rows do not match the count it gave), `QUERY_TIMEOUT`, `OVERLOADED`, or
    /// `STORAGE_ERROR` (the store, or the spool).
    pub async fn create_response(&self, request: CreateResponse) -> Result<DualResponse, ServerError> {
        if self.inner.shut_down.load(Ordering::Acquire) {
            return Err(ServerError::Overloaded(crate::ExecutorError::overloaded(
                "this server is shutting down: run the query again (another instance takes it)",
                std::time::Duration::from_secs(1),
            )));
        }
        let span = tracing::info_span!("dual_create", kind = %dual_core::escape::log_safe(&request.query.kind), id = tracing::field::Empty);
        creation::create(&self.inner, request).instrument(span).await
    }

    /// The live record of `id` as `caller` may see it, without counting an access.
    ///
    /// # Errors
    /// `RESOURCE_NOT_FOUND` (also for a resource bound to another owner), `RESOURCE_EXPIRED` or
    /// `STORAGE_ERROR`.
    pub async fn get_resource(&self, id: ResourceId, caller: &Caller) -> Result<ResourceRecord, ServerError> {
        authorized(&self.inner, id, caller).await
    }

    /// The resource's metadata, counting an access.
    ///
    /// # Errors
    /// As [`DualResponseServer::get_resource`].
    pub async fn metadata(&self, id: ResourceId, caller: &Caller) -> Result<ResourceMetadata, ServerError> {
        let record = accessed(&self.inner, id, caller).await?;
        let mut metadata = ResourceMetadata::at(&record, self.inner.clock.now());
        metadata.spooled_rows = spooled_rows(&self.inner, &record);
        Ok(metadata)
    }

    /// The tool result of `record` (read by a caller who may see it, e.g. a pending result that has
    /// since finished): its sample cut to `max_sample_bytes`, with the complete column profile when
    /// the snapshot is written (else where to read it).
    pub async fn response_of(&self, record: ResourceRecord) -> DualResponse {
        let inner = &self.inner;
        let profile = match Source::of(inner, &record) {
            Source::Snapshot { .. } if !inner.config.column_profile => ResponseProfile::None,
            source @ Source::Snapshot { .. } if !record.is_running() => match source.profile().await {
                Ok(profile) if profile.complete => ResponseProfile::Here(profile),
                _ => ResponseProfile::Later,
            },
            Source::Snapshot { .. } => ResponseProfile::Later,
            Source::Live { .. } => ResponseProfile::None,
        };
        crate::sample::fit_response(&inner.config, record, profile)
    }

    /// Whether [`DualResponseServer::refine`] can run: the builder was given a
    /// [`RefineEngine`](crate::RefineEngine) and the server keeps snapshots.
    #[must_use]
    pub fn can_refine(&self) -> bool {
        self.inner.refine.is_some() && self.inner.spool.is_some()
    }

    /// Refines a stored result with SQL (docs/DESIGN.md §4, *Refining a result*): `sql` reads the
    /// parent's rows as the table `result` and runs on the server's
    /// [`RefineEngine`](crate::RefineEngine), never on the parent's database. The answer is a new
    /// dual response created as [`DualResponseServer::create_response`] creates one (its limits,
    /// quotas, snapshot and profile), owned by the parent's owner, expiring no later than the
    /// parent, whose query is `{"kind": "refine", "params": {"parent", "sql"}}`.
    ///
    /// The parent is authorized and counted as a page of it would be, so an expired, failed or other
    /// owner's result answers as its page does; a link's grant may not refine.
    ///
    /// # Errors
    /// `NOT_REFINABLE` (no engine, or a live parent), `NOT_READY` (the parent's query still runs),
    /// `QUERY_EXECUTION_FAILED` (the engine refused or failed on the SQL: its message, then the
    /// columns of `result`), and the errors of [`DualResponseServer::get_resource`] and
    /// [`DualResponseServer::create_response`].
    pub async fn refine(
        &self,
        parent: ResourceId,
        sql: &str,
        caller: &Caller,
    ) -> Result<DualResponse, ServerError> {
        if self.inner.shut_down.load(Ordering::Acquire) {
            return Err(ServerError::Overloaded(crate::ExecutorError::overloaded(
                "this server is shutting down: refine again (another instance takes it)",
                std::time::Duration::from_secs(1),
            )));
        }
        let span = tracing::info_span!("dual_refine", %parent, id = tracing::field::Empty);
        crate::refine::refine(&self.inner, parent, sql, caller)
            .instrument(span)
            .await
    }

    /// The column profile of the resource's rows (docs/DESIGN.md §4, *The column profile*),
    /// counting an access like a page: complete once the snapshot is written, the rows so far
    /// (`complete: false`) while it is being written.
    ///
    /// # Errors
    /// `NOT_READY` while nothing is profiled yet; `NO_PROFILE` for a live resource (or one stored
    /// without a profile); a failed resource's `RESOURCE_FAILED`; otherwise as
    /// [`DualResponseServer::get_resource`].
    pub async fn profile(
        &self,
        id: ResourceId,
        caller: &Caller,
    ) -> Result<Arc<dual_core::profile::Profile>, ServerError> {
        let span = tracing::debug_span!("dual_profile", %id);
        async move {
            let record = accessed(&self.inner, id, caller).await?;
            if record.status == dual_core::status::ResourceStatus::Failed {
                readable(&record)?;
            }
            Source::of(&self.inner, &record).profile().await
        }
        .instrument(span)
        .await
    }

    /// One page of the resource's result: authorizes the caller and counts the access in one store
    /// call, validates the request against the server's limits and the resource's columns, and reads
    /// `limit + 1` rows so that `has_next` is exact: from the snapshot (sorted pages through the sort
    /// order derived once per resource and key), or for a live resource by re-executing the query.
    /// A limit out of range is refused before the store call and not counted; a request the caller
    /// may see the resource for is counted even when it then fails (a page of a resource not ready, a
    /// sort field that is not a column): checking it needs the record, which the counting call reads.
    ///
    /// This decodes a snapshot's rows; to send the page on, [`DualResponseServer::fetch_page_encoded`]
    /// writes it without decoding.
    ///
    /// # Errors
    /// `INVALID_REQUEST` naming the field, `RESOURCE_NOT_FOUND` (also for a resource bound to another
    /// owner), `RESOURCE_EXPIRED`, `QUERY_EXECUTION_FAILED`, `OVERLOADED` (the executor had no
    /// capacity in time), `UNKNOWN_QUERY_KIND` (an instance missing a registration) or
    /// `STORAGE_ERROR`.
    pub async fn fetch_page(
        &self,
        id: ResourceId,
        caller: &Caller,
        request: &PageRequest,
    ) -> Result<PageResponse, ServerError> {
        self.fetch_page_encoded(id, caller, request)
            .await?
            .into_response(id)
    }

    /// [`DualResponseServer::fetch_page`] with a snapshot's rows left as they are stored (compact
    /// JSON): [`EncodedPage::to_json`] writes the `POST /{id}` body by copying them, the fast path of
    /// the REST API. The page is cut to whole rows within the server's `max_page_bytes`.
    ///
    /// # Errors
    /// As [`DualResponseServer::fetch_page`].
    pub async fn fetch_page_encoded(
        &self,
        id: ResourceId,
        caller: &Caller,
        request: &PageRequest,
    ) -> Result<EncodedPage, ServerError> {
        self.fetch_page_within(id, caller, request, self.inner.config.max_page_bytes)
            .await
    }

    /// [`DualResponseServer::fetch_page_encoded`] cut to `max_bytes` of JSON instead of the server's
    /// `max_page_bytes` (`resources/read` uses `max_read_bytes`).
    ///
    /// The page keeps its rows in order while its JSON ([`EncodedPage::to_json`]) stays within
    /// `max_bytes`, and always its first row: a page cut short says `has_next` with the exact
    /// `next_offset` of the first row left out, and a single row larger than `max_bytes` comes alone.
    /// No row after the cut is read: a snapshot's segments are read one at a time, and a live
    /// resource's rows come from [`LiveQuery::fetch`](crate::LiveQuery::fetch) with the byte budget
    /// in its window.
    ///
    /// # Errors
    /// As [`DualResponseServer::fetch_page`].
    pub async fn fetch_page_within(
        &self,
        id: ResourceId,
        caller: &Caller,
        request: &PageRequest,
        max_bytes: usize,
    ) -> Result<EncodedPage, ServerError> {
        let span = tracing::debug_span!("dual_fetch_page", %id);
        async move {
            let limits = self.inner.config.page_limits;
            // What can be refused without the record (the limit) is refused before the store call,
            // and so not counted.
            let unsorted = PageRequest {
                offset: request.offset,
                limit: request.limit,
                sort: None,
            };
            unsorted.validate(limits, &[])?;
            let record = accessed(&self.inner, id, caller).await?;
            readable(&record)?;
            let page = request.validate(limits, &record.columns)?;
            let freshness = PageFreshness {
                expires_at: record.expires_at,
                owned: record.owner.is_some(),
                live: record.consistency == Consistency::Live,
            };
            Ok(Source::of(&self.inner, &record)
                .page(&page, max_bytes)
                .await?
                .with_freshness(freshness))
        }
        .instrument(span)
        .await
    }

    /// The resource's whole result as a stream of row batches (for exports), counting an access.
    /// The stream yields rows as the snapshot or the executor produces them; nothing is collected first.
    /// The same as [`DualResponseServer::stream_range`] with [`RowRange::ALL`].
    ///
    /// # Errors
    /// `INVALID_REQUEST` for a sort field that is not a column (counted, as for
    /// [`DualResponseServer::fetch_page`]), and the errors of [`DualResponseServer::get_resource`].
    /// Errors while streaming arrive as stream items.
    pub async fn stream_rows(
        &self,
        id: ResourceId,
        caller: &Caller,
        sort: Option<Sort>,
    ) -> Result<(ResourceRecord, RowStream), ServerError> {
        self.stream_range(id, caller, sort, RowRange::ALL).await
    }

    /// The rows of `range` of the resource's result, sorted by `sort`, as a stream of decoded row
    /// batches, counting an access: [`DualResponseServer::export_range`] with every batch decoded.
    ///
    /// # Errors
    /// As [`DualResponseServer::export_range`].
    pub async fn stream_range(
        &self,
        id: ResourceId,
        caller: &Caller,
        sort: Option<Sort>,
        range: RowRange,
    ) -> Result<(ResourceRecord, RowStream), ServerError> {
        let (record, stream) = self.export_range(id, caller, sort, range).await?;
        Ok((record, decoded(stream)))
    }

    /// The rows of `range` of the resource's result, sorted by `sort`, as a stream of
    /// [`RowBatch`](crate::RowBatch)es (ranged exports, the unit of parallel download), counting an
    /// access.
    ///
    /// The range is checked against the record's `total_count`: `offset` may be at most
    /// `total_count` (the empty range at the end is allowed). A snapshot resource's rows are read
    /// from the spool one segment per batch (sorted: through its cached sorted order, 1,000 rows per
    /// batch) and stay as stored ([`RowBatch::Json`](crate::RowBatch::Json)), so JSON and NDJSON
    /// exports copy them; a live resource's come as the executor's
    /// [`QueryExecutor::stream_range`](crate::QueryExecutor::stream_range) yields them (decoded rows
    /// or JSON rows), and the stream ends after `range.limit`
    /// rows (dropping the executor's stream then) or at the end of the result.
    ///
    /// # Errors
    /// `INVALID_REQUEST` for a sort field that is not a column or an `offset` beyond `total_count`
    /// (both counted: the check needs the record, which the counting store call reads), and the
    /// errors of [`DualResponseServer::get_resource`]. Errors while streaming arrive as stream items.
    pub async fn export_range(
        &self,
        id: ResourceId,
        caller: &Caller,
        sort: Option<Sort>,
        range: RowRange,
    ) -> Result<(ResourceRecord, RowStream), ServerError> {
        let record = accessed(&self.inner, id, caller).await?;
        readable(&record)?;
        let sort = sort.map(|s| validate_sort(&s, &record.columns)).transpose()?;
        range.check(record.total_count)?;
        let stream = Source::of(&self.inner, &record).export(sort, range).await?;
        Ok((Arc::unwrap_or_clone(record), stream))
    }

    /// The record of `id` when [`DualResponseServer::export_range`] with `sort` and `range` would
    /// start an export for `caller`, and its error when it would not, found by the same checks in the
    /// same order (authorization, expiry, status, sort field, range, and for a live resource an
    /// executor registered for its kind). Nothing else happens: no access is counted, no snapshot is
    /// read, no sorted order derived and no query run, so it answers a `HEAD` of an export at the
    /// cost of one store read.
    ///
    /// # Errors
    /// As [`DualResponseServer::export_range`] before its stream starts: `RESOURCE_NOT_FOUND` (also
    /// for a resource bound to another owner), `RESOURCE_EXPIRED`, `NOT_READY`, `RESOURCE_FAILED`,
    /// `INVALID_REQUEST` (a sort field that is not a column, an `offset` beyond `total_count`),
    /// `UNKNOWN_QUERY_KIND` or `STORAGE_ERROR`.
    pub async fn check_export(
        &self,
        id: ResourceId,
        caller: &Caller,
        sort: Option<&Sort>,
        range: RowRange,
    ) -> Result<ResourceRecord, ServerError> {
        export_check::check_export(&self.inner, id, caller, sort, range).await
    }

    /// A data link: `{base_url}/{id}/data?format=F[&offset=O][&limit=L][&sort=field:order]&expires=E&token=T`,
    /// which downloads exactly that export (from the resource's snapshot or query, as
    /// `GET /{id}/data` does) with no `Authorization` header until it expires
    /// ([`DualResponseServerBuilder::link_lifetime`](crate::DualResponseServerBuilder::link_lifetime)).
    /// `offset` is left out when 0 and `limit` when `None`.
    ///
    /// The caller is authorized first, as for every read; a link's grant cannot mint links (it
    /// would outlive its own expiry).
    ///
    /// The export's checks run before signing, as for `HEAD /{id}/data`, so a link is never dead on
    /// arrival.
    ///
    /// # Errors
    /// `RESOURCE_NOT_FOUND` (also for a resource bound to another owner, and for a link's grant),
    /// `RESOURCE_EXPIRED`, `STORAGE_ERROR`, and the export's own refusals: `INVALID_REQUEST` for a
    /// range past the end or a sort on no column (or on a snapshot too large to sort),
    /// `NOT_READY` while the query runs, and the failure of a query that failed.
    pub async fn download_link(
        &self,
        id: ResourceId,
        caller: &Caller,
        format: LinkFormat,
        range: RowRange,
        sort: Option<Sort>,
    ) -> Result<DownloadLink, ServerError> {
        link_minting::download_link(&self.inner, id, caller, format, range, sort.as_ref()).await
    }

    /// A read link to the resource's page, `{base_url}/{id}/view?expires=E&token=T`, which shows the
    /// whole result in a browser with no `Authorization` header until it expires: the page appends
    /// the same `expires` and `token` to its REST reads (`GET /{id}`, `POST /{id}`,
    /// `GET /{id}/data`), which the read link authorizes too.
    ///
    /// # Errors
    /// As [`DualResponseServer::download_link`].
    pub async fn view_link(&self, id: ResourceId, caller: &Caller) -> Result<DownloadLink, ServerError> {
        link_minting::view_link(&self.inner, id, caller).await
    }

    /// The server's link verifier, which `dual-http` checks a request's `token` with.
    #[must_use]
    pub fn links(&self) -> &Links {
        &self.inner.links
    }

    /// News of the query of `id` when this instance runs it in the background (a pending or
    /// spooling resource): waits until it has read more than `rows` rows, at most `timeout`, and
    /// returns the rows read so far (then the same `rows` when nothing came). `None` when no query of
    /// `id` runs here, or once its outcome is in the store: read the record then.
    ///
    /// This follows the run's progress in memory: no store read, and no authorization, so call it
    /// between authorized reads of the record (as `dual-rmcp`'s `wait_for_result` does), which is
    /// how a waiter on the run's instance sees each batch at once while one on another instance
    /// polls the store.
    pub async fn run_progress(&self, id: ResourceId, rows: u64, timeout: std::time::Duration) -> Option<u64> {
        let mut progress = self.inner.runs.progress(id)?;
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        loop {
            let read = {
                let p = progress.borrow_and_update();
                if p.settled {
                    return None;
                }
                p.rows
            };
            if read > rows {
                return Some(read);
            }
            tokio::select! {
                changed = progress.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                }
                () = &mut deadline => return Some(read),
            }
        }
    }

    /// Removes the resource's expiry, returning the pinned record. Counted against the caller's
    /// pins (anonymous callers are one owner, or may not pin at all: see
    /// [`DualResponseServerBuilder::anonymous_pins`](crate::DualResponseServerBuilder::anonymous_pins)).
    ///
    /// # Errors
    /// `QUOTA_EXCEEDED` (`owner_pins`) at the caller's pin quota, `RESOURCE_NOT_FOUND` for a link's
    /// grant (which only reads), and as [`DualResponseServer::get_resource`].
    pub async fn pin_resource(&self, id: ResourceId, caller: &Caller) -> Result<ResourceRecord, ServerError> {
        refuse_grant(caller)?;
        let record = authorized(&self.inner, id, caller).await?;
        if record.is_pinned() {
            return Ok(record);
        }
        let owners = &self.inner.owners;
        owners.check_pin(caller.owner_name(), id)?;
        let pinned = found(self.inner.store.pin(id, self.inner.clock.now()).await?)?;
        owners.pinned(caller.owner_name(), id);
        Ok(pinned)
    }

    /// Deletes the resource.
    ///
    /// # Errors
    /// `RESOURCE_NOT_FOUND` when there is nothing `caller` may delete (an unknown id, a resource
    /// bound to another owner, or a link's grant, which only reads), `RESOURCE_EXPIRED`, or
    /// `STORAGE_ERROR`.
    pub async fn delete_resource(&self, id: ResourceId, caller: &Caller) -> Result<(), ServerError> {
        refuse_grant(caller)?;
        let record = authorized(&self.inner, id, caller).await?;
        // Before the record: a failure leaves the resource in place, to be deleted again.
        Source::of(&self.inner, &record).discard().await?;
        let deleted = self.inner.store.delete(id).await?;
        self.inner.owners.forget(id);
        if deleted {
            Ok(())
        } else {
            Err(ServerError::ResourceNotFound)
        }
    }

    /// Up to `limit` of `caller`'s live resources, newest first, created before the resource
    /// `before` when it is given (the last one of the previous page): an authenticated caller's
    /// own resources, an anonymous caller's the resources created without an owner, and nothing
    /// for a link's grant. A record whose instance stopped is listed as the store has it; read it
    /// for its status.
    ///
    /// # Errors
    /// `STORAGE_ERROR`.
    pub async fn list_resources(
        &self,
        caller: &Caller,
        before: Option<ResourceId>,
        limit: usize,
    ) -> Result<Vec<ResourceRecord>, ServerError> {
        if caller.is_grant() {
            return Ok(Vec::new());
        }
        let now = self.inner.clock.now();
        Ok(self
            .inner
            .store
            .list(ListPage::new(caller.owner_name(), limit).below(before), now)
            .await?)
    }

    /// Purges expired resources now (the sweeper does this every cleanup interval), returning how many.
    ///
    /// # Errors
    /// `STORAGE_ERROR`.
    pub async fn purge_expired(&self) -> Result<u64, ServerError> {
        crate::sweeper::purge(
            self.inner.store.as_ref(),
            self.inner.spool.as_ref(),
            &self.inner.sorts,
            self.inner.clock.now(),
        )
        .await
    }

    /// Shuts the server down within [`ServerConfig::shutdown_grace`]: see
    /// [`DualResponseServer::shutdown_within`].
    ///
    /// # Errors
    /// `STORAGE_ERROR` when closing the store failed.
    pub async fn shutdown(&self) -> Result<(), ServerError> {
        self.shutdown_within(self.inner.config.shutdown_grace).await
    }

    /// Shuts the server down, finishing what was announced (docs/DESIGN.md §8, "Shutdown"): new
    /// tool calls are refused (the retryable `OVERLOADED`: another instance takes them); the
    /// snapshots of results already answered are written to the end for at most `grace` (into the
    /// shared spool when there is one, so every instance serves them); a result still being written
    /// then is stopped and stored `failed` with the retryable `query_interrupted`, whose message
    /// tells the model to run the query again. Then the sweeper stops and the spool and the store
    /// close. Idempotent; other clones see the store closed.
    ///
    /// # Errors
    /// `STORAGE_ERROR` when closing the store failed.
    pub async fn shutdown_within(&self, grace: std::time::Duration) -> Result<(), ServerError> {
        if self.inner.shut_down.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let running = self.inner.runs.len();
        if running > 0 {
            tracing::info!(
                running,
                grace_ms = grace.as_millis() as u64,
                "shutting down: finishing the results already answered"
            );
            if !self.inner.runs.drained_within(grace).await {
                tracing::warn!(
                    left = self.inner.runs.len(),
                    "shutdown grace over: the results still being written are stored as interrupted"
                );
                self.inner.runs.interrupt_all();
                if !self.inner.runs.drained_within(INTERRUPT_WAIT).await {
                    // Their leases lapse, and every instance then reads them as interrupted.
                    self.inner.runs.cancel_all();
                }
            }
        }
        let sweeper = self
            .inner
            .sweeper
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(sweeper) = sweeper {
            sweeper.stop().await;
        }
        if let Some(spool) = &self.inner.spool
            && let Err(error) = spool.close().await
        {
            tracing::warn!(error = %dual_core::escape::log_error(&error), "closing the snapshot spool failed");
        }
        self.inner.store.close().await?;
        tracing::info!("dual-response server shut down");
        Ok(())
    }

    /// Whether the sweeper is running (false after [`DualResponseServer::shutdown`]).
    #[must_use]
    pub fn is_sweeping(&self) -> bool {
        self.inner
            .sweeper
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some()
    }
}
