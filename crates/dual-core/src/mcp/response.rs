//! A created dual response and its MCP renderings.

use std::sync::Arc;

use time::OffsetDateTime;

use super::{ContentBlock, JSON_MIME_TYPE, ResourceLinkInfo, ResultMetadata, StructuredContent, ToolResult};
use crate::{Column, ResourceId, ResourceRecord, Row, resource_uri, resource_url};

/// A dual response: the sample and count for the model, the link for the application.
///
/// ```
/// use dual_core::{Column, ColumnType, DualResponse, ResourceId};
/// let rows = vec![serde_json::json!({"id": 1}).as_object().cloned().unwrap_or_default()];
/// let response = DualResponse {
///     id: ResourceId::new(),
///     uri: "resource://x".into(),
///     url: "https://api.example.com/resources/x".into(),
///     name: "Results".into(),
///     sample: rows.into(),
///     total_count: 847,
///     columns: vec![Column::new("id", ColumnType::Integer)],
///     executed_at: time::OffsetDateTime::UNIX_EPOCH,
///     expires_at: None,
/// };
/// let result = serde_json::to_value(response.tool_result()).unwrap_or_default();
/// assert_eq!(result["structuredContent"]["metadata"]["total_count"], 847);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DualResponse {
    /// The resource id.
    pub id: ResourceId,
    /// `scheme://{id}`.
    pub uri: String,
    /// `{base_url}/{id}`.
    pub url: String,
    /// The resource name.
    pub name: String,
    /// The sample rows (shared with the stored record, never copied).
    pub sample: Arc<[Row]>,
    /// Rows the query matched.
    pub total_count: u64,
    /// The columns.
    pub columns: Vec<Column>,
    /// When the query ran.
    pub executed_at: OffsetDateTime,
    /// When the resource expires; `None` when pinned.
    pub expires_at: Option<OffsetDateTime>,
}

impl DualResponse {
    /// The response for a stored `record`, with URIs built from `scheme` and `base_url`.
    #[must_use]
    pub fn from_record(record: ResourceRecord, scheme: &str, base_url: &str) -> Self {
        Self {
            id: record.id,
            uri: resource_uri(scheme, record.id),
            url: resource_url(base_url, record.id),
            name: record.name,
            sample: record.sample,
            total_count: record.total_count,
            columns: record.columns,
            executed_at: record.created_at,
            expires_at: record.expires_at,
        }
    }

    /// The first text block: what was found, how much of it is shown, and where the rest is.
    #[must_use]
    pub fn summary_text(&self) -> String {
        let results = if self.total_count == 1 {
            "result"
        } else {
            "results"
        };
        let rows = if self.sample.len() == 1 { "row" } else { "rows" };
        format!(
            "Found {} {results} for {:?}; {} sample {rows} below. Full data: {}",
            self.total_count,
            self.name,
            self.sample.len(),
            self.uri
        )
    }

    /// The `structuredContent` object.
    #[must_use]
    pub fn structured_content(&self) -> StructuredContent {
        StructuredContent {
            results: Arc::clone(&self.sample),
            resource: ResourceLinkInfo {
                uri: self.uri.clone(),
                url: self.url.clone(),
                name: self.name.clone(),
                mime_type: JSON_MIME_TYPE.to_owned(),
            },
            metadata: ResultMetadata {
                total_count: self.total_count,
                sample_count: self.sample.len() as u64,
                columns: self.columns.clone(),
                executed_at: self.executed_at,
                expires_at: self.expires_at,
            },
        }
    }

    /// The `content` array: the summary, `structuredContent` as compact JSON (many clients show the
    /// model only `content`), and a `resource_link`.
    #[must_use]
    pub fn content(&self) -> Vec<ContentBlock> {
        self.content_with(&self.structured_content())
    }

    fn content_with(&self, structured: &StructuredContent) -> Vec<ContentBlock> {
        // Serialising plain data with string keys cannot fail; an empty object is a safe fallback.
        let json = serde_json::to_string(structured).unwrap_or_else(|_| "{}".to_owned());
        vec![
            ContentBlock::Text {
                text: self.summary_text(),
            },
            ContentBlock::Text { text: json },
            ContentBlock::ResourceLink {
                uri: self.uri.clone(),
                name: self.name.clone(),
                mime_type: Some(JSON_MIME_TYPE.to_owned()),
                description: Some(format!("{} rows; fetch via REST", self.total_count)),
            },
        ]
    }

    /// The whole tool result, `{"content": …, "structuredContent": …}`.
    #[must_use]
    pub fn tool_result(&self) -> ToolResult {
        let structured = self.structured_content();
        ToolResult {
            content: self.content_with(&structured),
            structured_content: structured,
        }
    }
}
