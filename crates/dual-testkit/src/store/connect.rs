//! Checks of connecting a shared store that need no server: bad configurations are refused before
//! any connection, an unreachable server fails fast as `Unavailable`, and neither an error nor a
//! builder's `Debug` output echoes a secret. [`debug_shows`] also serves a connected store's tests.

use std::fmt::Debug;
use std::future::Future;
use std::time::{Duration, Instant};

use dual_store::{ConnectError, StoreError};

/// How long connecting to a closed port may take before it must have failed.
const FAIL_FAST: Duration = Duration::from_secs(3);

/// Every attempt fails with [`ConnectError::Config`], and no error's text (its message and its
/// causes) contains `secret` (the password the attempts' URLs carry).
///
/// # Panics
/// When an attempt connects or fails otherwise, or a message contains `secret`.
pub async fn refuses_bad_configurations<S, F>(attempts: impl IntoIterator<Item = F>, secret: &str)
where
    S: Debug,
    F: Future<Output = Result<S, ConnectError>>,
{
    for attempt in attempts {
        match attempt.await {
            Err(error @ ConnectError::Config { .. }) => {
                let text = error.to_string();
                assert!(
                    !text.contains(secret),
                    "a configuration error echoes the secret: {text}"
                );
            }
            other => panic!("expected a configuration error, got {other:?}"),
        }
    }
}

/// `connect(port)` to a port nothing listens on fails within a few seconds as
/// [`StoreError::Unavailable`], and its text (its message and its causes) does not contain `secret`.
///
/// # Panics
/// When it connects, fails otherwise or too slowly, or echoes `secret`.
pub async fn fails_fast_when_unreachable<S, F>(connect: impl FnOnce(u16) -> F, secret: &str)
where
    S: Debug,
    F: Future<Output = Result<S, ConnectError>>,
{
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .unwrap_or_else(|error| panic!("no free port: {error}"));
    let started = Instant::now();
    match connect(port).await {
        Err(ConnectError::Store(error @ StoreError::Unavailable { .. })) => {
            // The error and every cause under it.
            let text = dual_core::error::Report::new(&error).to_string();
            assert!(!text.contains(secret), "the error echoes the secret: {text}");
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    crate::wait::done_within("connecting to nothing", started, FAIL_FAST);
}

/// `value`'s `Debug` output (a builder's, a store's) does not contain `secret`, and shows
/// `redacted` (the URL's user with the password masked, `user:***@host`) in its place.
///
/// # Panics
/// When the output contains `secret` or lacks `redacted`.
#[track_caller]
pub fn debug_hides_the_secret(value: &impl Debug, secret: &str, redacted: &str) {
    let text = format!("{value:?}");
    assert!(
        !text.contains(secret),
        "the Debug output shows the secret: {text}"
    );
    debug_shows(value, redacted);
}

/// `value`'s `Debug` output (a builder's, a store's) shows `shown`: the table or key prefix a store
/// works in, say.
///
/// # Panics
/// When the output lacks `shown`.
#[track_caller]
pub fn debug_shows(value: &impl Debug, shown: &str) {
    let text = format!("{value:?}");
    assert!(text.contains(shown), "the Debug output lacks `{shown}`: {text}");
}
