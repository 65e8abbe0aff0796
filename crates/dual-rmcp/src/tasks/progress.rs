//! `notifications/progress` for a tool call whose request carried a progress token.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext, RoleServer};

/// Sends `notifications/progress` for one request: the rows a query has written so far.
///
/// ```no_run
/// # async fn handler(context: rmcp::service::RequestContext<rmcp::service::RoleServer>) {
/// if let Some(progress) = dual_rmcp::tasks::ProgressReporter::from_context(&context) {
///     progress.rows(1_000).await;
/// }
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ProgressReporter {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl ProgressReporter {
    /// A reporter sending to `peer` under `token`.
    #[must_use]
    pub fn new(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        Self { peer, token }
    }

    /// The reporter of a request, if its `_meta` carries a `progressToken`; `None` when the client
    /// asked for no progress.
    #[must_use]
    pub fn from_context(context: &RequestContext<RoleServer>) -> Option<Self> {
        context
            .meta
            .get_progress_token()
            .map(|token| Self::new(context.peer.clone(), token))
    }

    /// The request's progress token.
    #[must_use]
    pub fn token(&self) -> &ProgressToken {
        &self.token
    }

    /// Sends `progress: rows` with the message "N rows so far". The protocol wants `progress` to
    /// grow with every notification: report only growing counts (as
    /// [`wait_for_result`](crate::wait::wait_for_result) does). A failure to send (the client went away)
    /// is logged, not returned: progress is advisory.
    pub async fn rows(&self, rows: u64) {
        // Row counts stay far below 2^53, where f64 is exact.
        let progress = rows as f64;
        let param = ProgressNotificationParam::new(self.token.clone(), progress)
            .with_message(format!("{rows} rows so far"));
        if let Err(error) = self.peer.notify_progress(param).await {
            tracing::debug!(error = %dual_core::escape::log_safe(&error.to_string()), "progress notification not sent");
        }
    }
}
