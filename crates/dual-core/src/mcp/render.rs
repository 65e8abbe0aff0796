//! How a dual response is rendered for one client: the protocol version and the text format.

use super::ProtocolVersion;

/// The text the model reads in `content`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TextFormat {
    /// A compact table: the typed header once, then one `|`-separated line per sample row. About half
    /// the bytes of the JSON, with the same values (see `docs/PERFORMANCE.md`).
    #[default]
    Table,
    /// The `structuredContent` object as compact JSON, as the MCP specification suggests for tools
    /// with structured output ("SHOULD also return the serialized JSON in a TextContent block"); for
    /// hosts that parse the text block instead of `structuredContent`.
    Json,
}

/// How to render a [`DualResponse`](super::DualResponse): the negotiated protocol version and the
/// text format. The default is the newest version and the [`TextFormat::Table`] text.
///
/// ```
/// use dual_core::mcp::{ProtocolVersion, RenderOptions, TextFormat};
/// let options = RenderOptions::new(ProtocolVersion::V2025_03_26).with_text(TextFormat::Json);
/// assert_eq!(options.version(), ProtocolVersion::V2025_03_26);
/// assert_eq!(options.text(), TextFormat::Json);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RenderOptions {
    version: ProtocolVersion,
    text: TextFormat,
}

impl RenderOptions {
    /// Rendering for a client that negotiated `version`, with the default text format.
    #[must_use]
    pub fn new(version: ProtocolVersion) -> Self {
        Self {
            version,
            text: TextFormat::default(),
        }
    }

    /// The same options with `text` as the text format.
    #[must_use]
    pub fn with_text(mut self, text: TextFormat) -> Self {
        self.text = text;
        self
    }

    /// The protocol version.
    #[must_use]
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// The text format.
    #[must_use]
    pub fn text(&self) -> TextFormat {
        self.text
    }
}
