//! When and how long to wait before retrying a request.

use std::time::Duration;

use http::{HeaderMap, StatusCode, header::RETRY_AFTER};
use time::{OffsetDateTime, PrimitiveDateTime, macros::format_description};

/// Retry settings: exponential backoff with jitter, `Retry-After` honoured up to a cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RetryPolicy {
    /// Retries after the first attempt (0 disables retries).
    pub(crate) max_retries: u32,
    /// Backoff before the first retry; doubled for every further one.
    pub(crate) initial_backoff: Duration,
    /// Upper bound of the computed backoff.
    pub(crate) max_backoff: Duration,
    /// The longest `Retry-After` the client waits; a server asking for more gets no retry.
    pub(crate) max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

/// Whether a response status is worth retrying: 429 and 503 only; never any other 4xx.
pub(crate) fn is_retryable_status(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
    )
}

impl RetryPolicy {
    /// The backoff before retry number `retry` (0-based): `initial · 2^retry`, capped at `max_backoff`,
    /// then "equal jitter": a uniformly random duration between half of it and all of it.
    pub(crate) fn backoff(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
        let full = self.initial_backoff.saturating_mul(factor).min(self.max_backoff);
        let half = full / 2;
        let nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        half + Duration::from_nanos(fastrand::u64(0..=nanos))
    }

    /// The wait before retrying a retryable response: its `Retry-After` when it has one (`None` when that
    /// is longer than `max_retry_after`, meaning "do not retry"), else the jittered backoff.
    pub(crate) fn delay_for_response(&self, retry: u32, headers: &HeaderMap) -> Option<Duration> {
        match retry_after(headers, OffsetDateTime::now_utc()) {
            Some(wait) if wait > self.max_retry_after => None,
            Some(wait) => Some(wait),
            None => Some(self.backoff(retry)),
        }
    }
}

/// Parses `Retry-After` as delay-seconds or an HTTP-date (IMF-fixdate), relative to `now`.
pub(crate) fn retry_after(headers: &HeaderMap, now: OffsetDateTime) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        // Absurdly long values saturate; the caller compares them with its cap.
        return Some(Duration::from_secs(text.parse().unwrap_or(u64::MAX)));
    }
    let format = format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    let at = PrimitiveDateTime::parse(text, format).ok()?.assume_utc();
    let wait = at - now;
    Some(if wait.is_negative() {
        Duration::ZERO
    } else {
        Duration::try_from(wait).unwrap_or(Duration::ZERO)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use time::macros::datetime;

    fn headers(value: &'static str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(RETRY_AFTER, HeaderValue::from_static(value));
        map
    }

    #[test]
    fn parses_seconds_and_dates() {
        let now = datetime!(2026-01-15 10:30:00 UTC);
        assert_eq!(retry_after(&headers("7"), now), Some(Duration::from_secs(7)));
        assert_eq!(retry_after(&headers(" 0 "), now), Some(Duration::ZERO));
        assert_eq!(
            retry_after(&headers("Thu, 15 Jan 2026 10:30:42 GMT"), now),
            Some(Duration::from_secs(42))
        );
        assert_eq!(
            retry_after(&headers("Thu, 15 Jan 2026 10:00:00 GMT"), now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers("soon"), now), None);
        assert_eq!(retry_after(&headers("-3"), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
        assert_eq!(
            retry_after(&headers("99999999999999999999999"), now),
            Some(Duration::from_secs(u64::MAX))
        );
    }

    #[test]
    fn backoff_grows_is_jittered_and_capped() {
        let policy = RetryPolicy::default();
        for retry in 0..40 {
            let full =
                (Duration::from_millis(100) * 2u32.saturating_pow(retry.min(20))).min(policy.max_backoff);
            let got = policy.backoff(retry);
            assert!(
                got >= full / 2 && got <= full,
                "retry {retry}: {got:?} vs {full:?}"
            );
        }
    }

    #[test]
    fn retry_after_over_the_cap_means_no_retry() {
        let policy = RetryPolicy {
            max_retry_after: Duration::from_secs(10),
            ..RetryPolicy::default()
        };
        assert_eq!(policy.delay_for_response(0, &headers("11")), None);
        assert_eq!(
            policy.delay_for_response(0, &headers("10")),
            Some(Duration::from_secs(10))
        );
        assert!(policy.delay_for_response(0, &HeaderMap::new()).is_some());
    }

    #[test]
    fn only_429_and_503_are_retryable() {
        for code in [400, 401, 403, 404, 405, 409, 413, 415, 422, 500, 501, 502] {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
            assert!(!is_retryable_status(status), "{code}");
        }
        assert!(is_retryable_status(StatusCode::TOO_MANY_REQUESTS));
        assert!(is_retryable_status(StatusCode::SERVICE_UNAVAILABLE));
    }
}
