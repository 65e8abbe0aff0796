//! `wait_ready`: polling a pending resource's metadata until its query has ended.

use std::time::Duration;

use dual_core::{metadata::ResourceMetadata, status::ResourceStatus};
use http::Method;
use time::OffsetDateTime;
use tokio::time::{Instant, sleep, timeout_at};
use tracing::Instrument;

use crate::client::DualResponseClient;
use crate::error::ClientError;
use crate::parsed::ParsedDualResponse;
use crate::progress::Callback;
use crate::retry::retry_after;
use crate::transport::Call;

/// How long [`wait_ready`](ParsedDualResponse::wait_ready) waits by default: 10 minutes, twice the
/// server's default query time limit (300 s), so a query the server gives up on ends as
/// `QUERY_FAILED` (`query_timeout`) before the client's wait does.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(600);

/// The default wait before the second poll of [`wait_ready`](ParsedDualResponse::wait_ready) (the
/// first is at once); it doubles after every poll up to [`DEFAULT_MAX_POLL_INTERVAL`].
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(250);

/// The default upper bound of the poll interval of [`wait_ready`](ParsedDualResponse::wait_ready).
pub const DEFAULT_MAX_POLL_INTERVAL: Duration = Duration::from_secs(5);

/// How [`ParsedDualResponse::wait_ready`] waits.
///
/// ```
/// use std::time::Duration;
/// use dual_client::WaitOptions;
///
/// let options = WaitOptions::new()
///     .timeout(Duration::from_secs(120))
///     .poll_interval(Duration::from_millis(500), Duration::from_secs(10))
///     .on_progress(|rows, elapsed| eprintln!("{rows} rows after {elapsed:?}"));
/// assert!(format!("{options:?}").contains("120s"));
/// ```
#[derive(Debug)]
pub struct WaitOptions {
    timeout: Duration,
    initial_interval: Duration,
    max_interval: Duration,
    on_progress: Callback<dyn FnMut(u64, Duration) + Send>,
}

impl Default for WaitOptions {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_WAIT_TIMEOUT,
            initial_interval: DEFAULT_POLL_INTERVAL,
            max_interval: DEFAULT_MAX_POLL_INTERVAL,
            on_progress: Callback::default(),
        }
    }
}

impl WaitOptions {
    /// Waits at most [`DEFAULT_WAIT_TIMEOUT`] (10 minutes), polling at once, then after 250 ms,
    /// doubling up to 5 s; no progress callback.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives up after `timeout` with a `TIMEOUT` error (default [`DEFAULT_WAIT_TIMEOUT`], 10 minutes).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The exponential backoff between polls: `initial` after the first poll, doubling up to `max`
    /// (defaults [`DEFAULT_POLL_INTERVAL`], 250 ms, and [`DEFAULT_MAX_POLL_INTERVAL`], 5 s). When the
    /// server sends a `Retry-After` with the metadata, the wait is at least that long.
    /// `initial` is at least 1 ms, and `max` at least `initial`.
    #[must_use]
    pub fn poll_interval(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_interval = initial.max(Duration::from_millis(1));
        self.max_interval = max.max(self.initial_interval);
        self
    }

    /// Called after every poll that finds the resource still pending, with the rows written so far
    /// and the time since the query started (as the server reports it; the time since the wait began
    /// from a server that does not).
    #[must_use]
    pub fn on_progress(mut self, callback: impl FnMut(u64, Duration) + Send + 'static) -> Self {
        self.on_progress = Callback(Some(Box::new(callback)));
        self
    }
}

