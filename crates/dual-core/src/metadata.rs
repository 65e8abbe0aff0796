//! The metadata (`GET /{id}`) and pin (`PUT /{id}`) responses.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::{Column, Consistency, ResourceId, ResourceRecord};

/// A resource's lifecycle status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ResourceStatus {
    /// The result can be fetched.
    Ready,
}

/// What `GET /{id}` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceMetadata {
    /// The resource's id.
    pub id: ResourceId,
    /// Its name.
    pub name: String,
    /// Always `ready` for now (long-running queries are a later step).
    pub status: ResourceStatus,
    /// The row count at creation.
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
}

impl From<&ResourceRecord> for ResourceMetadata {
    fn from(record: &ResourceRecord) -> Self {
        Self {
            id: record.id,
            name: record.name.clone(),
            status: ResourceStatus::Ready,
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
