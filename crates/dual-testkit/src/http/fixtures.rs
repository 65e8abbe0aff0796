//! The suite's fixtures: an in-memory executor with failure switches and an authorization hook mapping `Authorization: Bearer <owner>` to the owner.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use dual_core::{Row, Sort, SortOrder};
use dual_server::{ExecutorError, QueryExecutor, RowStream};
use http::request::Parts;
use serde_json::{Value, json};

use dual_http::Authorize;

/// What the executor says when it fails: text that must never reach a client.
pub(crate) const EXECUTOR_SECRET: &str = "SELECT secret_column FROM internal_table -- syntax error";
/// What the broken store says: an address that must never reach a client.
pub(crate) const STORE_SECRET: &str = "redis://10.1.2.3:6379 connection refused";

/// Row `i` of every suite resource: an integer, a string needing CSV quoting, a boolean, nested JSON
/// and a sometimes-null string.
pub(crate) fn row(i: u64) -> Row {
    let note = match i % 4 {
        0 => Value::Null,
        1 => json!("plain"),
        2 => json!("comma, \"quote\"\r\nand newline"),
        _ => json!(""),
    };
    let value = json!({
        "id": i,
        "name": format!("Row {i}"),
        "score": (i * 7919) % 1000,
        "active": i.is_multiple_of(2),
        "tags": ["t", i % 3],
        "note": note,
    });
    value.as_object().cloned().unwrap_or_default()
}

/// The rows `0..n` sorted as `sort` asks (by the value's JSON order for numbers, text otherwise; ties
/// by id, so the order is total).
pub(crate) fn sorted_rows(n: u64, sort: Option<&Sort>) -> Vec<Row> {
    let mut rows: Vec<Row> = (0..n).map(row).collect();
    if let Some(sort) = sort {
        rows.sort_by(|a, b| {
            let key = |r: &Row| r.get(&sort.field).cloned().unwrap_or(Value::Null);
            let ord = match (key(a), key(b)) {
                (Value::Number(x), Value::Number(y)) => x
                    .as_f64()
                    .unwrap_or_default()
                    .total_cmp(&y.as_f64().unwrap_or_default()),
                (x, y) => x.to_string().cmp(&y.to_string()),
            };
            let ord = ord.then_with(|| a["id"].as_u64().cmp(&b["id"].as_u64()));
            if sort.order == SortOrder::Desc {
                ord.reverse()
            } else {
                ord
            }
        });
    }
    rows
}

/// Kind `rows`: params `{"n": rows, "fail_fetch_over": k, "fail_stream_at": k, "batch": b}`. `fetch`
/// fails when asked for rows beyond `fail_fetch_over`; the export stream yields `batch`-row batches
/// (default 1000) and fails once it reaches `fail_stream_at`.
#[derive(Debug, Default)]
pub(crate) struct SuiteExecutor;

fn param(params: &Value, name: &str) -> Option<u64> {
    params.get(name).and_then(Value::as_u64)
}

#[async_trait]
impl QueryExecutor for SuiteExecutor {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        param(params, "n").ok_or_else(|| ExecutorError::new("`n` is required"))
    }

    async fn fetch(
        &self,
        params: &Value,
        offset: u64,
        limit: u64,
        sort: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError> {
        let n = self.count(params).await?;
        if param(params, "fail_fetch_over").is_some_and(|k| offset.saturating_add(limit) > k) {
            return Err(ExecutorError::new(EXECUTOR_SECRET));
        }
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        let take = usize::try_from(limit).unwrap_or(usize::MAX);
        Ok(sorted_rows(n, sort).into_iter().skip(skip).take(take).collect())
    }

    fn stream(self: Arc<Self>, params: Value, sort: Option<Sort>) -> RowStream {
        let n = param(&params, "n").unwrap_or(0);
        let batch = param(&params, "batch").unwrap_or(1000).max(1);
        let fail_at = param(&params, "fail_stream_at");
        let rows = sorted_rows(n, sort.as_ref());
        let mut batches: Vec<Result<Vec<Row>, ExecutorError>> = Vec::new();
        let mut start = 0u64;
        loop {
            if fail_at.is_some_and(|k| start >= k) {
                batches.push(Err(ExecutorError::new(EXECUTOR_SECRET)));
                break;
            }
            if start >= n {
                break;
            }
            let end = n
                .min(start.saturating_add(batch))
                .min(fail_at.unwrap_or(u64::MAX));
            let range =
                usize::try_from(start).unwrap_or(usize::MAX)..usize::try_from(end).unwrap_or(usize::MAX);
            batches.push(Ok(rows.get(range).unwrap_or_default().to_vec()));
            start = end;
        }
        Box::pin(futures_util::stream::iter(batches))
    }
}

/// `Authorization: Bearer <owner>` → owner (the suite's stand-in for real authentication).
pub(crate) struct BearerIsOwner;

impl fmt::Debug for BearerIsOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerIsOwner")
    }
}

impl Authorize for BearerIsOwner {
    fn caller(&self, parts: &Parts) -> dual_server::Caller {
        dual_server::Caller::from_owner(
            parts
                .headers
                .get(http::header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.strip_prefix("Bearer ")),
        )
    }
}
