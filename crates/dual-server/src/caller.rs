//! Who is asking: the principal an adapter authenticated, or nobody.

use dual_core::ResourceRecord;

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
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Caller {
    owner: Option<String>,
}

impl Caller {
    /// A caller nobody authenticated: sees only resources created without an owner.
    #[must_use]
    pub const fn anonymous() -> Self {
        Self { owner: None }
    }

    /// A caller authenticated as `owner` (a tenant, a user).
    #[must_use]
    pub fn owner(owner: impl Into<String>) -> Self {
        Self {
            owner: Some(owner.into()),
        }
    }

    /// [`Caller::owner`] when `owner` is `Some`, else [`Caller::anonymous`].
    #[must_use]
    pub fn from_owner(owner: Option<impl Into<String>>) -> Self {
        Self {
            owner: owner.map(Into::into),
        }
    }

    /// The owner the caller authenticated as, if any.
    #[must_use]
    pub fn owner_name(&self) -> Option<&str> {
        self.owner.as_deref()
    }

    /// Whether this caller may see (and so read, pin or delete) `record`: the one authorization rule.
    #[must_use]
    pub fn may_see(&self, record: &ResourceRecord) -> bool {
        record.visible_to(self.owner.as_deref())
    }
}
