//! MCP content blocks.

use serde::{Deserialize, Serialize};

/// One block of a tool result's `content` array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// `{"type":"text","text":…}`.
    Text {
        /// The text.
        text: String,
    },
    /// `{"type":"resource_link","uri":…,"name":…,"mimeType":…,"description":…}`.
    ResourceLink {
        /// The resource URI, e.g. `resource://01J…`.
        uri: String,
        /// The resource's name.
        name: String,
        /// Its MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// A one-line description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}
