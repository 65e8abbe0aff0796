//! `fetch_stream`: the result as a stream of row batches, one batch in memory at a time.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use dual_core::{Row, Sort, status::ResourceStatus};
use futures_core::Stream;
use tokio::time::Instant;
use tracing::Instrument;

use crate::client::DualResponseClient;
use crate::error::ClientError;
use crate::export::{self, Export};
use crate::fetch_all::{DEFAULT_BATCH_SIZE, next_offset, page_limit};
use crate::parsed::{FetchOptions, ParsedDualResponse, explain_failure, fetch_page};
use crate::wait::{self, DEFAULT_WAIT_TIMEOUT, WaitOptions};

/// How [`ParsedDualResponse::fetch_stream`] fetches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchStreamOptions {
    /// Rows per batch (default 500; at least 1). When paging, also the page size, at most 10,000.
    pub batch_size: usize,
    /// Sorts the result by a column (the server re-executes the query with it).
    pub sort: Option<Sort>,
    /// How long to wait for a pending resource's query to end, from the first poll of the stream
    /// (default [`DEFAULT_WAIT_TIMEOUT`], 10 minutes); see
    /// [`FetchAllOptions::wait_timeout`](crate::FetchAllOptions::wait_timeout).
    pub wait_timeout: Duration,
}

impl Default for FetchStreamOptions {
    fn default() -> Self {
        Self::new(DEFAULT_BATCH_SIZE)
    }
}

impl FetchStreamOptions {
    /// Batches of `batch_size` rows, unsorted, waiting at most 10 minutes for a pending resource.
    #[must_use]
    pub fn new(batch_size: usize) -> Self {
        Self {
            batch_size,
            sort: None,
            wait_timeout: DEFAULT_WAIT_TIMEOUT,
        }
    }

    /// Sets the sort.
    #[must_use]
    pub fn sort(mut self, sort: Sort) -> Self {
        self.sort = Some(sort);
        self
    }

    /// Sets the wait timeout for a pending resource.
    #[must_use]
    pub fn wait_timeout(mut self, timeout: Duration) -> Self {
        self.wait_timeout = timeout;
        self
    }
}

/// The stream [`ParsedDualResponse::fetch_stream`] returns: batches of at most `batch_size` rows, in
/// order, ending after the last row or after the first error.
///
/// Nothing is fetched until it is polled, and nothing is read ahead of the consumer: memory holds one
/// batch and one chunk of undecoded body. It owns what it needs, so it can outlive the
/// [`ParsedDualResponse`] and move to another task.
#[must_use = "streams do nothing unless polled"]
pub struct RowBatches {
    inner: Pin<Box<dyn Stream<Item = Result<Vec<Row>, ClientError>> + Send>>,
}

impl fmt::Debug for RowBatches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RowBatches").finish_non_exhaustive()
    }
}

