//! Waiting in a test for something another task does: [`until`] polls a condition until it holds,
//! and fails the test, naming what it waited for, when it never does ([`until_within`]: with a limit
//! of your own). [`done_within`] checks that something already done took less than a bound.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicBool, Ordering};
//! use std::time::Duration;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let done = Arc::new(AtomicBool::new(false));
//! let flag = Arc::clone(&done);
//! tokio::spawn(async move { flag.store(true, Ordering::SeqCst) });
//! dual_testkit::wait::until("the task ran", async || done.load(Ordering::SeqCst)).await;
//! # }
//! ```

use std::time::{Duration, Instant};

/// How often [`until`] looks.
pub const POLL: Duration = Duration::from_millis(10);
/// How long [`until`] waits at the most.
pub const WITHIN: Duration = Duration::from_secs(5);

/// Polls `condition` every [`POLL`] until it holds: [`until_within`] with [`WITHIN`].
///
/// # Panics
/// With `"{what}: not within 5s"` when it still does not hold after [`WITHIN`].
pub async fn until(what: &str, condition: impl AsyncFnMut() -> bool) {
    until_within(what, WITHIN, condition).await;
}

/// Polls `condition` every [`POLL`] until it holds, for at most `within`.
///
/// # Panics
/// With `"{what}: not within {within:?}"` when it still does not hold after `within`.
pub async fn until_within(what: &str, within: Duration, mut condition: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + within;
    while !condition().await {
        if tokio::time::Instant::now() >= deadline {
            panic!("{what}: not within {within:?}");
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Asserts that less than `limit` has passed since `started`: a bounded failure, a cancellation or a
/// refusal that must come quickly came quickly.
///
/// # Panics
/// With `"{what}: took {elapsed:?}, not under {limit:?}"` when it did not.
#[track_caller]
pub fn done_within(what: &str, started: Instant, limit: Duration) {
    let elapsed = started.elapsed();
    assert!(elapsed < limit, "{what}: took {elapsed:?}, not under {limit:?}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_condition_that_never_holds_fails_after_the_limit_naming_it() {
        let within = Duration::from_millis(50);
        let started = tokio::time::Instant::now();
        let waited = tokio::spawn(until_within("the impossible", within, async || false)).await;
        let panic = waited.expect_err("it gives up").into_panic();
        let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert_eq!(message, "the impossible: not within 50ms");
        assert!(started.elapsed() >= within);
    }

    #[test]
    fn something_slower_than_its_bound_fails_naming_it() {
        let started = Instant::now();
        done_within("a quick refusal", started, Duration::from_secs(60));
        let late = std::panic::catch_unwind(|| done_within("a late refusal", started, Duration::ZERO));
        let panic = late.expect_err("it fails");
        let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(message.starts_with("a late refusal: took "), "{message}");
        assert!(message.ends_with(", not under 0ns"), "{message}");
    }

    #[tokio::test]
    async fn a_condition_is_polled_until_it_holds() {
        let mut calls = 0;
        until("the third look", async || {
            calls += 1;
            calls == 3
        })
        .await;
        assert_eq!(calls, 3);
    }
}
