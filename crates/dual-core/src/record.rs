//! The stored resource record.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::{
    Column, QuerySpec, ResourceId, Row,
    consistency::Consistency,
    status::{QueryFailure, ResourceStatus},
};

/// Everything a store keeps about one resource.
///
/// Field names are the wire names of docs/DESIGN.md §3; timestamps are RFC 3339.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceRecord {
    /// The resource's id.
    pub id: ResourceId,
    /// A human-readable name, e.g. `"Institution Search Results"`.
    pub name: String,
    /// The query: re-executed for the pages and exports of a live resource.
    pub query: QuerySpec,
    /// The result's columns.
    pub columns: Vec<Column>,
    /// The row count at creation; while the query is pending, the rows written so far.
    pub total_count: u64,
    /// While the snapshot is still being written after the model was answered with the exact
    /// `total_count`: the rows already spooled (readable). `None` once the snapshot is complete, and
    /// for pending, failed and live resources (docs/DESIGN.md §8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spooled_rows: Option<u64>,
    /// The sample rows shown to the model. Shared, so that copying a record (every store read does)
    /// does not copy its rows.
    pub sample: Arc<[Row]>,
    /// When the resource was created (the query's execution time).
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When it expires; `None` once pinned.
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
    /// How many reads it has served.
    pub access_count: u64,
    /// When it was last read.
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_accessed_at: Option<OffsetDateTime>,
    /// The tenant or principal it is bound to, if any.
    pub owner: Option<String>,
    /// Custom JSON supplied at creation.
    pub metadata: Value,
    /// Whether pages and exports are served from the snapshot written at creation or re-execute the
    /// query; records stored before snapshots existed read as [`Consistency::Live`].
    #[serde(default)]
    pub consistency: Consistency,
    /// `pending` while the query runs, then `ready` or `failed` (docs/DESIGN.md §8); records stored
    /// before statuses existed read as ready.
    #[serde(default)]
    pub status: ResourceStatus,
    /// While pending or spooling: until when the instance running the query has promised to renew
    /// this record. Such a record past its lease lost its instance, and reads as failed
    /// (`query_interrupted`).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub lease_expires_at: Option<OffsetDateTime>,
    /// Why the query failed, when `status` is `failed`.
    #[serde(default)]
    pub failure: Option<QueryFailure>,
}

impl ResourceRecord {
    /// Whether the record is past its expiry at `now`.
    ///
    /// A record expires at `expires_at` exactly: it is served strictly before that instant, never at
    /// or after it. Pinned records never expire.
    #[must_use]
    pub fn is_expired_at(&self, now: OffsetDateTime) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }

    /// Whether the record is pending or spooling and its lease has lapsed at `now`: the instance
    /// running its query died, and the resource is to be treated as failed (`query_interrupted`).
    #[must_use]
    pub fn lease_lapsed_at(&self, now: OffsetDateTime) -> bool {
        self.is_running() && self.lease_expires_at.is_none_or(|at| at <= now)
    }

    /// Whether an instance is still running the record's query: it is pending, or its snapshot is
    /// still being written ([`ResourceRecord::is_spooling`]).
    #[must_use]
    pub fn is_running(&self) -> bool {
        self.status == ResourceStatus::Pending || self.is_spooling()
    }

    /// Whether the record is ready with its exact `total_count` while its snapshot is still being
    /// written: rows up to `spooled_rows` can be read now, later ones once written.
    #[must_use]
    pub fn is_spooling(&self) -> bool {
        self.status == ResourceStatus::Ready && self.spooled_rows.is_some()
    }

    /// Whether the record has been pinned (has no expiry).
    #[must_use]
    pub fn is_pinned(&self) -> bool {
        self.expires_at.is_none()
    }

    /// Whether a caller mapped to `owner` may see this record: records without an owner are visible
    /// to everyone, records with one only to that owner.
    #[must_use]
    pub fn visible_to(&self, owner: Option<&str>) -> bool {
        match &self.owner {
            None => true,
            Some(bound) => owner == Some(bound.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_stored_before_snapshots_reads_as_live() {
        let json = serde_json::json!({
            "id": ResourceId::new(), "name": "old", "query": {"kind": "k", "params": null},
            "columns": [], "total_count": 0, "sample": [], "created_at": "2026-01-01T00:00:00Z",
            "expires_at": null, "access_count": 0, "last_accessed_at": null, "owner": null,
            "metadata": null,
        });
        let record: ResourceRecord = serde_json::from_value(json).unwrap();
        assert_eq!(record.consistency, Consistency::Live);
        assert_eq!(
            (record.status, record.lease_expires_at, record.failure.clone()),
            (ResourceStatus::Ready, None, None)
        );
        let mut snapshot = record;
        snapshot.consistency = Consistency::Snapshot;
        let text = serde_json::to_string(&snapshot).unwrap();
        assert!(
            text.contains(r#""consistency":"snapshot","status":"ready""#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<ResourceRecord>(&text).unwrap(), snapshot);
    }
}
