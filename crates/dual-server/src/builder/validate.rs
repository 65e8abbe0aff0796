//! The checks `build` runs on the builder's options.

use dual_store::ResourceStore;

use crate::{SchedulerLimits, ServerBuildError};

/// Refuses a process-local spool with a shared store: instances sharing the store would find each
/// other's resources ready and their snapshots missing (docs/ARCHITECTURE.md).
pub(super) fn refuse_local_spool(
    store: &dyn ResourceStore,
    spool_shared: bool,
    spool: &'static str,
) -> Result<(), ServerBuildError> {
    if store.is_shared() && !spool_shared {
        return Err(ServerBuildError::ProcessLocalSpool { spool });
    }
    Ok(())
}

/// `Ok` when `ok`, else the `InvalidOption` error naming `option` and why.
pub(super) fn check(ok: bool, option: &'static str, reason: &str) -> Result<(), ServerBuildError> {
    if ok {
        Ok(())
    } else {
        Err(ServerBuildError::InvalidOption {
            option,
            reason: reason.to_owned(),
        })
    }
}

/// An `http(s)` URL with a host and no query, fragment, credentials or control characters.
pub(super) fn validate_base_url(url: &str) -> Result<(), ServerBuildError> {
    let invalid = || ServerBuildError::InvalidBaseUrl(url.to_owned());
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(invalid)?;
    let host = rest.split('/').next().unwrap_or_default();
    let bad_char =
        |c: char| c.is_whitespace() || c.is_control() || matches!(c, '?' | '#' | '\\' | '"' | '<' | '>');
    if host.is_empty() || host.starts_with(':') || host.contains('@') || url.chars().any(bad_char) {
        return Err(invalid());
    }
    Ok(())
}

/// An RFC 3986 scheme: a letter, then letters, digits, `+`, `-` or `.`.
pub(super) fn validate_scheme(scheme: &str) -> Result<(), ServerBuildError> {
    let ok = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    check(
        ok,
        "uri_scheme",
        "must be letters, digits, '+', '-' or '.', starting with a letter",
    )
}

/// Slots of each class at least 1, and room in the background queue for the running results.
pub(super) fn validate_scheduler(limits: &SchedulerLimits) -> Result<(), ServerBuildError> {
    check(
        limits.foreground_slots > 0,
        "scheduler_limits.foreground_slots",
        "must be at least 1",
    )?;
    check(
        limits.background_slots > 0,
        "scheduler_limits.background_slots",
        "must be at least 1",
    )?;
    check(
        limits.background_queue >= limits.background_slots,
        "scheduler_limits.background_queue",
        "must be at least background_slots (it counts the running results too)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_validation() {
        for good in [
            "http://localhost:8080/resources",
            "https://api.example.com/resources/",
            "http://[::1]:1/r",
        ] {
            assert_eq!(validate_base_url(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "localhost/resources",
            "ftp://x/r",
            "http://",
            "http:///r",
            "http://x/r?a=1",
            "http://x/r#f",
            "http://a b/r",
            "http://user@x/r",
        ] {
            assert!(validate_base_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn scheme_validation() {
        assert!(validate_scheme("resource").is_ok());
        assert!(validate_scheme("x-dual.v1").is_ok());
        for bad in ["", "1abc", "a b", "a/b", "a:"] {
            assert!(validate_scheme(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn scheduler_limits_need_a_slot_per_class_and_room_for_the_running() {
        assert!(validate_scheduler(&SchedulerLimits::default()).is_ok());
        for (limits, option) in [
            (
                SchedulerLimits::default().foreground_slots(0),
                "scheduler_limits.foreground_slots",
            ),
            (
                SchedulerLimits::default().background_slots(0),
                "scheduler_limits.background_slots",
            ),
            (
                SchedulerLimits::default().background_slots(4).background_queue(2),
                "scheduler_limits.background_queue",
            ),
        ] {
            match validate_scheduler(&limits) {
                Err(ServerBuildError::InvalidOption { option: named, .. }) => assert_eq!(named, option),
                other => panic!("{limits:?}: {other:?}"),
            }
        }
    }
}
