//! Live resources' queries, and the time limit every query runs under: the count and sample a live
//! resource is created with (docs/DESIGN.md §3).

use std::sync::Arc;
use std::time::Duration;

use dual_core::Row;
use serde_json::Value;

use crate::{LiveQuery, QueryExecutor, RowWindow, ServerError};

/// Runs `future` under the query time limit: past it, the future is dropped (and with it the
/// executor's work) and the result is `QUERY_TIMEOUT`.
pub(crate) async fn time_limited<T>(
    limit: Duration,
    future: impl Future<Output = Result<T, ServerError>>,
) -> Result<T, ServerError> {
    let _running = crate::metrics::query_running();
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or(Err(ServerError::QueryTimeout { limit }))
}

/// The executor's live paging, or the error of a live resource it cannot serve.
pub(crate) fn live_paging(executor: &Arc<dyn QueryExecutor>) -> Result<&dyn LiveQuery, ServerError> {
    executor
        .live()
        .ok_or_else(|| ServerError::query_failed(crate::executor::no_live_paging()))
}

/// Runs `count` and the fetch of the first `sample_size` rows concurrently, under the time limit.
pub(crate) async fn count_and_sample(
    executor: &Arc<dyn QueryExecutor>,
    params: &Value,
    sample_size: u64,
    limit: Duration,
) -> Result<(u64, Vec<Row>), ServerError> {
    let live = live_paging(executor)?;
    time_limited(limit, async {
        let (count, sample) = tokio::join!(
            live.count(params),
            live.fetch(params, RowWindow::new(0, sample_size))
        );
        Ok((
            count.map_err(ServerError::count_failed)?,
            sample.map_err(ServerError::query_failed)?,
        ))
    })
    .await
}
