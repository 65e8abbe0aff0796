//! The sort cache's bounds: slots, the wait, the working-memory budget, the size refusal, and
//! cached orders served without a derivation.

use std::time::Duration;

use dual_core::page::SortLimit;
use dual_core::{ResourceId, Sort, SortOrder};
use dual_spool::{MemorySpool, Spool};
use serde_json::json;

use super::{SORT_RETRY_AFTER, SortCache};
use crate::config::SortLimits;
use crate::{ServerError, ServerErrorCode};

const ROWS: u64 = 1_000;
/// Each row's `name` is 100 bytes.
const NAME_BYTES: u64 = 100;

async fn snapshot(spool: &Spool) -> ResourceId {
    let id = ResourceId::new();
    let mut writer = spool.writer(id).await.expect("writer");
    for i in 0..ROWS {
        let name = format!("{:0>100}", (i * 7919) % ROWS);
        let row =
            serde_json::to_vec(&json!({ "id": i, "name": name, "pad": "x".repeat(50) })).expect("encode");
        writer.append(&row).await.expect("append");
    }
    writer.finish().await.expect("finish");
    id
}

fn spool() -> Spool {
    Spool::new(MemorySpool::new().expect("memory spool"))
}

fn by(field: &str, order: SortOrder) -> Sort {
    Sort {
        field: field.to_owned(),
        order,
    }
}

/// A snapshot on a fresh spool, and a cache of one slot that waits for none.
async fn one_slot() -> (Spool, ResourceId, SortCache) {
    let spool = spool();
    let id = snapshot(&spool).await;
    (
        spool,
        id,
        SortCache::new(1 << 20, limits(1, Duration::ZERO, 1 << 20)),
    )
}

fn limits(concurrency: usize, wait: Duration, memory_bytes: u64) -> SortLimits {
    SortLimits {
        concurrency,
        wait,
        memory_bytes,
        ..SortLimits::default()
    }
}

fn sort_too_large(error: &ServerError) -> Option<SortLimit> {
    match error {
        ServerError::InvalidRequest(request) => request.sort_limit(),
        _ => None,
    }
}

#[tokio::test]
async fn derives_a_stable_order_and_gives_its_memory_back() {
    let spool = spool();
    let id = snapshot(&spool).await;
    let cache = SortCache::new(1 << 20, SortLimits::default());
    let order = cache
        .order(&spool, id, &by("name", SortOrder::Asc))
        .await
        .expect("order");
    assert_eq!(order.len() as u64, ROWS);
    // 7919 is prime to 1000: the names are a permutation of 0..1000.
    assert_eq!(order[0], 0);
    assert_eq!((order[1] as u64 * 7919) % ROWS, 1);
    let desc = cache
        .order(&spool, id, &by("name", SortOrder::Desc))
        .await
        .expect("order");
    assert!(order.iter().rev().eq(desc.iter()));
    assert_eq!(cache.memory.used(), 0, "every reservation is given back");
    assert_eq!(cache.slots.available_permits(), 1 + 1, "every slot is given back");
}

#[tokio::test]
async fn a_cached_order_is_served_without_a_slot_or_the_snapshot() {
    let (spool, id, cache) = one_slot().await;
    let sort = by("name", SortOrder::Asc);
    let first = cache.order(&spool, id, &sort).await.expect("order");
    // No slot free and the snapshot gone: a derivation could neither start nor read.
    let _held = cache.slots.clone().acquire_owned().await.expect("slot");
    spool.delete(id).await.expect("delete");
    let again = cache.order(&spool, id, &sort).await.expect("cached");
    assert!(std::sync::Arc::ptr_eq(&first, &again));
}

#[tokio::test(start_paused = true)]
async fn a_sort_waits_for_a_slot_then_is_overloaded() {
    let spool = spool();
    let id = snapshot(&spool).await;
    let wait = Duration::from_secs(3);
    let cache = SortCache::new(1 << 20, limits(2, wait, 1 << 20));
    let held = [
        cache.slots.clone().acquire_owned().await.expect("slot"),
        cache.slots.clone().acquire_owned().await.expect("slot"),
    ];
    let started = tokio::time::Instant::now();
    let error = cache
        .order(&spool, id, &by("name", SortOrder::Asc))
        .await
        .expect_err("no slot");
    assert_eq!(started.elapsed(), wait, "refused after the wait, not before");
    assert_eq!(error.code(), ServerErrorCode::Overloaded);
    assert!(error.is_retryable());
    assert_eq!(error.retry_after(), Some(SORT_RETRY_AFTER));
    let message = dual_core::error::Report::new(&error).to_string();
    assert!(message.contains("2 sorted orders are being derived"), "{message}");

    // A slot freed within the wait lets the next one through.
    let [first, _second] = held;
    let release = async {
        tokio::time::sleep(wait / 2).await;
        drop(first);
    };
    let started = tokio::time::Instant::now();
    let sort = by("name", SortOrder::Asc);
    let (order, ()) = tokio::join!(cache.order(&spool, id, &sort), release);
    assert_eq!(order.expect("admitted").len() as u64, ROWS);
    assert_eq!(started.elapsed(), wait / 2);
}

