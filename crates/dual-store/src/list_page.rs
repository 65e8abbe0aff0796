//! One page of an owner's listing: what [`ResourceStore::list`](crate::ResourceStore::list) reads.

use std::num::NonZeroUsize;

use dual_core::ResourceId;

/// Up to `limit` live records of `owner`, newest first, below the id `before` when given (the last
/// id of the previous page): the page [`ResourceStore::list`](crate::ResourceStore::list) returns.
///
/// ```
/// use dual_core::ResourceId;
/// use dual_store::ListPage;
///
/// let first = ListPage::new(Some("tenant-a"), 50);
/// let last_seen = ResourceId::new();
/// let next = first.below(Some(last_seen));
/// assert_eq!((next.owner, next.before, next.limit), (Some("tenant-a"), Some(last_seen), 50));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListPage<'a> {
    /// Exactly this owner's records; `None`: the records created without one.
    pub owner: Option<&'a str>,
    /// Only ids below this one (the cursor); `None`: from the newest.
    pub before: Option<ResourceId>,
    /// How many records at the most.
    pub limit: usize,
}

impl<'a> ListPage<'a> {
    /// The first `limit` records of `owner`, newest first.
    #[must_use]
    pub const fn new(owner: Option<&'a str>, limit: usize) -> Self {
        Self {
            owner,
            before: None,
            limit,
        }
    }

    /// The same page below the id `before` (`None`: from the newest).
    #[must_use]
    pub const fn below(self, before: Option<ResourceId>) -> Self {
        Self { before, ..self }
    }

    /// What a store asks its backend for this page, or `None` when the page asks for no record (a
    /// `limit` of 0): a store answers that with an empty listing, asking its backend nothing.
    ///
    /// ```
    /// use dual_store::ListPage;
    ///
    /// assert!(ListPage::new(Some("tenant-a"), 0).listing().is_none());
    /// let listing = ListPage::new(Some("tenant-a"), 50).listing();
    /// assert_eq!(listing.map(|l| l.limit.get()), Some(50));
    /// ```
    #[must_use]
    pub fn listing(self) -> Option<Listing<'a>> {
        Some(Listing {
            owner: self.owner,
            before: self.before,
            limit: NonZeroUsize::new(self.limit)?,
        })
    }
}

/// A [`ListPage`] that asks for at least one record ([`ListPage::listing`]): what a store's backend
/// lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listing<'a> {
    /// Exactly this owner's records; `None`: the records created without one.
    pub owner: Option<&'a str>,
    /// Only ids below this one (the cursor); `None`: from the newest.
    pub before: Option<ResourceId>,
    /// How many records at the most.
    pub limit: NonZeroUsize,
}
