//! MCP formatting of a dual response: `content`, `structuredContent`, the tool result and its output schema.
//!
//! Everything here is plain serde JSON, independent of any MCP SDK; `dual-rmcp` maps it to rmcp types.

mod content;
mod response;
mod schema;
mod structured;

pub use content::ContentBlock;
pub use response::DualResponse;
pub use schema::output_schema;
pub use structured::{ResourceLinkInfo, ResultMetadata, StructuredContent, ToolResult};

/// The MIME type of a resource's data.
pub const JSON_MIME_TYPE: &str = "application/json";
