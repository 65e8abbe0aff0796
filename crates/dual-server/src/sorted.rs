//! Sorted orders of snapshots: derived once per resource and sort key by scanning the snapshot,
//! kept in memory under a byte budget, least recently used evicted first.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use dual_core::{ResourceId, Sort, SortOrder};
use dual_spool::{Spool, SpoolError};
use serde_json::Value;

use crate::ServerError;

type Key = (ResourceId, String, SortOrder);

/// The cache of sorted orders (row indices into a snapshot), one per `(resource, field, order)`.
#[derive(Debug)]
pub(crate) struct SortCache {
    budget: u64,
    /// A std mutex: held only for map operations, never across an `.await`.
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    orders: HashMap<Key, (Arc<[u32]>, u64)>,
    bytes: u64,
    tick: u64,
}

impl SortCache {
    pub(crate) fn new(budget: u64) -> Self {
        Self {
            budget,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The order of the snapshot of `id` by `sort`: from the cache, else derived by one scan of the
    /// snapshot (two requests missing at once may both derive it; the result is the same).
    pub(crate) async fn order(
        &self,
        spool: &Spool,
        id: ResourceId,
        sort: &Sort,
    ) -> Result<Arc<[u32]>, ServerError> {
        let key = (id, sort.field.clone(), sort.order);
        {
            let mut state = self.lock();
            state.tick += 1;
            let tick = state.tick;
            if let Some((order, used)) = state.orders.get_mut(&key) {
                *used = tick;
                return Ok(Arc::clone(order));
            }
        }
        let order = derive(spool, id, sort).await?;
        self.insert(key, Arc::clone(&order));
        Ok(order)
    }

    fn insert(&self, key: Key, order: Arc<[u32]>) {
        let size = order.len() as u64 * 4;
        if size > self.budget {
            return;
        }
        let mut state = self.lock();
        state.tick += 1;
        let tick = state.tick;
        if let Some((old, _)) = state.orders.insert(key, (order, tick)) {
            state.bytes -= old.len() as u64 * 4;
        }
        state.bytes += size;
        while state.bytes > self.budget {
            let Some(oldest) = state
                .orders
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key.clone())
            else {
                break;
            };
            if let Some((old, _)) = state.orders.remove(&oldest) {
                state.bytes -= old.len() as u64 * 4;
            }
        }
    }

    /// Forgets every order of `id` (deleted or purged).
    pub(crate) fn forget(&self, id: ResourceId) {
        let mut state = self.lock();
        let mut freed = 0;
        state.orders.retain(|(of, _, _), (order, _)| {
            let keep = *of != id;
            if !keep {
                freed += order.len() as u64 * 4;
            }
            keep
        });
        state.bytes -= freed;
    }
}

/// Scans the snapshot once, extracting only the sort field of each row, and sorts the row indices
/// stably by it.
async fn derive(spool: &Spool, id: ResourceId, sort: &Sort) -> Result<Arc<[u32]>, ServerError> {
    let _sorting = crate::metrics::sorting();
    let mut cursor = spool.cursor(id, 0, None).await.map_err(ServerError::spool)?;
    let rows = cursor.manifest().rows();
    let too_many = || {
        ServerError::Spool(SpoolError::Corrupt {
            id,
            reason: "more than 2^32 rows cannot be sorted",
        })
    };
    let capacity = usize::try_from(rows).map_err(|_| too_many())?;
    let mut keys: Vec<(Value, u32)> = Vec::with_capacity(capacity);
    while let Some(run) = cursor.next().await.map_err(ServerError::spool)? {
        for bytes in run.iter() {
            let index = u32::try_from(keys.len()).map_err(|_| too_many())?;
            keys.push((field(&bytes, &sort.field), index));
        }
    }
    // Stable: ties keep snapshot order ascending; descending is the exact reverse (ties too).
    keys.sort_by(|(a, _), (b, _)| compare(a, b));
    if sort.order == SortOrder::Desc {
        keys.reverse();
    }
    tracing::debug!(%id, field = %dual_core::escape::log_safe(&sort.field), rows, "sorted order of a snapshot derived");
    Ok(keys.into_iter().map(|(_, index)| index).collect())
}

/// The value of `field` in an encoded row; `null` when absent or undecodable.
fn field(row: &[u8], field: &str) -> Value {
    serde_json::from_slice::<serde_json::Map<String, Value>>(row)
        .ok()
        .and_then(|mut map| map.remove(field))
        .unwrap_or(Value::Null)
}

/// The ascending order of sort keys, SQL's with nulls first (SQLite's `ORDER BY`): null, then
/// booleans (false first), numbers, strings (by code point), then arrays and objects by their JSON
/// text. Descending is the exact reverse of ascending: nulls last, ties in reverse snapshot order.
pub(crate) fn compare(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Number(_) => 2,
            Value::String(_) => 3,
            Value::Array(_) | Value::Object(_) => 4,
        }
    }
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
            (Some(x), Some(y), _, _) => x.cmp(&y),
            (_, _, Some(x), Some(y)) => x.cmp(&y),
            _ => {
                let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
                x.total_cmp(&y)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ if rank(a) != rank(b) => rank(a).cmp(&rank(b)),
        _ => a.to_string().cmp(&b.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_order_like_sql_with_nulls_first() {
        let mut values = vec![
            json!("b"),
            json!(10),
            json!(null),
            json!(2.5),
            json!(true),
            json!("a"),
            json!(u64::MAX),
            json!(-3),
        ];
        values.sort_by(compare);
        assert_eq!(
            values,
            [
                json!(null),
                json!(true),
                json!(-3),
                json!(2.5),
                json!(10),
                json!(u64::MAX),
                json!("a"),
                json!("b")
            ]
        );
    }
}
