//! What every call of a store shares: the connection, the key names, the grace window and the
//! clock.

use std::time::Duration;

use dual_core::ResourceId;
use dual_core::task::TaskId;
use dual_store::Clock;
use time::OffsetDateTime;

use crate::connection::Connection;

pub(crate) struct Shared {
    pub(crate) connection: Connection,
    pub(crate) keys: Keys,
    /// The URL with its password redacted, for `Debug`.
    pub(crate) url: String,
    pub(crate) grace: Duration,
    pub(crate) purge_batch: usize,
    pub(crate) clock: Clock,
}

/// The key names under one prefix.
pub(crate) struct Keys {
    pub(crate) prefix: String,
    /// `{prefix}r:`, which the ids of records follow.
    pub(crate) records: String,
    /// `{prefix}expiry`, the sorted set of unpinned records by expiry.
    pub(crate) expiry: String,
    /// `{prefix}pinned`, the set of pinned records' ids.
    pub(crate) pinned: String,
    /// `{prefix}o`, which a record's owner field (`-`, or `=` and the owner) follows: the sorted set
    /// of that owner's record ids, all at score 0, so ids sort as text (ULIDs: by creation).
    pub(crate) owners: String,
    /// `{prefix}t:`, which the ids of tasks follow.
    pub(crate) tasks: String,
    /// `{prefix}m:`, which the ids of MCP sessions follow.
    pub(crate) sessions: String,
}

impl Keys {
    pub(crate) fn new(prefix: String) -> Self {
        Self {
            records: format!("{prefix}r:"),
            expiry: format!("{prefix}expiry"),
            pinned: format!("{prefix}pinned"),
            owners: format!("{prefix}o"),
            tasks: format!("{prefix}t:"),
            sessions: format!("{prefix}m:"),
            prefix,
        }
    }

    pub(crate) fn record(&self, id: ResourceId) -> String {
        format!("{}{id}", self.records)
    }

    /// The listing of the owner whose `o` field is `owner_field`.
    pub(crate) fn owner_listing(&self, owner_field: &str) -> String {
        format!("{}{owner_field}", self.owners)
    }

    pub(crate) fn task(&self, id: TaskId) -> String {
        format!("{}{id}", self.tasks)
    }

    pub(crate) fn session(&self, id: &str) -> String {
        format!("{}{id}", self.sessions)
    }

    pub(crate) fn records(&self) -> &str {
        &self.records
    }
}

impl Shared {
    /// The key TTL for a record expiring at `at`: the time left plus the grace window, in ms.
    pub(crate) fn ttl_millis(&self, at: OffsetDateTime) -> i64 {
        let left = (at - self.clock.now()).whole_milliseconds().max(0);
        let grace = i128::try_from(self.grace.as_millis()).unwrap_or(i128::MAX);
        i64::try_from(left.saturating_add(grace))
            .unwrap_or(i64::MAX)
            .max(1)
    }
}
