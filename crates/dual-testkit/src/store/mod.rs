//! The store conformance suite: every [`ResourceStore`] backend runs it, so all
//! of them behave exactly like [`MemoryStore`](dual_store::MemoryStore).
//!
//! [`run`] calls each case with a fresh, empty store from `make_store`, closes the store afterwards, and
//! panics with the case's name when one fails. Every case is also public, so a backend can run one alone
//! while it is being written. Run the suite on a multi-thread tokio runtime: the concurrent cases spawn
//! tasks.
//!
//! ```
//! use dual_store::MemoryStore;
//!
//! # fn main() {
//! # tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap().block_on(async {
//! // In a backend's tests/suite.rs, inside #[tokio::test(flavor = "multi_thread")]:
//! dual_testkit::store::run(|| async { MemoryStore::new() }).await;
//!
//! // One case alone, e.g. while writing a backend:
//! dual_testkit::store::expiry_boundary(&MemoryStore::new()).await;
//! dual_testkit::store::concurrent_record_access(std::sync::Arc::new(MemoryStore::new())).await;
//! # });
//! # }
//! ```
//!
//! A shared backend gives each `make_store()` call its own namespace — a unique key prefix for Redis, a
//! unique schema for PostgreSQL — so cases neither see each other's records nor need cleaning up:
//!
//! ```text
//! dual_testkit::store::run(|| async {
//!     let prefix = format!("suite-{}:", dual_core::ResourceId::new());
//!     RedisStore::connect(&url).key_prefix(prefix).build().await.expect("redis")
//! })
//! .await;
//! ```
//!
//! # What a store must do to pass
//!
//! * Keep every field of a [`ResourceRecord`](dual_core::ResourceRecord) exactly: text in any script,
//!   JSON of any shape with object keys in their original order (store JSON as text, or as PostgreSQL
//!   `json`, not `jsonb`), integers up to `u64::MAX` inside JSON, counts beyond 2^53 (a `bigint` is
//!   enough), and timestamps to at least the microsecond (PostgreSQL `timestamptz` is enough; the suite's
//!   timestamps are whole microseconds and its records use UTC). Time zones may be normalised to UTC.
//! * Answer [`Lookup::Expired`](dual_store::Lookup::Expired) (`record_access`:
//!   [`Access::Expired`](dual_store::Access::Expired), whoever the viewer) for a record with
//!   `expires_at <= now` until it is deleted or purged, for `get`, `record_access` and `pin` alike, and
//!   change nothing in it.
//! * Count every `record_access` atomically, with no lost update under 64 concurrent tasks, and only
//!   for a viewer that may see the record, checked in the same atomic step: another owner, an
//!   anonymous viewer of an owned record and a grant of another id get `Access::NotVisible` and
//!   change nothing.
//! * Order `find_expired` by expiry and make `purge_expired` count each deleted record once, even when
//!   several purges race.
//! * Make `list` answer one owner's live records exactly (an owner is compared as a whole string;
//!   `None` is the records created without one), by id descending, page by page below `before`.
//! * Keep a [`TaskRecord`](dual_core::task::TaskRecord) exactly, forget it at its `expires_at`, and
//!   make `cancel_task` and `update_task` atomic: a renewal never clears a cancellation.
//! * Make `live_count` count exactly the records `get` would find, pinned ones included, even right after
//!   concurrent saves and purges.
//!
//! The suite never waits for time to pass: every case takes the real clock (truncated to microseconds)
//! as its starting `now`, saves records that expire minutes after it, and passes later instants as the
//! `now` argument. A backend that also sets a native TTL from `expires_at` therefore never drops a record
//! while a case runs.

mod closed;
mod concurrency;
pub mod connect;
mod corrupt;
mod listing;
mod live_count;
mod lookup;
pub mod outage;
mod pin_delete;
mod purge;
mod query_state;
mod round_trip;
mod support;
mod tasks;
mod visibility;

use std::future::Future;
use std::sync::Arc;

pub use closed::refuses_calls_once_closed;
pub use concurrency::{
    ACCESSES_PER_TASK, SAVES_PER_TASK, TASKS, concurrent_purges, concurrent_record_access, concurrent_saves,
};
pub use corrupt::reported_not_served;
pub use listing::list_pages_one_owners_live_records;
pub use live_count::live_count_counts_live_records;
pub use lookup::{expired_is_never_found, expiry_boundary, record_access_counts, unknown_id_is_missing};
pub use pin_delete::{delete_removes, pin_removes_expiry};
pub use purge::{
    MANY_RECORDS, find_expired_order_and_limit, many_records_mixed_expiry, purge_expired_exact,
    purges_in_batches,
};
pub use query_state::update_query_touches_only_the_query;
pub use round_trip::{round_trip_every_field, save_replaces};
pub use support::record;
pub use tasks::{sessions_round_trip_expire_and_delete, tasks_round_trip_renew_and_cancel};
pub use visibility::{record_access_checks_the_viewer, record_access_expired_and_unknown};

use dual_store::ResourceStore;

use crate::case::run_isolated;

/// Runs every case of the suite, each on a fresh store from `make_store`, and panics naming the first
/// case that fails.
///
/// Call it from a multi-thread tokio runtime. Each store is closed after its case.
pub async fn run<F, Fut, S>(make_store: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
    S: ResourceStore,
{
    macro_rules! by_ref {
        ($($case:ident),* $(,)?) => {$(
            run_case(stringify!($case), make_store().await, |s| async move { $case(&*s).await }).await;
        )*};
    }
    macro_rules! by_arc {
        ($($case:ident),* $(,)?) => {$(
            run_case(stringify!($case), make_store().await, |s| $case(s)).await;
        )*};
    }
    by_ref![
        round_trip_every_field,
        save_replaces,
        unknown_id_is_missing,
        expiry_boundary,
        expired_is_never_found,
        record_access_counts,
        record_access_checks_the_viewer,
        record_access_expired_and_unknown,
        pin_removes_expiry,
        delete_removes,
        find_expired_order_and_limit,
        purge_expired_exact,
        many_records_mixed_expiry,
        live_count_counts_live_records,
        update_query_touches_only_the_query,
        list_pages_one_owners_live_records,
        tasks_round_trip_renew_and_cancel,
        sessions_round_trip_expire_and_delete,
    ];
    by_arc![concurrent_record_access, concurrent_saves, concurrent_purges];
}

/// Runs one case in its own task (see [`run_isolated`]), then closes the store.
async fn run_case<S, C, Fut>(name: &str, store: S, case: C)
where
    S: ResourceStore,
    C: FnOnce(Arc<dyn ResourceStore>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let store: Arc<dyn ResourceStore> = Arc::new(store);
    run_isolated("store", name, case(Arc::clone(&store))).await;
    if let Err(err) = store.close().await {
        panic!("store conformance case `{name}`: close() failed: {err}");
    }
}
