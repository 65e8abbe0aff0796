//! `fetch_all`: every row, as row ranges of the `/data` export downloaded in parallel, else pages.

use std::time::Duration;

use dual_core::{PageResponse, Row, Sort, page::MAX_PAGE_LIMIT, status::ResourceStatus};
use futures_util::{StreamExt, stream};
use tokio::time::Instant;
use tracing::Instrument;

use crate::error::ClientError;
use crate::parallel::{self, Source};
use crate::parsed::{FetchOptions, ParsedDualResponse, explain_failure, fetch_page};
use crate::progress::{Callback, Progress};
use crate::ranges;
use crate::wait::{self, DEFAULT_WAIT_TIMEOUT, WaitOptions};

/// The default batch size of [`fetch_all`](ParsedDualResponse::fetch_all) (rows between two progress
/// reports, and the page size with a server that has no export) and of
/// [`fetch_stream`](ParsedDualResponse::fetch_stream) (rows per batch).
pub const DEFAULT_BATCH_SIZE: usize = 500;

/// The default number of requests [`fetch_all`](ParsedDualResponse::fetch_all) has in flight at once.
pub const DEFAULT_PARALLELISM: usize = 4;

/// The former name of [`DEFAULT_PARALLELISM`].
#[deprecated(since = "0.1.0", note = "use `DEFAULT_PARALLELISM`")]
pub const DEFAULT_CONCURRENCY: usize = DEFAULT_PARALLELISM;

/// How [`ParsedDualResponse::fetch_all`] fetches.
///
/// ```
/// use dual_client::FetchAllOptions;
///
/// let options = FetchAllOptions::new()
///     .parallelism(8)
///     .on_progress(|fetched, total| eprintln!("{fetched}/{total}"));
/// let debug = format!("{options:?}");
/// assert!(debug.contains("parallelism: 8") && debug.contains("on_progress: true"), "{debug}");
/// ```
#[derive(Debug)]
pub struct FetchAllOptions {
    batch_size: usize,
    parallelism: usize,
    range_rows: Option<u64>,
    sort: Option<Sort>,
    on_progress: Callback<dyn FnMut(u64, u64) + Send>,
    wait_timeout: Duration,
}

impl Default for FetchAllOptions {
    fn default() -> Self {
        Self {
            batch_size: DEFAULT_BATCH_SIZE,
            parallelism: DEFAULT_PARALLELISM,
            range_rows: None,
            sort: None,
            on_progress: Callback::default(),
            wait_timeout: DEFAULT_WAIT_TIMEOUT,
        }
    }
}

impl FetchAllOptions {
    /// 4 requests at once, ranges sized from the total, progress every 500 rows, unsorted, no
    /// progress callback, waiting at most 10 minutes for a pending resource.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// How many requests are in flight at once (default [`DEFAULT_PARALLELISM`], 4): row ranges of
    /// the export, or pages with a server that has no export. 1 downloads one range after the other.
    /// 0 counts as 1. Rows keep their order whatever the parallelism.
    #[must_use]
    pub fn parallelism(mut self, requests: usize) -> Self {
        self.parallelism = requests.max(1);
        self
    }

    /// The former name of [`parallelism`](Self::parallelism), which it sets.
    #[deprecated(
        since = "0.1.0",
        note = "use `parallelism`, which also bounds the export ranges in flight"
    )]
    #[must_use]
    pub fn concurrency(self, pages: usize) -> Self {
        self.parallelism(pages)
    }

    /// Rows per range request of the export (at least 1).
    ///
    /// By default `max(4096, ⌈total / (4 × parallelism)⌉)`: about four ranges per request in flight
    /// for large results, so a slow or retried range costs little, and a single request for results of
    /// up to 4,096 rows.
    #[must_use]
    pub fn range_rows(mut self, rows: u64) -> Self {
        self.range_rows = Some(rows.max(1));
        self
    }

    /// The most rows between two progress reports (a report may come later, when a chunk of the body
    /// ends), and the page size (at most the server's maximum page limit, 10,000) with a server that
    /// has no export. At least 1.
    #[must_use]
    pub fn batch_size(mut self, rows: usize) -> Self {
        self.batch_size = rows.max(1);
        self
    }

    /// Sorts the result by a column (the server re-executes the query with it); every range request
    /// carries it.
    #[must_use]
    pub fn sort(mut self, sort: Sort) -> Self {
        self.sort = Some(sort);
        self
    }

    /// Called with `(rows fetched so far, total count)` as rows arrive: after every `batch_size` rows
    /// or so, and once with the final count. The rows so far only grow.
    ///
    /// The total is the count at creation: from the tool result, or for a lone `resource_link` or a
    /// pending resource from the metadata once the resource is ready. Nothing is reported while
    /// waiting for a pending resource; call [`wait_ready`](ParsedDualResponse::wait_ready) first
    /// with a [`WaitOptions::on_progress`] to report that.
    #[must_use]
    pub fn on_progress(mut self, callback: impl FnMut(u64, u64) + Send + 'static) -> Self {
        self.on_progress = Callback(Some(Box::new(callback)));
        self
    }

    /// How long to wait for a pending resource's query to end, from the start of `fetch_all`: the
    /// timeout of its [`wait_ready`](ParsedDualResponse::wait_ready), which also bounds asking again
    /// a request answered `not_ready` (default [`DEFAULT_WAIT_TIMEOUT`], 10 minutes).
    #[must_use]
    pub fn wait_timeout(mut self, timeout: Duration) -> Self {
        self.wait_timeout = timeout;
        self
    }
}