impl Stream for RowBatches {
    type Item = Result<Vec<Row>, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

struct Target {
    client: DualResponseClient,
    url: Arc<str>,
    batch_size: usize,
    sort: Option<Sort>,
    /// The tool result's `total_count` (or the ready metadata's), checked against the rows the export
    /// sent.
    expected: Option<u64>,
    /// Whether to wait for the resource to be ready (and learn its count) before the first request.
    wait_first: bool,
    wait_timeout: Duration,
    /// Until when a request answered `not_ready` is asked again; set by the first poll.
    ready_by: Option<Instant>,
    span: tracing::Span,
}

enum State {
    Start(Target),
    /// Reading the export; the rows it has sent so far.
    Export(Target, Export, u64),
    Pages(Target, u64),
    Done,
}

impl ParsedDualResponse {
    /// Streams the result in batches of `options.batch_size` rows, with memory bounded by one batch.
    ///
    /// Reads the streamed export (`GET {url}/data`, NDJSON, one request) when the server has one, else
    /// pages of `batch_size` rows one after the other. Nothing is read ahead of the consumer, so memory
    /// holds at most one batch of rows, one chunk of undecoded body and one partial line, whatever the
    /// size of the result. The stream ends after the first error it yields.
    ///
    /// A resource whose query is still running ([`status`](Self::status) `pending`), or of unknown
    /// count (a lone `resource_link`), is first waited for as [`wait_ready`](Self::wait_ready) does,
    /// for at most [`wait_timeout`](FetchStreamOptions::wait_timeout) from the first poll; a request
    /// answered `not_ready` all the same is asked again after its `Retry-After` within that timeout.
    /// A failed query ends the stream with `QUERY_FAILED`, one still running after the wait with
    /// `TIMEOUT`.
    ///
    /// When the count is known (from the tool result, or the metadata of the ready resource), an
    /// export that ends with fewer or more rows ends the stream with a `FETCH_ERROR` saying how many
    /// were expected and how many came (never a silently partial result).
    ///
    /// ```no_run
    /// use dual_client::{DualResponseClient, FetchStreamOptions};
    /// use futures_util::TryStreamExt;
    ///
    /// # async fn run(tool_result: serde_json::Value) -> Result<(), dual_client::ClientError> {
    /// let parsed = DualResponseClient::new().parse_strict(&tool_result)?;
    /// let mut batches = parsed.fetch_stream(FetchStreamOptions::new(1000));
    /// while let Some(batch) = batches.try_next().await? {
    ///     println!("{} rows", batch.len());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn fetch_stream(&self, options: FetchStreamOptions) -> RowBatches {
        let span = tracing::debug_span!("dual_client.fetch_stream", url = %self.url,
            batch_size = options.batch_size, sort = options.sort.as_ref().map(tracing::field::display));
        let target = Target {
            client: self.client.clone(),
            url: Arc::clone(&self.url),
            batch_size: options.batch_size.max(1),
            sort: options.sort,
            expected: self.total_count(),
            wait_first: self.status() != ResourceStatus::Ready || self.total_count().is_none(),
            wait_timeout: options.wait_timeout,
            ready_by: None,
            span,
        };
        let stream = futures_util::stream::unfold(State::Start(target), |state| async move {
            let span = match &state {
                State::Start(t) | State::Export(t, _, _) | State::Pages(t, _) => t.span.clone(),
                State::Done => return None,
            };
            step(state).instrument(span).await
        });
        RowBatches {
            inner: Box::pin(stream),
        }
    }
}

async fn step(mut state: State) -> Option<(Result<Vec<Row>, ClientError>, State)> {
    loop {
        state = match state {
            State::Done => return None,
            State::Start(mut target) => {
                let ready_by = Instant::now() + target.wait_timeout;
                target.ready_by = Some(ready_by);
                if target.wait_first {
                    let options = WaitOptions::new().timeout(target.wait_timeout);
                    match wait::until_ready(&target.client, &target.url, options).await {
                        Err(error) => return Some((Err(error), State::Done)),
                        Ok(metadata) => target.expected = Some(metadata.total_count),
                    }
                }
                let opened =
                    export::open(&target.client, &target.url, target.sort.as_ref(), Some(ready_by)).await;
                match opened {
                    Err(error) => return Some((Err(target.explain(error).await), State::Done)),
                    Ok(Some(export)) => State::Export(target, export, 0),
                    Ok(None) => State::Pages(target, 0),
                }
            }
            State::Export(target, mut export, sent) => {
                return match export.next_batch(target.batch_size).await {
                    Err(error) => Some((Err(error), State::Done)),
                    Ok(None) => match target.expected {
                        Some(expected) if expected != sent => {
                            let what = if sent < expected { "fewer" } else { "more" };
                            let error = ClientError::fetch(format!(
                                "the export sent {what} rows than total_count: expected {expected}, got {sent}"
                            ));
                            Some((Err(error), State::Done))
                        }
                        _ => None,
                    },
                    Ok(Some(rows)) => {
                        let sent = sent + rows.len() as u64;
                        Some((Ok(rows), State::Export(target, export, sent)))
                    }
                };
            }
            State::Pages(target, offset) => {
                let options = FetchOptions {
                    offset,
                    limit: Some(page_limit(target.batch_size)),
                    sort: target.sort.clone(),
                };
                let page = fetch_page(&target.client, &target.url, options, target.ready_by).await;
                let page = match page {
                    Ok(page) => page,
                    Err(error) => return Some((Err(target.explain(error).await), State::Done)),
                };
                let next = match next_offset(&page, offset) {
                    Ok(next) => next,
                    Err(error) => return Some((Err(error), State::Done)),
                };
                let state = match next {
                    Some(next) => State::Pages(target, next),
                    None => State::Done,
                };
                if page.data.is_empty() {
                    state
                } else {
                    return Some((Ok(page.data), state));
                }
            }
        };
    }
}

impl Target {
    /// The error, with the failure the metadata reports when it is `QUERY_FAILED`.
    async fn explain(&self, error: ClientError) -> ClientError {
        explain_failure(&self.client, &self.url, error).await
    }
}
