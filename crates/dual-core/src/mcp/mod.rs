//! MCP formatting of a dual response: `content`, `structuredContent`, the tool result and its output schema.
//!
//! Everything here is plain serde JSON, independent of any MCP SDK; `dual-rmcp` maps it to rmcp types.
//! Rendering follows the client's [`ProtocolVersion`] (through [`RenderOptions`]): `resource_link`
//! and `structuredContent` only from 2025-06-18 on. The text the model reads is a summary and a
//! compact table ([`TextFormat::Table`]) by default, or the JSON of `structuredContent`
//! ([`TextFormat::Json`]).

mod content;
mod fit;
mod render;
mod response;
mod schema;
mod structured;
mod text;
mod version;

pub use content::ContentBlock;
pub use render::{RenderOptions, TextFormat};
pub use response::{DualResponse, ResponseProfile};
pub use schema::output_schema;
pub use structured::{ResourceLinkInfo, ResultMetadata, StructuredContent, ToolResult};
pub use version::ProtocolVersion;

/// The MIME type of a resource's data.
pub const JSON_MIME_TYPE: &str = "application/json";