/// The limit of a page of `batch` rows.
pub(crate) fn page_limit(batch: usize) -> u64 {
    u64::try_from(batch).unwrap_or(u64::MAX).clamp(1, MAX_PAGE_LIMIT)
}

/// The offset of the page after `page` (fetched at `offset`), `None` after the last page.
///
/// # Errors
/// A `FETCH_ERROR` when the server says more rows follow but its next offset does not advance, which
/// would otherwise loop forever.
pub(crate) fn next_offset(page: &PageResponse, offset: u64) -> Result<Option<u64>, ClientError> {
    if !page.has_next {
        return Ok(None);
    }
    let next = page
        .next_offset
        .unwrap_or_else(|| offset.saturating_add(page.returned_count));
    if next <= offset {
        return Err(ClientError::fetch(format!(
            "the server says rows follow offset {offset} but gives no later offset"
        )));
    }
    Ok(Some(next))
}

impl ParsedDualResponse {
    /// Fetches every row, in order, checking that there are exactly `total_count` of them.
    ///
    /// A resource whose query is still running ([`status`](Self::status) `pending`) is waited for
    /// first, as [`wait_ready`](Self::wait_ready) does, for at most
    /// [`wait_timeout`](FetchAllOptions::wait_timeout); then the count is the final one. A request
    /// answered `not_ready` all the same (a resource parsed from an older result) is asked again after
    /// its `Retry-After`, within the same wait timeout.
    ///
    /// The count comes from the tool result, or from the metadata (`GET {url}`) for a lone
    /// `resource_link`, a pending resource or a count of 0. `0..total_count` is split into contiguous
    /// row ranges (see [`FetchAllOptions::range_rows`]), downloaded with at most
    /// [`parallelism`](FetchAllOptions::parallelism) requests in flight over the client's connection
    /// pool, each as `GET {url}/data?offset=N&limit=M` (NDJSON, decoded as bytes arrive), and put back
    /// in order. A range answered with 429 or 503 is retried by itself, honouring `Retry-After` within
    /// the client's retry policy, and so is one whose response is cut off (from its first missing row);
    /// finished ranges are never downloaded again.
    ///
    /// A server without the export (404 or 405 there, like the reference implementation) is read page
    /// by page instead, `parallelism` pages at once.
    ///
    /// Every row ends up in memory: for very large results prefer
    /// [`fetch_stream`](Self::fetch_stream).
    ///
    /// # Errors
    /// `QUERY_FAILED` when the resource's query failed (with its [`failure`](ClientError::failure)
    /// code), `TIMEOUT` when it is still running after the wait timeout (or a request timed out),
    /// `RESOURCE_NOT_FOUND`, `RESOURCE_EXPIRED` or `FETCH_ERROR` (including a body cut off
    /// midway more often than the retries allow, or a line that is not a row object). Never a partial
    /// result: fewer or more rows than `total_count`, or a range (not the last) with fewer rows than
    /// asked for, is a `FETCH_ERROR` saying how many rows were expected and how many came.
    pub async fn fetch_all(&self, options: FetchAllOptions) -> Result<Vec<Row>, ClientError> {
        let span = tracing::debug_span!("dual_client.fetch_all", url = %self.url,
            parallelism = options.parallelism, batch_size = options.batch_size,
            sort = options.sort.as_ref().map(tracing::field::display));
        async {
            match self.fetch_all_inner(options).await {
                Err(error) => Err(explain_failure(&self.client, &self.url, error).await),
                rows => rows,
            }
        }
        .instrument(span)
        .await
    }

