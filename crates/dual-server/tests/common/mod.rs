//! Shared fixtures: an in-memory executor over generated rows.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dual_core::{Row, Sort, SortOrder};
use dual_server::{ExecutorError, QueryExecutor};
use serde_json::{Value, json};

/// Rows `{id, name, enrollment, public}` for `0..n` (`params.n`); `params.fail` makes `fetch` fail,
/// `params.fail_count` makes `count` fail.
#[derive(Debug, Default)]
pub struct Institutions {
    pub fetches: AtomicUsize,
}

pub fn row(i: u64) -> Row {
    json!({"id": i, "name": format!("College {i}"), "enrollment": (i * 7919) % 1000, "public": i.is_multiple_of(2)})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn n(params: &Value) -> Result<u64, ExecutorError> {
    params["n"]
        .as_u64()
        .ok_or_else(|| ExecutorError::new("`n` must be a non-negative integer"))
}

#[async_trait::async_trait]
impl QueryExecutor for Institutions {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        if params["fail_count"].as_bool() == Some(true) {
            return Err(ExecutorError::new("no such table: institutionz"));
        }
        n(params)
    }

    async fn fetch(
        &self,
        params: &Value,
        offset: u64,
        limit: u64,
        sort: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError> {
        self.fetches.fetch_add(1, Ordering::Relaxed);
        if params["fail"].as_bool() == Some(true) {
            return Err(ExecutorError::new("near \"SELEC\": syntax error"));
        }
        let n = n(params)?;
        let mut rows: Vec<Row> = (0..n).map(row).collect();
        if let Some(sort) = sort {
            rows.sort_by(|a, b| {
                let ord = a[&sort.field].to_string().cmp(&b[&sort.field].to_string());
                let key = |r: &Row| r[&sort.field].as_u64();
                let ord = match (key(a), key(b)) {
                    (Some(x), Some(y)) => x.cmp(&y),
                    _ => ord,
                };
                if sort.order == SortOrder::Desc {
                    ord.reverse()
                } else {
                    ord
                }
            });
        }
        Ok(rows
            .into_iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .collect())
    }
}

pub fn shared() -> Arc<Institutions> {
    Arc::new(Institutions::default())
}
