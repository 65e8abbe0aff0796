//! What the server reports through the [`metrics`] facade: queries running, pending and waiting,
//! sorts in flight, sweeps, and the live resources against their cap. Nothing is recorded until the
//! application installs a recorder (the demo's `--metrics-addr` does); docs/METRICS.md lists every
//! metric of the workspace and the limit each one helps to set.
//!
//! Call sites are one line each: the functions and guards below own the names, labels and units.
//! A figure of work in progress is a gauge held up by an [`InFlight`] guard, so a task that is
//! cancelled (aborted, or dropped at an `.await`) takes itself off the gauge.

use std::time::Duration;

use metrics::{Gauge, Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};

use crate::ServerError;

/// Gauge: queries of `create_response` executing on this instance (writing a snapshot, or counting
/// and sampling a live resource), including those left running for a pending resource.
pub const QUERIES_RUNNING: &str = "dual_queries_running";
/// Gauge: of the running queries, those running in the background for a pending resource.
pub const QUERIES_PENDING: &str = "dual_queries_pending";
/// Gauge: executor calls waiting for capacity (a database connection), as executors report it with
/// [`query_waiting`].
pub const QUERIES_WAITING: &str = "dual_queries_waiting";
/// Gauge: sorted orders of snapshots being derived right now.
pub const SORTS_IN_FLIGHT: &str = "dual_sorts_in_flight";
/// Counter: sorted orders of snapshots derived (cache misses), finished or not.
pub const SORTS_TOTAL: &str = "dual_sorts_total";
/// Gauge: live (unexpired) resources in the store, as counted at the last sweep; the store's
/// figure, so every instance sharing a store reports the same.
pub const LIVE_RESOURCES: &str = "dual_live_resources";
/// Gauge: the cap on live resources (`max_resources`).
pub const LIVE_RESOURCES_LIMIT: &str = "dual_live_resources_limit";
/// Counter, label `outcome` (`ok`, `failed`): sweeps run.
pub const SWEEPS_TOTAL: &str = "dual_sweeps_total";
/// Counter, label `what` (`expired`: resources purged, `orphans`: orphaned snapshots removed):
/// what the sweeps removed.
pub const SWEPT_TOTAL: &str = "dual_swept_total";

/// Gauge, label `class` (`foreground`, `background`): the scheduler's work running now.
pub const SCHEDULER_RUNNING: &str = "dual_scheduler_running";
/// Gauge, label `class`: work waiting in the scheduler's queue of that class.
pub const SCHEDULER_QUEUED: &str = "dual_scheduler_queued";
/// Gauge: background places held (results running, waiting, or still answering their tool call),
/// against `background_queue`.
pub const SCHEDULER_PLACES: &str = "dual_scheduler_background_places";
/// Counter, labels `class`, `owner` (`anonymous`, `authenticated`) and `how` (`at_once`, `queued`):
/// work the scheduler admitted to a slot.
pub const SCHEDULER_ADMITTED_TOTAL: &str = "dual_scheduler_admitted_total";
/// Counter, labels `class`, `owner`: work refused because the queue was full (`OVERLOADED`).
pub const SCHEDULER_REFUSED_TOTAL: &str = "dual_scheduler_refused_total";
/// Histogram (seconds), label `class`: how long admitted work waited for its slot.
pub const SCHEDULER_WAIT_SECONDS: &str = "dual_scheduler_wait_seconds";
/// Histogram (seconds), label `class`: how long work held its slot.
pub const SCHEDULER_RUN_SECONDS: &str = "dual_scheduler_run_seconds";

/// Registers the descriptions of the server's metrics with the installed recorder, and shows its
/// in-flight gauges at zero; call it once, after installing the recorder.
pub fn describe() {
    describe_gauge!(
        QUERIES_RUNNING,
        Unit::Count,
        "Queries of create_response executing on this instance, pending ones included"
    );
    describe_gauge!(
        QUERIES_PENDING,
        Unit::Count,
        "Queries running in the background after create_response answered (pending or spooling resources)"
    );
    describe_gauge!(
        QUERIES_WAITING,
        Unit::Count,
        "Executor calls waiting for capacity (a database connection)"
    );
    describe_gauge!(
        SORTS_IN_FLIGHT,
        Unit::Count,
        "Sorted orders of snapshots being derived"
    );
    describe_counter!(
        SORTS_TOTAL,
        Unit::Count,
        "Sorted orders of snapshots derived (sort cache misses)"
    );
    describe_gauge!(
        LIVE_RESOURCES,
        Unit::Count,
        "Live resources in the store, counted at the last sweep"
    );
    describe_gauge!(
        LIVE_RESOURCES_LIMIT,
        Unit::Count,
        "Cap on live resources (max_resources)"
    );
    describe_counter!(SWEEPS_TOTAL, Unit::Count, "Sweeps run, by outcome (ok, failed)");
    describe_counter!(
        SWEPT_TOTAL,
        Unit::Count,
        "What sweeps removed: expired resources purged, orphaned snapshots removed"
    );
    describe_gauge!(
        SCHEDULER_RUNNING,
        Unit::Count,
        "Scheduled query work running, by class (foreground: a caller waits; background: after the answer)"
    );
    describe_gauge!(
        SCHEDULER_QUEUED,
        Unit::Count,
        "Scheduled query work waiting for a slot, by class"
    );
    describe_gauge!(
        SCHEDULER_PLACES,
        Unit::Count,
        "Background places held (results running, waiting, or answering), against background_queue"
    );
    describe_counter!(
        SCHEDULER_ADMITTED_TOTAL,
        Unit::Count,
        "Query work admitted to a slot, by class, owner kind and whether it waited"
    );
    describe_counter!(
        SCHEDULER_REFUSED_TOTAL,
        Unit::Count,
        "Query work refused because the queue was full, by class and owner kind"
    );
    describe_histogram!(
        SCHEDULER_WAIT_SECONDS,
        Unit::Seconds,
        "Time admitted work waited for its slot, by class"
    );
    describe_histogram!(
        SCHEDULER_RUN_SECONDS,
        Unit::Seconds,
        "Time work held its slot, by class"
    );
    for name in [QUERIES_RUNNING, QUERIES_PENDING, QUERIES_WAITING, SORTS_IN_FLIGHT] {
        gauge!(name).increment(0.0);
    }
    for class in ["foreground", "background"] {
        gauge!(SCHEDULER_RUNNING, "class" => class).increment(0.0);
        gauge!(SCHEDULER_QUEUED, "class" => class).increment(0.0);
    }
    gauge!(SCHEDULER_PLACES).increment(0.0);
}

