//! The stream of [`Numbers`]: batches computed one at a time, or released step by step through the
//! gate.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use dual_core::{Row, Sort};
use dual_server::{ExecutorError, QueryStart, RowStream};
use serde_json::Value;

use super::{COUNT_FAILURE, GATED_FAILURE, Numbers, SECRET, flag, rows};

/// Counts a live stream of an executor down again when the stream is dropped.
#[derive(Debug)]
struct Alive(Arc<AtomicU64>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Where a computed stream stands.
struct Computed {
    me: Arc<Numbers>,
    _alive: Alive,
    n: u64,
    next: u64,
    sort: Option<Sort>,
    /// All rows, sorted, for a sort by another column than `id` (computed with the first batch).
    sorted: Option<Vec<Row>>,
}

/// The rows in the order of `sort`; `start` is signalled at once (with the total when counted).
pub(super) fn stream(me: Arc<Numbers>, params: Value, sort: Option<Sort>, start: QueryStart) -> RowStream {
    me.alive.fetch_add(1, Ordering::SeqCst);
    let alive = Alive(Arc::clone(&me.alive));
    let n = if me.counted && flag(&params, "fail_count") {
        Err(ExecutorError::new(COUNT_FAILURE))
    } else {
        me.total(&params)
    };
    match (&n, me.counted) {
        (Ok(n), true) => start.started_with_count(*n),
        _ => start.started(),
    }
    if let Some(steps) = me.steps.clone() {
        return gated(me, alive, steps);
    }
    if flag(&params, "busy_after_sample") {
        return Box::pin(futures_util::stream::iter([Err(super::busy_export())]));
    }
    let n = match n {
        Ok(n) => n,
        Err(error) => return Box::pin(futures_util::stream::iter([Err(error)])),
    };
    let batch = params["batch"].as_u64().map_or(me.batch, |b| b.max(1));
    let fail = flag(&params, "fail");
    let fail_at = params["fail_stream_at"].as_u64();
    let state = Computed {
        me,
        _alive: alive,
        n,
        next: 0,
        sort,
        sorted: None,
    };
    Box::pin(futures_util::stream::unfold(
        Some(state),
        move |state| async move {
            let mut state = state?;
            let start = state.next;
            if fail || fail_at.is_some_and(|k| start >= k) {
                state.me.fetches.fetch_add(1, Ordering::SeqCst);
                return Some((Err(ExecutorError::new(SECRET)), None));
            }
            if start >= state.n {
                return None;
            }
            state.me.fetches.fetch_add(1, Ordering::SeqCst);
            let end = state
                .n
                .min(start.saturating_add(batch))
                .min(fail_at.unwrap_or(u64::MAX));
            let rows = match &state.sort {
                Some(sort) if sort.field != "id" => {
                    let all = state
                        .sorted
                        .get_or_insert_with(|| rows::sorted(state.n, state.me.row, sort));
                    let range = usize::try_from(start).unwrap_or(usize::MAX)
                        ..usize::try_from(end).unwrap_or(usize::MAX);
                    all.get(range).unwrap_or_default().to_vec()
                }
                sort => state.me.rows(state.n, start, end, sort.as_ref()),
            };
            state.next = end;
            Some((Ok(rows.into()), Some(state)))
        },
    ))
}

/// `steps[0]` rows at once, each further step after one opening of the gate; with `then_fail`, one
/// more opening, then [`GATED_FAILURE`].
fn gated(me: Arc<Numbers>, alive: Alive, steps: Vec<u64>) -> RowStream {
    Box::pin(futures_util::stream::unfold(
        (0usize, 0u64, me, alive),
        move |(step, offset, me, alive)| {
            let n = steps.get(step).copied();
            async move {
                if step > 0 && (n.is_some() || (step == me.steps_len() && me.then_fail)) {
                    me.gate.acquire().await.ok()?.forget();
                }
                match n {
                    Some(n) => {
                        let rows: Vec<Row> = (offset..offset + n).map(me.row).collect();
                        Some((Ok(rows.into()), (step + 1, offset + n, me, alive)))
                    }
                    None if step == me.steps_len() && me.then_fail => {
                        let error = ExecutorError::new(GATED_FAILURE);
                        Some((Err(error), (step + 1, offset, me, alive)))
                    }
                    None => None,
                }
            }
        },
    ))
}

impl Numbers {
    fn steps_len(&self) -> usize {
        self.steps.as_ref().map_or(0, Vec::len)
    }
}