#[tokio::test]
async fn keys_are_counted_against_the_memory_budget() {
    let spool = spool();
    let id = snapshot(&spool).await;
    // Entries (24 bytes), order (4) and the 100-byte names: about 128 KB for 1,000 rows.
    let need = ROWS * (24 + 4 + NAME_BYTES);
    let tight = SortCache::new(1 << 20, limits(2, Duration::ZERO, need - 1));
    let error = tight
        .order(&spool, id, &by("name", SortOrder::Asc))
        .await
        .expect_err("over the budget");
    assert_eq!(sort_too_large(&error), Some(SortLimit::Memory { max: need - 1 }));
    assert!(
        error.to_string().contains("export `/data` and sort it locally"),
        "{error}"
    );
    assert_eq!(tight.memory.used(), 0);
    // The numbers need no text: the same budget sorts them.
    tight
        .order(&spool, id, &by("id", SortOrder::Desc))
        .await
        .expect("numbers fit");

    // Room for one, growth by a quarter included; another sort holding most of it: overloaded.
    let budget = need + need / 4;
    let cache = SortCache::new(1 << 20, limits(2, Duration::ZERO, budget));
    let mut other = cache.memory.reservation();
    other.grow(budget - ROWS * 28).expect("reserve");
    let error = cache
        .order(&spool, id, &by("name", SortOrder::Asc))
        .await
        .expect_err("budget taken");
    assert_eq!(error.code(), ServerErrorCode::Overloaded, "{error}");
    assert_eq!(error.retry_after(), Some(SORT_RETRY_AFTER));
    assert_eq!(
        cache.memory.used(),
        budget - ROWS * 28,
        "the refused sort holds nothing"
    );
    drop(other);
    cache
        .order(&spool, id, &by("name", SortOrder::Asc))
        .await
        .expect("fits once freed");
    assert_eq!(cache.memory.used(), 0);
}

#[tokio::test]
async fn a_snapshot_over_the_row_or_byte_limit_is_refused_before_reading() {
    let spool = spool();
    let id = snapshot(&spool).await;
    let sort = by("id", SortOrder::Asc);
    let rows = SortCache::new(
        1 << 20,
        SortLimits {
            max_rows: ROWS - 1,
            ..SortLimits::default()
        },
    );
    let error = rows.order(&spool, id, &sort).await.expect_err("too many rows");
    assert_eq!(
        sort_too_large(&error),
        Some(SortLimit::Rows {
            rows: ROWS,
            max: ROWS - 1
        })
    );
    assert_eq!(error.code(), ServerErrorCode::InvalidRequest);
    assert!(!error.is_retryable());
    let message = error.to_string();
    assert!(message.contains("1000 rows, more than the 999"), "{message}");
    assert!(message.contains("without `sort`"), "{message}");

    let bytes = SortCache::new(
        1 << 20,
        SortLimits {
            max_bytes: 1_000,
            ..SortLimits::default()
        },
    );
    let error = bytes.order(&spool, id, &sort).await.expect_err("too many bytes");
    assert!(
        matches!(sort_too_large(&error), Some(SortLimit::Bytes { max: 1_000, bytes }) if bytes > 100_000),
        "{error}"
    );
    // Refused before taking a slot: none was needed.
    let limited = SortCache::new(
        1 << 20,
        SortLimits {
            concurrency: 1,
            wait: Duration::ZERO,
            max_rows: 10,
            ..SortLimits::default()
        },
    );
    let _held = limited.slots.clone().acquire_owned().await.expect("slot");
    let error = limited.order(&spool, id, &sort).await.expect_err("too large");
    assert_eq!(
        error.code(),
        ServerErrorCode::InvalidRequest,
        "not overloaded: {error}"
    );
}

#[tokio::test]
async fn a_dropped_request_gives_its_slot_and_memory_back() {
    let (spool, id, cache) = one_slot().await;
    let sort = by("name", SortOrder::Asc);
    // Poll the derivation once (it reserves and starts the blocking side), then drop it.
    {
        let mut order = std::pin::pin!(cache.order(&spool, id, &sort));
        let pending = futures_util::future::poll_immediate(&mut order).await;
        assert!(pending.is_none(), "the derivation runs on its blocking thread");
    }
    // The blocking side notices the feed is gone and ends; wait for it without sleeping blind.
    let released = async {
        while cache.slots.available_permits() == 0 || cache.memory.used() != 0 {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), released)
        .await
        .expect("slot and memory given back");
    cache.order(&spool, id, &sort).await.expect("next one derives");
}
