//! Waiting for a pending resource (docs/DESIGN.md §8) to become ready or failed (feature
//! `server`): [`wait_for_result`], as [`WaitOptions`] asks, and [`WaitError`] when it does not.

use std::future::Future;
use std::time::Duration;

use dual_core::{
    DualResponse,
    status::{FailureCode, QueryFailure, ResourceStatus},
};
use dual_server::{Caller, DualResponseServer};
use rmcp::model::CallToolResult;

use crate::tool_result::{ErrorResultOptions, failure_result, server_error_result};

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
    /// cut as `options` asks (the server's `max_error_text_bytes`, say).
    #[must_use]
    pub fn tool_result(&self, options: &ErrorResultOptions) -> CallToolResult {
        match self {
            Self::Failed { failure } => failure_result(failure, options),
            Self::TimedOut { .. } => failure_result(
                &QueryFailure::new(FailureCode::QueryTimeout, "no result in time"),
                options,
            ),
            Self::Server(error) => server_error_result(error.server_error(), options),
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
/// [`ProgressReporter`](crate::tasks::ProgressReporter), or update a task's status message. A response that
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
            ResourceStatus::Ready => return Ok(server.response_of(record).await),
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
