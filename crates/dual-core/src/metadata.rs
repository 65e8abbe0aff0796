//! The metadata (`GET /{id}`) and pin (`PUT /{id}`) responses.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::{
    Column, ResourceId, ResourceRecord,
    consistency::Consistency,
    status::{FailureSummary, Progress, ResourceStatus},
};

/// What `GET /{id}` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceMetadata {
    /// The resource's id.
    pub id: ResourceId,
    /// Its name.
    pub name: String,
    /// `pending`, `ready` or `failed` (docs/DESIGN.md §8).
    pub status: ResourceStatus,
    /// The row count at creation; while pending, the rows so far.
    pub total_count: u64,
    /// The columns.
    pub columns: Vec<Column>,
    /// Creation time.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Expiry; `null` when pinned.
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
    /// Reads served, this one included.
    pub access_count: u64,
    /// Time of the latest read.
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_accessed_at: Option<OffsetDateTime>,
    /// Custom JSON given at creation.
    pub metadata: Value,
    /// `snapshot` (pages and exports serve the rows counted at creation) or `live` (they re-execute
    /// the query); `live` when a server from before snapshots omits it.
    #[serde(default)]
    pub consistency: Consistency,
    /// While pending: the rows so far and the time since the query started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
    /// While the snapshot of a ready resource is still being written: the rows readable now (of
    /// `total_count`); absent once every row is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spooled_rows: Option<u64>,
    /// When failed: the failure's code and whether a new run may succeed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<FailureSummary>,
}

impl ResourceMetadata {
    /// The metadata of `record` as of `now` (the progress of a pending record counts from its
    /// creation to `now`).
    #[must_use]
    pub fn at(record: &ResourceRecord, now: time::OffsetDateTime) -> Self {
        let mut metadata = Self::from(record);
        if let Some(progress) = &mut metadata.progress {
            let elapsed = (now - record.created_at).whole_milliseconds();
            progress.elapsed_ms = u64::try_from(elapsed).unwrap_or(0);
        }
        metadata
    }
}

impl From<&ResourceRecord> for ResourceMetadata {
    /// The metadata of `record`; a pending record's `progress.elapsed_ms` is 0 (see
    /// [`ResourceMetadata::at`]).
    fn from(record: &ResourceRecord) -> Self {
        Self {
            progress: (record.status == ResourceStatus::Pending).then_some(Progress {
                rows: record.total_count,
                elapsed_ms: 0,
            }),
            error: match (record.status, &record.failure) {
                (ResourceStatus::Failed, Some(failure)) => Some(FailureSummary::from(failure)),
                _ => None,
            },
            spooled_rows: record.spooled_rows.filter(|_| record.is_spooling()),
            id: record.id,
            name: record.name.clone(),
            status: record.status,
            total_count: record.total_count,
            columns: record.columns.clone(),
            created_at: record.created_at,
            expires_at: record.expires_at,
            access_count: record.access_count,
            last_accessed_at: record.last_accessed_at,
            metadata: record.metadata.clone(),
            consistency: record.consistency,
        }
    }
}

/// The pin status word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum PinStatus {
    /// The resource no longer expires.
    Pinned,
}

/// What `PUT /{id}` returns: `{"status":"pinned","expires_at":null}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinResponse {
    /// Always `pinned`.
    pub status: PinStatus,
    /// Always `null`: a pinned resource has no expiry.
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
}

impl PinResponse {
    /// The response to a successful pin.
    #[must_use]
    pub const fn pinned() -> Self {
        Self {
            status: PinStatus::Pinned,
            expires_at: None,
        }
    }
}
