//! The authentication hook: who is calling. Whether they may see a resource is the server's decision.

use std::fmt;

use dual_server::Caller;
use http::request::Parts;

/// Maps a request to its [`Caller`]. The server alone decides what a caller may see (a resource
/// created with an owner is visible only to that owner, for every surface alike); a denied request gets
/// the same 404 `not_found` as an unknown id, so a resource's existence never leaks.
///
/// The hook is synchronous and sees only the request head: authenticate in a middleware in front of
/// the handler (verifying a token may need IO) and put the [`Caller`] into the request's extensions,
/// where [`CallerFromExtensions`] reads it back; or map the head directly, as below.
///
/// ```
/// use dual_http::Authorize;
/// use dual_server::Caller;
/// use http::request::Parts;
///
/// /// `X-Tenant: <name>` set by a trusted gateway in front of the service.
/// #[derive(Debug)]
/// struct GatewayTenant;
///
/// impl Authorize for GatewayTenant {
///     fn caller(&self, parts: &Parts) -> Caller {
///         Caller::from_owner(parts.headers.get("x-tenant").and_then(|v| v.to_str().ok()))
///     }
/// }
/// ```
pub trait Authorize: Send + Sync + 'static {
    /// The caller the request authenticates as ([`Caller::anonymous`] when it carries nothing).
    fn caller(&self, parts: &Parts) -> Caller;
}

/// The default hook: every request is anonymous, so only resources created without an `owner` are
/// visible. Owned resources need a hook that maps requests to owners.
#[derive(Debug, Clone, Copy, Default)]
pub struct Anonymous;

impl Authorize for Anonymous {
    fn caller(&self, _parts: &Parts) -> Caller {
        Caller::anonymous()
    }
}

/// The [`Caller`] a middleware in front of the handler put into the request's extensions
/// (`request.extensions_mut().insert(caller)`); anonymous when there is none.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallerFromExtensions;

impl Authorize for CallerFromExtensions {
    fn caller(&self, parts: &Parts) -> Caller {
        parts.extensions.get::<Caller>().cloned().unwrap_or_default()
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
    fn caller(&self, parts: &Parts) -> Caller {
        Caller::from_owner((self.0)(parts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn hooks_map_requests_to_callers() {
        let hook = OwnerFn(|p: &Parts| {
            p.headers
                .get("x-tenant")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        });
        assert_eq!(hook.caller(&parts(Some("a"))), Caller::owner("a"));
        assert_eq!(hook.caller(&parts(None)), Caller::anonymous());
        assert_eq!(Anonymous.caller(&parts(Some("a"))), Caller::anonymous());
        let mut with_caller = parts(None);
        with_caller.extensions.insert(Caller::owner("b"));
        assert_eq!(CallerFromExtensions.caller(&with_caller), Caller::owner("b"));
        assert_eq!(
            CallerFromExtensions.caller(&parts(Some("a"))),
            Caller::anonymous()
        );
    }
}
