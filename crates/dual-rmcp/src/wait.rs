//! Waiting for a pending resource (docs/DESIGN.md §8) to become ready or failed.

use std::future::Future;
use std::time::Duration;

use dual_core::{
    DualResponse,
    status::{FailureCode, QueryFailure, ResourceStatus},
};
use dual_server::{Caller, DualResponseServer};
use rmcp::model::CallToolResult;

mod read_failed;

pub use read_failed::ReadFailed;

/// How often [`wait_for_result`] reads the resource by default.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(250);

/// How [`wait_for_result`] waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WaitOptions {
    /// Time between two reads of the resource.
    pub poll_interval: Duration,
    /// The longest to wait; `None` (the default) waits the server's `query_time_limit` plus its
    /// `query_lease` and 5 s: by then the query has ended, or its resource reads as failed.
    pub timeout: Option<Duration>,
}

impl Default for WaitOptions {
    fn default() -> Self {
        Self {
            poll_interval: DEFAULT_POLL_INTERVAL,
            timeout: None,
        }
    }
}

impl WaitOptions {
    /// Reads the resource every `interval`.
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// Gives up after `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The timeout in effect for `server`.
    #[must_use]
    pub fn timeout_for(&self, server: &DualResponseServer) -> Duration {
        self.timeout.unwrap_or_else(|| {
            let config = server.config();
            config.query_time_limit + config.query_lease + Duration::from_secs(5)
        })
    }
}

/// Why [`wait_for_result`] returned no ready response.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// The query failed; the failure's message is for the model only.
    #[error("the query failed ({}): {}", failure.code, failure.message)]
    Failed {
        /// The code and message.
        failure: QueryFailure,
    },
    /// The resource was still pending when the wait timed out.
    #[error("the query was still running after {} s", waited.as_secs_f64())]
    TimedOut {
        /// How long it waited.
        waited: Duration,
    },
    /// Reading the resource failed: deleted (a cancel) or expired meanwhile, or the store failed.
    /// `Display` is `reading the resource failed`; the server's error is the source.
    #[error(transparent)]
    Server(ReadFailed),
}

impl WaitError {
    /// The `isError: true` tool result that tells the model what happened and what to do, its text
    /// cut to the default error-text cap.
    #[must_use]
    pub fn tool_result(&self) -> CallToolResult {
        self.tool_result_within(dual_core::budget::DEFAULT_MAX_ERROR_TEXT_BYTES)
    }

    /// [`WaitError::tool_result`] with its text cut to `max_bytes` (the server's
    /// `max_error_text_bytes`).
    #[must_use]
    pub fn tool_result_within(&self, max_bytes: usize) -> CallToolResult {
        match self {
            Self::Failed { failure } => crate::failure_result_within(failure, max_bytes),
            Self::TimedOut { .. } => crate::failure_result_within(
                &QueryFailure::new(FailureCode::QueryTimeout, "no result in time"),
                max_bytes,
            ),
            Self::Server(error) => crate::server_error_result_within(error.server_error(), max_bytes),
        }
    }
}

/// Waits until the resource of `response` is no longer pending and returns it ready. When this
/// instance runs the query, its progress is followed in memory
/// ([`DualResponseServer::run_progress`]) and the record read once more when the outcome is stored;
/// otherwise the record is read with [`DualResponseServer::get_resource`] every
/// [`WaitOptions::poll_interval`].
///
/// `on_progress` is awaited with the rows written so far whenever that number grew (and once at the
/// first read), so what it reports only ever increases: send `notifications/progress` from it with
/// [`ProgressReporter`](crate::ProgressReporter), or update a task's status message. A response that
/// is not pending is returned as it is, without a read.
///
/// # Errors
/// [`WaitError::Failed`] with the failure once the resource failed, [`WaitError::TimedOut`] when it is
/// still pending after the timeout (the query goes on), [`WaitError::Server`] when it cannot be read
/// (deleted, expired, another owner, the store down).
pub async fn wait_for_result<F, Fut>(
    server: &DualResponseServer,
    caller: &Caller,
    response: DualResponse,
    options: &WaitOptions,
    mut on_progress: F,
) -> Result<DualResponse, WaitError>
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = ()>,
{
    if response.status != ResourceStatus::Pending {
        return Ok(response);
    }
    let started = tokio::time::Instant::now();
    let timeout = options.timeout_for(server);
    let mut reported: Option<u64> = None;
    loop {
        let record = server
            .get_resource(response.id, caller)
            .await
            .map_err(|error| WaitError::Server(ReadFailed::new(error)))?;
        match record.status {
            ResourceStatus::Ready => {
                let config = server.config();
                return Ok(DualResponse::from_record(
                    record,
                    &config.uri_scheme,
                    &config.base_url,
                ));
            }
            ResourceStatus::Failed => {
                let failure = record.failure.unwrap_or_else(|| {
                    QueryFailure::new(FailureCode::QueryExecutionFailed, "the query failed")
                });
                return Err(WaitError::Failed { failure });
            }
            _ => {
                if reported.is_none_or(|rows| record.total_count > rows) {
                    reported = Some(record.total_count);
                    on_progress(record.total_count).await;
                }
            }
        }
        // While this instance runs the query, its progress comes from memory as it happens; the
        // store is read again once the outcome is stored there (or when the query runs elsewhere).
        let mut local = false;
        loop {
            let waited = started.elapsed();
            if waited >= timeout {
                return Err(WaitError::TimedOut { waited });
            }
            let rows = reported.unwrap_or_default();
            match server.run_progress(response.id, rows, timeout - waited).await {
                Some(now) => {
                    local = true;
                    if now > rows {
                        reported = Some(now);
                        on_progress(now).await;
                    }
                }
                None => break,
            }
        }
        if !local {
            let waited = started.elapsed();
            tokio::time::sleep(options.poll_interval.min(timeout.saturating_sub(waited))).await;
        }
    }
}

#[cfg(test)]
mod tests;
