//! The authorization hook: who is calling, and may they see this resource.

use std::fmt;

use dual_core::ResourceRecord;
use http::request::Parts;

/// Decides whether a request may see a resource. Denied requests get the same 404 `not_found` as an
/// unknown id, so a resource's existence never leaks.
///
/// Implement [`Authorize::owner`] to map a request to its principal (tenant, user); the default
/// [`Authorize::allow`] then shows a resource created with an `owner` only to requests mapped to that
/// owner, and resources without one to everyone. Override `allow` for finer rules (roles, scopes).
///
/// The hook is synchronous and sees only the request head: authenticate in a middleware in front of
/// the handler (verifying a token may need IO) and put the principal into the request's extensions,
/// where `owner` reads it back from `parts.extensions`.
///
/// ```
/// use dual_http::Authorize;
/// use http::request::Parts;
///
/// /// `Authorization: Bearer <token>`, where the token is the tenant's name (a demo, not security).
/// #[derive(Debug)]
/// struct BearerTenant;
///
/// impl Authorize for BearerTenant {
///     fn owner(&self, parts: &Parts) -> Option<String> {
///         let value = parts.headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
///         value.strip_prefix("Bearer ").map(str::to_owned)
///     }
/// }
/// ```
pub trait Authorize: Send + Sync + 'static {
    /// The caller's principal, or `None` for an anonymous request.
    fn owner(&self, parts: &Parts) -> Option<String>;

    /// Whether the caller may see (and so read, pin or delete) `record`. Default: the record has no
    /// owner, or its owner is [`Authorize::owner`].
    fn allow(&self, parts: &Parts, record: &ResourceRecord) -> bool {
        match &record.owner {
            None => true,
            Some(_) => record.visible_to(self.owner(parts).as_deref()),
        }
    }
}

/// The default hook: every request is anonymous, so only resources created without an `owner` are
/// visible. Owned resources need a hook that maps requests to owners.
#[derive(Debug, Clone, Copy, Default)]
pub struct Anonymous;

impl Authorize for Anonymous {
    fn owner(&self, _parts: &Parts) -> Option<String> {
        None
    }
}

/// An [`Authorize`] hook from a closure mapping the request head to the caller's owner.
///
/// ```
/// use dual_http::OwnerFn;
/// use http::request::Parts;
///
/// let hook = OwnerFn(|parts: &Parts| {
///     parts.headers.get("x-tenant").and_then(|v| v.to_str().ok()).map(str::to_owned)
/// });
/// # let _ = dual_http::DualHttp::builder;
/// # let _ = hook;
/// ```
#[derive(Clone, Copy)]
pub struct OwnerFn<F>(pub F);

impl<F> fmt::Debug for OwnerFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnerFn").finish_non_exhaustive()
    }
}

impl<F> Authorize for OwnerFn<F>
where
    F: Fn(&Parts) -> Option<String> + Send + Sync + 'static,
{
    fn owner(&self, parts: &Parts) -> Option<String> {
        (self.0)(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dual_core::{QuerySpec, ResourceId};

    fn record(owner: Option<&str>) -> ResourceRecord {
        let now = dual_core::time::OffsetDateTime::UNIX_EPOCH;
        ResourceRecord {
            id: ResourceId::new(),
            name: "r".into(),
            query: QuerySpec::new("k", serde_json::Value::Null),
            columns: vec![],
            total_count: 0,
            sample: Vec::new().into(),
            created_at: now,
            expires_at: None,
            access_count: 0,
            last_accessed_at: None,
            owner: owner.map(str::to_owned),
            metadata: serde_json::Value::Null,
        }
    }

    fn parts(tenant: Option<&str>) -> Parts {
        let mut builder = http::Request::builder();
        if let Some(tenant) = tenant {
            builder = builder.header("x-tenant", tenant);
        }
        builder
            .body(())
            .map(|r| r.into_parts().0)
            .unwrap_or_else(|_| http::Request::new(()).into_parts().0)
    }

    #[test]
    fn owners_see_only_their_resources() {
        let hook = OwnerFn(|p: &Parts| {
            p.headers
                .get("x-tenant")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        });
        assert!(hook.allow(&parts(Some("a")), &record(Some("a"))));
        assert!(!hook.allow(&parts(Some("b")), &record(Some("a"))));
        assert!(!hook.allow(&parts(None), &record(Some("a"))));
        assert!(hook.allow(&parts(None), &record(None)));
        assert!(Anonymous.allow(&parts(Some("a")), &record(None)));
        assert!(!Anonymous.allow(&parts(Some("a")), &record(Some("a"))));
    }
}
