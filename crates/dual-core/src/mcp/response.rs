//! A created dual response and its MCP renderings.

use std::sync::Arc;

use time::OffsetDateTime;

use super::{
    ContentBlock, JSON_MIME_TYPE, RenderOptions, ResourceLinkInfo, ResultMetadata, StructuredContent,
    TextFormat, ToolResult, text,
};
use crate::{
    Column, ResourceId, ResourceRecord, Row,
    profile::Profile,
    status::ResourceStatus,
    uri::{resource_uri, resource_url},
};

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
///     status: dual_core::status::ResourceStatus::Ready,
///     profile: dual_core::mcp::ResponseProfile::None,
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
    /// The resource name. Shown everywhere through
    /// [`display_safe`](crate::escape::display_safe): its control characters and bidirectional
    /// controls are escaped in the summary, the `resource_link` and `structuredContent`.
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
    /// `pending` when the query was still running as `create_response` returned (`total_count` then
    /// counts the rows so far); `ready` otherwise.
    pub status: ResourceStatus,
    /// The column profile of every row: carried here, to be read later, or none.
    pub profile: ResponseProfile,
}

/// Where a dual response's column profile ([`Profile`]) is.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub enum ResponseProfile {
    /// None: the result is live (re-executed per page), or its server computes no profile.
    #[default]
    None,
    /// Still being computed with the snapshot (or too large for the tool result): the model reads it
    /// with `resources/read` on `{uri}/profile`.
    Later,
    /// Complete at the answer: in `structuredContent.profile` and a text block.
    Here(Arc<Profile>),
}

impl ResponseProfile {
    /// The profile, when the response carries it.
    #[must_use]
    pub fn carried(&self) -> Option<&Arc<Profile>> {
        match self {
            Self::Here(profile) => Some(profile),
            _ => None,
        }
    }
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
            status: record.status,
            profile: ResponseProfile::None,
        }
    }

    /// The name as a model or a person sees it: `display_safe` (a name is often made from the
    /// model's SQL, which can hold `ESC` or U+202E).
    fn display_name(&self) -> String {
        crate::escape::display_safe(&self.name).into_owned()
    }

    /// The first text block: the result's name, the total and shown row counts, the link the
    /// application fetches the complete result from, and how the model reads more rows itself
    /// (`resources/read` on `{uri}?offset=…&limit=…`).
    #[must_use]
    pub fn summary_text(&self) -> String {
        text::summary(self)
    }

    /// The second text block in the default [`TextFormat::Table`]: the typed columns once, then one
    /// `|`-separated line per sample row.
    #[must_use]
    pub fn table_text(&self) -> String {
        text::table(&self.columns, &self.sample)
    }

    /// The `structuredContent` object.
    #[must_use]
    pub fn structured_content(&self) -> StructuredContent {
        StructuredContent {
            results: Arc::clone(&self.sample),
            resource: ResourceLinkInfo {
                uri: self.uri.clone(),
                url: self.url.clone(),
                name: self.display_name(),
                mime_type: JSON_MIME_TYPE.to_owned(),
            },
            metadata: ResultMetadata {
                total_count: self.total_count,
                sample_count: self.sample.len() as u64,
                columns: self.columns.clone(),
                executed_at: self.executed_at,
                expires_at: self.expires_at,
                status: self.status,
            },
            profile: self.profile.carried().cloned(),
        }
    }

    /// The `content` array for the newest protocol version, with the table text.
    #[must_use]
    pub fn content(&self) -> Vec<ContentBlock> {
        self.content_with(&RenderOptions::default(), None)
    }

    fn content_with(
        &self,
        options: &RenderOptions,
        structured: Option<&StructuredContent>,
    ) -> Vec<ContentBlock> {
        let second = match options.text() {
            TextFormat::Json => {
                let owned;
                let structured = match structured {
                    Some(structured) => structured,
                    None => {
                        owned = self.structured_content();
                        &owned
                    }
                };
                // Serialising plain data with string keys cannot fail; an empty object is a safe fallback.
                serde_json::to_string(structured).unwrap_or_else(|_| "{}".to_owned())
            }
            // `TextFormat` is non-exhaustive only for other crates.
            TextFormat::Table => self.table_text(),
        };
        let table = matches!(options.text(), TextFormat::Table);
        let mut content = vec![
            ContentBlock::Text {
                text: self.summary_text(),
            },
            ContentBlock::Text { text: second },
        ];
        // The JSON text already holds the profile; the table gets it as lines of its own.
        if table && let Some(profile) = self.profile.carried() {
            content.push(ContentBlock::Text { text: profile.text() });
        }
        // Before 2025-06-18 there is no `resource_link`: the summary already names the URI.
        if options.version().has_resource_link() {
            content.push(ContentBlock::ResourceLink {
                uri: self.uri.clone(),
                name: self.display_name(),
                mime_type: Some(JSON_MIME_TYPE.to_owned()),
                description: Some(format!("{} rows", self.total_count)),
            });
        }
        content
    }

    /// The whole tool result for the newest protocol version with the table text:
    /// `{"content": …, "structuredContent": …}`.
    #[must_use]
    pub fn tool_result(&self) -> ToolResult {
        self.tool_result_with(&RenderOptions::default())
    }

    /// The whole tool result as `options` asks: versions before 2025-06-18 get neither
    /// `structuredContent` nor a `resource_link`, only text blocks that carry the same information.
    #[must_use]
    pub fn tool_result_with(&self, options: &RenderOptions) -> ToolResult {
        let structured = options
            .version()
            .has_structured_content()
            .then(|| self.structured_content());
        ToolResult {
            content: self.content_with(options, structured.as_ref()),
            structured_content: structured,
        }
    }
}
