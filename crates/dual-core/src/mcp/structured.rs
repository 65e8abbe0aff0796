//! `structuredContent` and the whole tool result.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::ContentBlock;
use crate::{Column, Row, profile::Profile, status::ResourceStatus};

/// `structuredContent.resource`: where the full result lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceLinkInfo {
    /// `resource://{id}`.
    pub uri: String,
    /// `{base_url}/{id}`, the REST endpoint.
    pub url: String,
    /// The resource's name.
    pub name: String,
    /// `application/json`.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
}

/// `structuredContent.metadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultMetadata {
    /// Rows the query matched.
    pub total_count: u64,
    /// Rows in `results`.
    pub sample_count: u64,
    /// The columns (absent in the reference implementation's shape, hence the default).
    #[serde(default)]
    pub columns: Vec<Column>,
    /// When the query ran.
    #[serde(with = "time::serde::rfc3339")]
    pub executed_at: OffsetDateTime,
    /// When the resource expires; `null` when pinned (absent in the reference shape).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
    /// `pending` while the query still runs (`total_count` then counts the rows so far); absent
    /// when ready (docs/DESIGN.md §8).
    #[serde(default, skip_serializing_if = "ResourceStatus::is_ready")]
    pub status: ResourceStatus,
}

/// The tool result's `structuredContent` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuredContent {
    /// The sample rows.
    pub results: Arc<[Row]>,
    /// The link to the full result.
    pub resource: ResourceLinkInfo,
    /// Counts, columns and times.
    pub metadata: ResultMetadata,
    /// The profile of every column, when it was complete at the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Arc<Profile>>,
}

/// A whole MCP tool result: `{"content": […], "structuredContent": {…}}`; `structuredContent` is
/// absent for protocol versions before 2025-06-18, which do not define it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Text blocks and the `resource_link`.
    pub content: Vec<ContentBlock>,
    /// The structured result; `None` for protocol versions before 2025-06-18.
    #[serde(
        rename = "structuredContent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<StructuredContent>,
}
