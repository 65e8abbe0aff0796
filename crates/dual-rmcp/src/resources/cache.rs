//! The caching hints of a `resources/read` result (2026-07-28, SEP-2549): how long a client may
//! treat it as fresh (`ttlMs`) and who may cache it (`cacheScope`).
//!
//! | resource | `ttlMs` | `cacheScope` |
//! |---|---|---|
//! | a snapshot page, resource expiring | the time until it expires | `private` when bound to an owner, else `public` |
//! | a snapshot page, resource pinned | [`PINNED_TTL`] (1 hour): a pinned result never changes, but may be deleted | as above |
//! | a live page (the query re-executed) | 0: the next read may differ | as above |
//! | a status (pending or failed) | 0: a pending status changes at any moment | `private` |
//!
//! Versions before 2026-07-28 define neither field: they get none.

use std::time::Duration;

use dual_core::mcp::ProtocolVersion;
use dual_core::time::OffsetDateTime;
use dual_server::PageFreshness;
use rmcp::model::{CacheScope, ReadResourceResult};

/// How long a page of a pinned resource may be treated as fresh.
pub const PINNED_TTL: Duration = Duration::from_secs(60 * 60);

/// `result` with the hints of a page of `freshness`, read at `now`, for `version`.
pub(super) fn page_hints(
    result: ReadResourceResult,
    freshness: PageFreshness,
    now: OffsetDateTime,
    version: ProtocolVersion,
) -> ReadResourceResult {
    let ttl = if freshness.live {
        Duration::ZERO
    } else {
        match freshness.expires_at {
            None => PINNED_TTL,
            Some(at) => Duration::try_from(at - now).unwrap_or(Duration::ZERO),
        }
    };
    let scope = if freshness.owned {
        CacheScope::Private
    } else {
        CacheScope::Public
    };
    with_hints(result, ttl, scope, version)
}

/// `result`, the status of a resource not readable yet (or any more), for `version`.
pub(super) fn status_hints(result: ReadResourceResult, version: ProtocolVersion) -> ReadResourceResult {
    with_hints(result, Duration::ZERO, CacheScope::Private, version)
}

fn with_hints(
    mut result: ReadResourceResult,
    ttl: Duration,
    scope: CacheScope,
    version: ProtocolVersion,
) -> ReadResourceResult {
    if version >= ProtocolVersion::V2026_07_28 {
        result.ttl_ms = Some(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        result.cache_scope = Some(scope);
    } else {
        result.ttl_ms = None;
        result.cache_scope = None;
    }
    result
}

#[cfg(test)]
mod tests {
    use dual_core::time::Duration as Span;

    use super::*;

    fn hints(freshness: PageFreshness, version: ProtocolVersion) -> (Option<u64>, Option<CacheScope>) {
        let now = OffsetDateTime::UNIX_EPOCH;
        let mut freshness = freshness;
        if freshness.expires_at.is_some() {
            freshness.expires_at = Some(now + Span::seconds(90));
        }
        let result = page_hints(ReadResourceResult::new(vec![]), freshness, now, version);
        (result.ttl_ms, result.cache_scope)
    }

    #[test]
    fn each_kind_of_page_gets_its_hints_and_old_versions_none() {
        let latest = ProtocolVersion::V2026_07_28;
        let mut expiring = PageFreshness::default();
        expiring.expires_at = Some(OffsetDateTime::UNIX_EPOCH);
        assert_eq!(hints(expiring, latest), (Some(90_000), Some(CacheScope::Public)));
        let mut pinned = PageFreshness::default();
        pinned.owned = true;
        assert_eq!(
            hints(pinned, latest),
            (Some(3_600_000), Some(CacheScope::Private))
        );
        let mut live = expiring;
        live.live = true;
        assert_eq!(hints(live, latest), (Some(0), Some(CacheScope::Public)));
        assert_eq!(hints(expiring, ProtocolVersion::V2025_11_25), (None, None));
        let status = status_hints(ReadResourceResult::new(vec![]), latest);
        assert_eq!(
            (status.ttl_ms, status.cache_scope),
            (Some(0), Some(CacheScope::Private))
        );
    }
}
