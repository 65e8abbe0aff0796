//! Who is asking: the principal an adapter authenticated, or nobody.

use dual_core::{ResourceId, ResourceRecord};
use dual_store::Viewer;

/// The caller of a [`DualResponseServer`](crate::DualResponseServer) operation, as an adapter
/// (the REST handler's hook, the MCP glue) authenticated it.
///
/// The server alone decides what a caller may see: a resource created with an
/// [`owner`](crate::CreateResponse::owner) is visible only to a caller with that owner; a resource
/// created without one is visible to every caller. Any other caller gets exactly what an unknown id
/// gets (`RESOURCE_NOT_FOUND`), on every surface, so a resource's existence never leaks.
///
/// ```
/// use dual_server::Caller;
/// let tenant = Caller::owner("tenant-a");
/// assert_eq!(tenant.owner_name(), Some("tenant-a"));
/// assert_eq!(Caller::anonymous().owner_name(), None);
/// assert_eq!(Caller::from_owner(None::<String>), Caller::anonymous());
/// ```
///
/// A verified capability link ([`Links`](crate::links::Links)) yields a third kind of caller, a
/// *grant*: it sees the one resource the link names (whoever owns it) and nothing else, may not pin
/// or delete it, and counts as anonymous for the quotas. Only this crate makes one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Caller {
    owner: Option<String>,
    /// The one resource a link's grant may read; `None` for every other caller.
    grant: Option<ResourceId>,
}

impl Caller {
    /// A caller nobody authenticated: sees only resources created without an owner.
    #[must_use]
    pub const fn anonymous() -> Self {
        Self {
            owner: None,
            grant: None,
        }
    }

    /// A caller authenticated as `owner` (a tenant, a user).
    #[must_use]
    pub fn owner(owner: impl Into<String>) -> Self {
        Self {
            owner: Some(owner.into()),
            grant: None,
        }
    }

    /// [`Caller::owner`] when `owner` is `Some`, else [`Caller::anonymous`].
    #[must_use]
    pub fn from_owner(owner: Option<impl Into<String>>) -> Self {
        Self {
            owner: owner.map(Into::into),
            grant: None,
        }
    }

    /// The grant of a verified link to `id`: reads that resource only.
    pub(crate) const fn grant(id: ResourceId) -> Self {
        Self {
            owner: None,
            grant: Some(id),
        }
    }

    /// The resource a link's grant reads; `None` for a caller that is not a grant.
    #[must_use]
    pub const fn granted(&self) -> Option<ResourceId> {
        self.grant
    }

    /// Whether the caller is a link's grant (which may not pin, delete or mint links).
    #[must_use]
    pub const fn is_grant(&self) -> bool {
        self.grant.is_some()
    }

    /// The owner the caller authenticated as, if any (`None` for a link's grant).
    #[must_use]
    pub fn owner_name(&self) -> Option<&str> {
        self.owner.as_deref()
    }

    /// Whether this caller may see (and so read, pin or delete) `record`: the one authorization rule.
    /// A link's grant sees only its resource.
    #[must_use]
    pub fn may_see(&self, record: &ResourceRecord) -> bool {
        self.viewer().sees(record)
    }

    /// The caller as a store checks it in
    /// [`ResourceStore::record_access`](dual_store::ResourceStore::record_access), which counts an
    /// access only for a caller that may see the record: the same rule as [`Caller::may_see`].
    #[must_use]
    pub fn viewer(&self) -> Viewer<'_> {
        match (self.grant, self.owner.as_deref()) {
            (Some(id), _) => Viewer::Grant(id),
            (None, Some(owner)) => Viewer::Owner(owner),
            (None, None) => Viewer::Anonymous,
        }
    }
}