impl ParsedDualResponse {
    /// Waits until the resource's query has ended, polling its metadata (`GET {url}`), and returns
    /// the metadata of the `ready` resource.
    ///
    /// A tool result whose query was still running when it was returned says `pending` (see
    /// [`status`](Self::status)): its `total_count` counts the rows so far, and pages and exports
    /// answer `NOT_READY` until the query ends. The first poll is at once; then the wait between polls
    /// starts at 250 ms and doubles up to 5 s (see [`WaitOptions::poll_interval`]), and is at least
    /// the `Retry-After` the server asks for. Every poll that finds the resource pending calls
    /// [`WaitOptions::on_progress`].
    ///
    /// Once ready, `status`, `total_count` (the final count), `columns`, `expires_at` and `name` are
    /// updated from the metadata; the sample stays as the tool result gave it (the first rows). An
    /// already ready resource costs one request.
    /// [`fetch_all`](Self::fetch_all) and [`fetch_stream`](Self::fetch_stream) wait by themselves;
    /// [`fetch`](Self::fetch) does not.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use dual_client::{DualResponseClient, FetchAllOptions, ResourceStatus, WaitOptions};
    ///
    /// # async fn run(tool_result: serde_json::Value) -> Result<(), dual_client::ClientError> {
    /// let mut parsed = DualResponseClient::new().parse_strict(&tool_result)?;
    /// if parsed.status() == ResourceStatus::Pending {
    ///     let metadata = parsed
    ///         .wait_ready(
    ///             WaitOptions::new()
    ///                 .timeout(Duration::from_secs(300))
    ///                 .on_progress(|rows, elapsed| eprintln!("{rows} rows so far ({elapsed:?})")),
    ///         )
    ///         .await?;
    ///     println!("ready: {} rows", metadata.total_count);
    /// }
    /// let rows = parsed.fetch_all(FetchAllOptions::new()).await?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// `QUERY_FAILED` once the metadata says `failed`, with the failure's code and whether running
    /// the query again may succeed ([`ClientError::failure`]); `TIMEOUT` when the resource is still
    /// pending after [`WaitOptions::timeout`] (a poll in flight then is abandoned); otherwise as
    /// [`metadata`](Self::metadata) (`RESOURCE_NOT_FOUND` when it was deleted meanwhile, …).
    pub async fn wait_ready(&mut self, options: WaitOptions) -> Result<ResourceMetadata, ClientError> {
        let span = tracing::debug_span!("dual_client.wait_ready", url = %self.url,
            timeout_ms = options.timeout.as_millis());
        let metadata = until_ready(&self.client, &self.url, options)
            .instrument(span)
            .await?;
        self.apply_metadata(&metadata);
        Ok(metadata)
    }
}

/// Polls the metadata of the resource at `url` until it is ready (see
/// [`ParsedDualResponse::wait_ready`]).
pub(crate) async fn until_ready(
    client: &DualResponseClient,
    url: &str,
    options: WaitOptions,
) -> Result<ResourceMetadata, ClientError> {
    let WaitOptions {
        timeout,
        initial_interval,
        max_interval,
        mut on_progress,
    } = options;
    let started = Instant::now();
    let mut rows_so_far = None;
    let polls = async {
        let mut interval = initial_interval;
        loop {
            let call = Call::new(Method::GET, url);
            let (metadata, headers) = client
                .json_and_headers::<ResourceMetadata>(&call, "metadata")
                .await?;
            match metadata.status {
                ResourceStatus::Ready => return Ok(metadata),
                ResourceStatus::Failed => return Err(ClientError::query_failed(metadata.error)),
                // Pending, or a status this version does not know: ask again.
                _ => {}
            }
            let (rows, elapsed) = match metadata.progress {
                Some(progress) => (progress.rows, Duration::from_millis(progress.elapsed_ms)),
                None => (metadata.total_count, started.elapsed()),
            };
            rows_so_far = Some(rows);
            if let Some(callback) = on_progress.0.as_mut() {
                callback(rows, elapsed);
            }
            let delay = retry_after(&headers, OffsetDateTime::now_utc())
                .map_or(interval, |at_least| at_least.max(interval));
            interval = interval.saturating_mul(2).min(max_interval);
            tracing::debug!(
                rows,
                delay_ms = delay.as_millis(),
                "the resource is still pending"
            );
            sleep(delay).await;
        }
    };
    let outcome = timeout_at(started + timeout, polls).await;
    outcome.unwrap_or_else(|_| {
        let so_far = rows_so_far.map_or_else(String::new, |rows| format!(" ({rows} rows so far)"));
        Err(ClientError::timeout(format!(
            "the resource's query was still running after {timeout:?}{so_far}"
        )))
    })
}