    async fn fetch_all_inner(&self, options: FetchAllOptions) -> Result<Vec<Row>, ClientError> {
        let FetchAllOptions {
            batch_size,
            parallelism,
            range_rows,
            sort,
            on_progress,
            wait_timeout,
        } = options;
        let ready_by = Instant::now() + wait_timeout;
        let total = match (self.status(), self.total_count()) {
            (ResourceStatus::Ready, Some(total)) if total > 0 => total,
            // A pending resource's count grows until it is ready; a lone link has no count (and may be
            // pending); an empty result still checks the resource is there.
            _ => {
                let options = WaitOptions::new().timeout(wait_timeout);
                wait::until_ready(&self.client, &self.url, options)
                    .await?
                    .total_count
            }
        };
        let progress = Progress::new(on_progress.0, total, batch_size);
        let range_rows = range_rows.unwrap_or_else(|| ranges::default_range_rows(total, parallelism));
        let source = Source {
            client: &self.client,
            url: &self.url,
            sort: sort.as_ref(),
            progress: &progress,
            ready_by,
        };
        let ranges = ranges::plan(total, range_rows);
        tracing::debug!(total, ranges = ranges.len(), range_rows, "downloading row ranges");
        let rows = match parallel::download(source, ranges, parallelism).await? {
            Some(rows) => rows,
            None => all_pages(source, batch_size, parallelism).await?,
        };
        check_count(total, rows.len())?;
        progress.finish();
        tracing::debug!(rows = rows.len(), "fetched every row");
        Ok(rows)
    }
}

/// A `FETCH_ERROR` unless `got` rows are the `total_count` of `expected`.
fn check_count(expected: u64, got: usize) -> Result<(), ClientError> {
    let got = got as u64;
    if got == expected {
        return Ok(());
    }
    let what = if got < expected { "fewer" } else { "more" };
    Err(ClientError::fetch(format!(
        "the server returned {what} rows than total_count: expected {expected}, got {got}"
    )))
}

/// Room for at most 64 Ki rows up front: the count comes from the server and is not trusted with a
/// large allocation.
fn initial_capacity(total: u64) -> usize {
    usize::try_from(total.min(1 << 16)).unwrap_or(0)
}

/// Every row from pages: the first alone (it tells the total), the planned rest `parallelism` at a
/// time in order, then any rows past the planned end one page at a time (so that the count check sees
/// them).
async fn all_pages(
    source: Source<'_>,
    batch_size: usize,
    parallelism: usize,
) -> Result<Vec<Row>, ClientError> {
    let Source {
        client,
        url,
        sort,
        progress,
        ready_by,
    } = source;
    let limit = page_limit(batch_size);
    let options = |offset: u64| FetchOptions {
        offset,
        limit: Some(limit),
        sort: sort.cloned(),
    };
    let first = fetch_page(client, url, options(0), Some(ready_by)).await?;
    let mut next = next_offset(&first, 0)?;
    let total = first.total_count;
    let first_len = first.returned_count;
    let mut rows = first.data;
    rows.reserve(initial_capacity(total));
    progress.add(rows.len());
    if let Some(start) = next {
        // Plan the remaining pages with the page size the server actually used (it may cap the limit).
        let step = first_len.max(1);
        let offsets: Vec<u64> = std::iter::successors(Some(start), |o| o.checked_add(step))
            .take_while(|o| *o < total)
            .collect();
        let planned = offsets.len();
        let last = offsets.last().copied();
        let mut pages = stream::iter(offsets)
            .map(|offset| fetch_page(client, url, options(offset), Some(ready_by)))
            .buffered(parallelism)
            .enumerate();
        while let Some((index, page)) = pages.next().await {
            let page = page?;
            let at = start.saturating_add(step.saturating_mul(index as u64));
            if index + 1 == planned {
                // The last planned page decides whether more rows follow (the data may have grown).
                next = next_offset(&page, last.unwrap_or(start))?;
            }
            if index + 1 == planned {
                progress.add(page.data.len());
                rows.extend(page.data);
                continue;
            }
            // Pages are cut to the server's byte cap, so their sizes vary: a page keeps only the rows
            // before the next planned page, and one cut short leaves a gap, fetched one page at a
            // time by `next_offset`.
            let planned_next = at.saturating_add(step);
            let mut gap = next_offset(&page, at)?;
            let keep = usize::try_from(step).unwrap_or(usize::MAX);
            let data: Vec<Row> = page.data.into_iter().take(keep).collect();
            progress.add(data.len());
            rows.extend(data);
            while let Some(offset) = gap.filter(|offset| *offset < planned_next) {
                let page = fetch_page(client, url, options(offset), Some(ready_by)).await?;
                gap = next_offset(&page, offset)?;
                let keep = usize::try_from(planned_next - offset).unwrap_or(usize::MAX);
                let data: Vec<Row> = page.data.into_iter().take(keep).collect();
                progress.add(data.len());
                rows.extend(data);
            }
        }
    }
    while let Some(offset) = next {
        let page = fetch_page(client, url, options(offset), Some(ready_by)).await?;
        next = next_offset(&page, offset)?;
        progress.add(page.data.len());
        rows.extend(page.data);
    }
    tracing::debug!(rows = rows.len(), "fetched every row from pages");
    Ok(rows)
}