/// One unit of a gauge of work in progress, given back when dropped.
#[derive(Debug)]
#[must_use = "the gauge goes down again when the guard is dropped"]
pub struct InFlight(Gauge);

impl InFlight {
    fn enter(gauge: Gauge) -> Self {
        gauge.increment(1.0);
        Self(gauge)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

/// For executors: holds [`QUERIES_WAITING`] up by one while a call waits for capacity (a database
/// connection from a pool, a slot of a concurrency limit). Take it when the wait starts, drop it
/// when the call gets its connection or gives up.
///
/// ```
/// let waiting = dual_server::metrics::query_waiting();
/// // … wait for a connection …
/// drop(waiting);
/// ```
pub fn query_waiting() -> InFlight {
    InFlight::enter(gauge!(QUERIES_WAITING))
}

/// A query of `create_response` runs (for as long as the guard lives).
pub(crate) fn query_running() -> InFlight {
    InFlight::enter(gauge!(QUERIES_RUNNING))
}

/// A query runs on in the background after `create_response` answered, for a pending or spooling
/// resource (for as long as the guard lives).
pub(crate) fn query_pending() -> InFlight {
    InFlight::enter(gauge!(QUERIES_PENDING))
}

/// A sorted order is being derived (for as long as the guard lives).
pub(crate) fn sorting() -> InFlight {
    counter!(SORTS_TOTAL).increment(1);
    InFlight::enter(gauge!(SORTS_IN_FLIGHT))
}

/// The server's caps, once at start.
pub(crate) fn limits(max_resources: Option<u64>) {
    if let Some(max) = max_resources {
        gauge!(LIVE_RESOURCES_LIMIT).set(max as f64);
    }
}

/// A sweep ran: what its expiry purge and its orphan sweep removed, or how they failed.
pub(crate) fn swept(expired: &Result<u64, ServerError>, orphans: &Result<usize, ServerError>) {
    let outcome = if expired.is_ok() && orphans.is_ok() {
        "ok"
    } else {
        "failed"
    };
    counter!(SWEEPS_TOTAL, "outcome" => outcome).increment(1);
    counter!(SWEPT_TOTAL, "what" => "expired").increment(*expired.as_ref().unwrap_or(&0));
    counter!(SWEPT_TOTAL, "what" => "orphans").increment(orphans.as_ref().map_or(0, |n| *n as u64));
}

/// The store holds `count` live resources.
pub(crate) fn live_resources(count: u64) {
    gauge!(LIVE_RESOURCES).set(count as f64);
}

fn owner_kind(authenticated: bool) -> &'static str {
    if authenticated {
        "authenticated"
    } else {
        "anonymous"
    }
}

/// `running` pieces of work of `class` (the scheduler's label: `foreground`, `background`) hold a
/// slot.
pub(crate) fn scheduler_running(class: &'static str, running: usize) {
    gauge!(SCHEDULER_RUNNING, "class" => class).set(running as f64);
}

/// `waiting` pieces of work of `class` wait in its queue.
pub(crate) fn scheduler_queue(class: &'static str, waiting: usize) {
    gauge!(SCHEDULER_QUEUED, "class" => class).set(waiting as f64);
}

/// `held` background places are held.
pub(crate) fn scheduler_places(held: usize) {
    gauge!(SCHEDULER_PLACES).set(held as f64);
}

/// Work of `class` got its slot after `waited` (`queued`: it waited in the queue).
pub(crate) fn scheduler_admitted(class: &'static str, authenticated: bool, waited: Duration, queued: bool) {
    let how = if queued { "queued" } else { "at_once" };
    counter!(SCHEDULER_ADMITTED_TOTAL, "class" => class, "owner" => owner_kind(authenticated), "how" => how)
        .increment(1);
    histogram!(SCHEDULER_WAIT_SECONDS, "class" => class).record(waited.as_secs_f64());
}

/// Work of `class` was refused: its queue was full.
pub(crate) fn scheduler_refused(class: &'static str, authenticated: bool) {
    counter!(SCHEDULER_REFUSED_TOTAL, "class" => class, "owner" => owner_kind(authenticated)).increment(1);
}

/// Work of `class` held its slot for `ran`.
pub(crate) fn scheduler_ran(class: &'static str, ran: Duration) {
    histogram!(SCHEDULER_RUN_SECONDS, "class" => class).record(ran.as_secs_f64());
}
