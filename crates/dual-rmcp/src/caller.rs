//! [`caller_from_extensions`]: the [`Caller`] of an MCP request, as the HTTP layer in front of rmcp
//! authenticated it.

use dual_server::Caller;
use rmcp::model::Extensions;

/// The [`Caller`] of an MCP request, as the HTTP layer in front of rmcp authenticated it.
///
/// rmcp's streamable HTTP server puts the HTTP request head (`http::request::Parts`) into every MCP
/// request's extensions (`RequestContext::extensions`); an authentication middleware in front of it
/// puts a [`Caller`] into that head's extensions. This reads it back, and also accepts a [`Caller`]
/// placed directly into the MCP extensions (custom transports). Anything else — stdio, a request no
/// middleware authenticated — is [`Caller::anonymous`], which sees only resources created without
/// an owner.
#[must_use]
pub fn caller_from_extensions(extensions: &Extensions) -> Caller {
    extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .or_else(|| extensions.get::<Caller>())
        .cloned()
        .unwrap_or_default()
}
