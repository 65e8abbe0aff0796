//! The suite's fixtures: an in-memory executor with failure switches and an authorization hook mapping `Authorization: Bearer <owner>` to the owner.

use std::fmt;
use std::sync::Arc;

use dual_core::{Row, Sort};
use dual_server::QueryExecutor;
use http::request::Parts;
use serde_json::{Value, json};

use dual_http::Authorize;

use crate::executor::Numbers;

/// What the executor says when it fails: text that must never reach a client.
pub(crate) const EXECUTOR_SECRET: &str = crate::executor::SECRET;
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

/// The rows `0..n` sorted as `sort` asks, as the suite's executor returns them.
pub(crate) fn sorted_rows(n: u64, sort: Option<&Sort>) -> Vec<Row> {
    match sort {
        Some(sort) => crate::executor::sorted(n, row, sort),
        None => (0..n).map(row).collect(),
    }
}

/// Kind `rows`: [`Numbers`] over [`row`], with its failure switches (params `{"n": rows,
/// "fail_fetch_over": k, "fail_stream_at": k, "batch": b}`).
pub(crate) fn executor() -> Arc<dyn QueryExecutor> {
    Arc::new(Numbers::new().row(row))
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
