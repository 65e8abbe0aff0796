//! `fetch_all`: every row, from the streamed export when the server has one, else pages in parallel.

use std::fmt;

use dual_core::{MAX_PAGE_LIMIT, Row, Sort};
use futures_util::{StreamExt, stream};
use tracing::Instrument;

use crate::client::DualResponseClient;
use crate::error::ClientError;
use crate::export;
use crate::parsed::{FetchOptions, FetchResult, ParsedDualResponse, fetch_page};

/// The default batch size of [`fetch_all`](ParsedDualResponse::fetch_all) and
/// [`fetch_stream`](ParsedDualResponse::fetch_stream).
pub const DEFAULT_BATCH_SIZE: usize = 500;

/// The default number of pages [`fetch_all`](ParsedDualResponse::fetch_all) fetches at once when the
/// server has no export endpoint.
pub const DEFAULT_CONCURRENCY: usize = 4;

type ProgressFn = Box<dyn FnMut(u64, u64) + Send>;

/// How [`ParsedDualResponse::fetch_all`] fetches.
///
/// ```
/// use dual_client::FetchAllOptions;
///
/// let options = FetchAllOptions::new()
///     .batch_size(1000)
///     .on_progress(|fetched, total| eprintln!("{fetched}/{total}"));
/// assert!(format!("{options:?}").contains("batch_size: 1000"));
/// ```
pub struct FetchAllOptions {
    batch_size: usize,
    concurrency: usize,
    sort: Option<Sort>,
    on_progress: Option<ProgressFn>,
}

impl Default for FetchAllOptions {
    fn default() -> Self {
        Self {
            batch_size: DEFAULT_BATCH_SIZE,
            concurrency: DEFAULT_CONCURRENCY,
            sort: None,
            on_progress: None,
        }
    }
}

impl fmt::Debug for FetchAllOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FetchAllOptions")
            .field("batch_size", &self.batch_size)
            .field("concurrency", &self.concurrency)
            .field("sort", &self.sort)
            .field("on_progress", &self.on_progress.is_some())
            .finish()
    }
}

impl FetchAllOptions {
    /// Batches of 500 rows, 4 pages at once, unsorted, no progress callback.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Rows per page when paging (at most the server's maximum page limit, 10,000), and rows between
    /// two progress reports when streaming. At least 1.
    #[must_use]
    pub fn batch_size(mut self, rows: usize) -> Self {
        self.batch_size = rows.max(1);
        self
    }

    /// How many pages are fetched at once when the server has no export (at least 1). Rows keep
    /// their order whatever the concurrency.
    #[must_use]
    pub fn concurrency(mut self, pages: usize) -> Self {
        self.concurrency = pages.max(1);
        self
    }

    /// Sorts the result by a column (the server re-executes the query with it).
    #[must_use]
    pub fn sort(mut self, sort: Sort) -> Self {
        self.sort = Some(sort);
        self
    }

