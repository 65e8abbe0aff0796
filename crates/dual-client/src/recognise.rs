//! The client's parse operations: a tool result, its text, a typed `structuredContent` or a resource's
//! location, to a `ParsedDualResponse`.

use dual_core::mcp::StructuredContent;
use serde_json::Value;

use crate::client::DualResponseClient;
use crate::error::ClientError;
use crate::parse::{self, Found};
use crate::parsed::ParsedDualResponse;

impl DualResponseClient {
    /// Recognises a dual response in `value`; `None` when it is not one (or is a malformed one).
    ///
    /// Accepted shapes: a whole MCP tool result; `structuredContent` alone; a `content` array (or a
    /// single text block) whose text carries the JSON; a lone `resource_link` (needs a base URL); tool
    /// output wrapped by agent SDKs (a JSON string or object in an `output` or `result` field, possibly
    /// inside a text block); and the reference implementation's shape without `columns` and
    /// `expires_at`. See [`parse_strict`](Self::parse_strict) for why a value was rejected.
    #[must_use]
    pub fn parse(&self, value: &Value) -> Option<ParsedDualResponse> {
        self.parse_strict(value).ok()
    }

    /// Like [`parse`](Self::parse), but says what is wrong.
    ///
    /// # Errors
    /// A [`PARSE_ERROR`](crate::ClientErrorCode::Parse) naming the malformed field (say,
    /// `metadata.total_count must be a non-negative integer`), or saying that nothing in `value` looks
    /// like a dual response.
    pub fn parse_strict(&self, value: &Value) -> Result<ParsedDualResponse, ClientError> {
        let found = parse::find(value)?;
        self.parsed(found)
    }

    /// Parses text holding any shape [`parse`](Self::parse) accepts, e.g. a tool result read from a file.
    ///
    /// # Errors
    /// A [`PARSE_ERROR`](crate::ClientErrorCode::Parse) when the text is not JSON or not a dual response.
    pub fn parse_str(&self, text: &str) -> Result<ParsedDualResponse, ClientError> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            ClientError::parse(format!("not JSON (line {}, column {})", e.line(), e.column())).with_source(e)
        })?;
        self.parse_strict(&value)
    }

    /// Wraps an already typed `structuredContent` (from `dual-core` or an MCP SDK).
    ///
    /// # Errors
    /// A [`PARSE_ERROR`](crate::ClientErrorCode::Parse) when its resource URL cannot be used.
    pub fn from_structured(&self, structured: &StructuredContent) -> Result<ParsedDualResponse, ClientError> {
        self.parsed(Found::from_structured(structured))
    }

    /// A handle on a resource known only by its REST URL (`https://…/resources/{id}`) or, with a base
    /// URL configured, its URI (`resource://{id}`): no sample, unknown count until
    /// [`load_metadata`](ParsedDualResponse::load_metadata).
    ///
    /// # Errors
    /// A [`PARSE_ERROR`](crate::ClientErrorCode::Parse) when it is neither.
    pub fn resource(&self, url_or_uri: &str) -> Result<ParsedDualResponse, ClientError> {
        self.parsed(Found::from_location(url_or_uri))
    }

    fn parsed(&self, found: Found) -> Result<ParsedDualResponse, ClientError> {
        ParsedDualResponse::from_found(self.clone(), found).map_err(ClientError::parse)
    }
}
