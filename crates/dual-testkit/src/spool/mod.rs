//! The spool conformance suite: every [`SpoolBackend`](dual_spool::SpoolBackend)
//! runs it through a [`Spool`], so all of them behave alike.
//!
//! [`run`] calls each case with a fresh spool from `make_spool`, closes it afterwards, and panics
//! with the case's name when one fails. The cases set small [`SegmentLimits`](dual_spool::SegmentLimits)
//! themselves, so that every snapshot has many segments. Every case is public, so a backend can run
//! one alone. Run the suite on a multi-thread tokio runtime: the concurrent cases spawn tasks.
//! Outages need a way to cut the storage, so they are not part of [`run`]: see [`outage`].
//!
//! ```
//! use dual_spool::{MemorySpool, Spool};
//!
//! # fn main() {
//! # tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap().block_on(async {
//! dual_testkit::spool::run(|| async { Spool::new(MemorySpool::builder().memory_budget(0).build().await.unwrap()) }).await;
//! # });
//! # }
//! ```
//!
//! A shared backend gives each `make_spool()` call its own prefix, so cases neither see each other's
//! snapshots nor need cleaning up beyond the prefix.

mod concurrency;
mod lifecycle;
pub mod outage;
mod ranges;
mod round_trip;
mod support;

use std::future::Future;

pub use concurrency::{concurrent_readers, concurrent_writers};
pub use lifecycle::{
    abandoned_writer_leaves_nothing, delete_removes_everything, partial_manifest_serves_the_stored_rows,
    sweep_removes_orphans, unfinished_is_not_served,
};
pub use ranges::{cursor_streams_every_range, ranges_at_every_boundary};
pub use round_trip::{
    empty_snapshot, large_rows_get_their_own_segment, round_trip_odd_rows, snapshots_are_immutable,
};
pub use support::{LIMITS, sample_rows};

use dual_spool::Spool;

use crate::case::run_isolated;

/// Runs every case of the suite, each on a fresh spool from `make_spool`, and panics naming the
/// first case that fails. Call it from a multi-thread tokio runtime.
pub async fn run<F, Fut>(make_spool: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Spool>,
{
    macro_rules! cases {
        ($($case:ident),* $(,)?) => {$(
            run_case(stringify!($case), make_spool().await, $case).await;
        )*};
    }
    cases![
        round_trip_odd_rows,
        empty_snapshot,
        large_rows_get_their_own_segment,
        snapshots_are_immutable,
        ranges_at_every_boundary,
        cursor_streams_every_range,
        unfinished_is_not_served,
        partial_manifest_serves_the_stored_rows,
        delete_removes_everything,
        abandoned_writer_leaves_nothing,
        sweep_removes_orphans,
        concurrent_readers,
        concurrent_writers,
    ];
}

/// Runs one case in its own task (see [`run_isolated`]), then closes the spool.
async fn run_case<C, Fut>(name: &str, spool: Spool, case: C)
where
    C: FnOnce(Spool) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    run_isolated("spool", name, case(spool.clone())).await;
    if let Err(err) = spool.close().await {
        panic!("spool conformance case `{name}`: close() failed: {err}");
    }
}