    /// Called with `(rows fetched so far, total count)` after every batch, as rows arrive.
    ///
    /// The total is the count at creation (for a lone `resource_link`, from the metadata or the first
    /// page). The query re-executes, so the rows can outnumber it when the data grew since; the total
    /// reported is then raised to the rows fetched, so it is never below them.
    #[must_use]
    pub fn on_progress(mut self, callback: impl FnMut(u64, u64) + Send + 'static) -> Self {
        self.on_progress = Some(Box::new(callback));
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
pub(crate) fn next_offset(page: &FetchResult, offset: u64) -> Result<Option<u64>, ClientError> {
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
    /// Fetches every row, in order.
    ///
    /// Uses the streamed export (`GET {url}/data`, NDJSON) when the server has one, decoding rows as
    /// bytes arrive. A server without it (404 or 405 there, like the reference implementation) is read
    /// page by page instead, several pages at once, in order. Progress is reported after every batch.
    ///
    /// Every row ends up in memory: for very large results prefer
    /// [`fetch_stream`](Self::fetch_stream).
    ///
    /// # Errors
    /// `RESOURCE_NOT_FOUND`, `RESOURCE_EXPIRED`, `TIMEOUT` or `FETCH_ERROR` (including a body cut off
    /// midway or a line that is not a row object).
    pub async fn fetch_all(&self, options: FetchAllOptions) -> Result<Vec<Row>, ClientError> {
        let span = tracing::debug_span!("dual_client.fetch_all", url = %self.url, batch_size = options.batch_size,
            sort = options.sort.as_ref().map(tracing::field::display));
        self.fetch_all_inner(options).instrument(span).await
    }

    async fn fetch_all_inner(&self, options: FetchAllOptions) -> Result<Vec<Row>, ClientError> {
        let FetchAllOptions {
            batch_size,
            concurrency,
            sort,
            on_progress,
        } = options;
        let mut progress = Progress {
            callback: on_progress,
            total: self.total_count(),
        };
        let Some(mut export) = export::open(&self.client, &self.url, sort.as_ref()).await? else {
            return all_pages(&self.client, &self.url, batch_size, concurrency, sort, progress).await;
        };
        if progress.total.is_none() && progress.callback.is_some() {
            // A lone resource link: the count is in the metadata. Without it, progress shows rows so far.
            progress.total = self.metadata().await.ok().map(|m| m.total_count);
        }
        let mut rows = Vec::with_capacity(initial_capacity(progress.total));
        while let Some(batch) = export.next_batch(batch_size).await? {
            rows.extend(batch);
            progress.report(rows.len());
        }
        tracing::debug!(rows = rows.len(), "fetched every row from the export");
        Ok(rows)
    }
}

struct Progress {
    callback: Option<ProgressFn>,
    total: Option<u64>,
}

impl Progress {
    fn report(&mut self, fetched: usize) {
        if let Some(callback) = self.callback.as_mut() {
            let fetched = fetched as u64;
            callback(fetched, self.total.unwrap_or(fetched).max(fetched));
        }
    }
}

/// Room for at most 64 Ki rows up front: the count comes from the tool result and is not trusted with
/// a large allocation.
fn initial_capacity(total: Option<u64>) -> usize {
    usize::try_from(total.unwrap_or(0).min(1 << 16)).unwrap_or(0)
}

/// Every row from pages: the first alone (it tells the total), the planned rest `concurrency` at a
/// time in order, then any rows past the planned end (the data may have grown) one page at a time.
async fn all_pages(
    client: &DualResponseClient,
    url: &str,
    batch_size: usize,
    concurrency: usize,
    sort: Option<Sort>,
    mut progress: Progress,
) -> Result<Vec<Row>, ClientError> {
    let limit = page_limit(batch_size);
    let options = |offset: u64| FetchOptions {
        offset,
        limit: Some(limit),
        sort: sort.clone(),
    };
    let first = fetch_page(client, url, options(0)).await?;
    progress.total = progress.total.or(Some(first.total_count));
    let mut next = next_offset(&first, 0)?;
    let total = first.total_count;
    let first_len = first.returned_count;
    let mut rows = first.data;
    rows.reserve(initial_capacity(Some(first.total_count)));
    progress.report(rows.len());
    if let Some(start) = next {
        // Plan the remaining pages with the page size the server actually used (it may cap the limit).
        let step = first_len.max(1);
        let offsets: Vec<u64> = std::iter::successors(Some(start), |o| o.checked_add(step))
            .take_while(|o| *o < total)
            .collect();
        let planned = offsets.len();
        let last = offsets.last().copied();
        let mut pages = stream::iter(offsets)
            .map(|offset| fetch_page(client, url, options(offset)))
            .buffered(concurrency)
            .enumerate();
        while let Some((index, page)) = pages.next().await {
            let page = page?;
            if index + 1 == planned {
                // The last planned page decides whether more rows follow (the data may have grown).
                next = next_offset(&page, last.unwrap_or(start))?;
            }
            rows.extend(page.data);
            progress.report(rows.len());
        }
    }
    while let Some(offset) = next {
        let page = fetch_page(client, url, options(offset)).await?;
        next = next_offset(&page, offset)?;
        rows.extend(page.data);
        progress.report(rows.len());
    }
    tracing::debug!(rows = rows.len(), "fetched every row from pages");
    Ok(rows)
}
