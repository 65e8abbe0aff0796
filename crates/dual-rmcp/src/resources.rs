//! The results of a [`DualResponseServer`] as MCP resources (feature `server`):
//! `resources/templates/list` ([`resource_templates`]), `resources/read` ([`read_resource`]) and
//! `resources/list` ([`list_resources`]).
//!
//! MCP's `resources/read` has no cursor, so pages are addressed in the URI itself:
//! `resource://{id}` is the first page (the server's default limit), and
//! `resource://{id}?offset=100&limit=100&sort=enrollment:desc` any other one. The text of the single
//! content item is the page as JSON, with the same fields as the REST `POST /{id}` page.
//! [`ResultSurface`](crate::ResultSurface) answers all three for a request as rmcp hands it over.

mod cache;
mod listing;

pub use cache::PINNED_TTL;
pub use listing::{DEFAULT_LIST_PAGE_SIZE, MAX_LIST_PAGE_SIZE, list_resources};

use dual_core::budget::cut_text;
use dual_core::mcp::{JSON_MIME_TYPE, ProtocolVersion};
use dual_core::{
    PageRequest,
    page::{RequestError, parse_sort_param},
    status::{QueryFailure, ResourceStatus},
    uri::parse_resource_uri,
};
use dual_server::{Caller, DualResponseServer, InvalidRequest, ServerError};
use rmcp::model::{
    ErrorData, ListResourceTemplatesResult, ReadResourceResult, ResourceContents, ResourceTemplate,
};
use serde_json::{Value, json};

/// The name of the resource template [`resource_template`] describes.
pub const RESOURCE_TEMPLATE_NAME: &str = "dual-response-result";

/// The template of the resources `server` creates, in RFC 6570 form with the page parameters as a
/// form-style query expansion: `{scheme}://{id}{?offset,limit,sort}` with the server's URI scheme.
/// [`read_resource`] honours every URI it expands to.
#[must_use]
pub fn resource_template(server: &DualResponseServer) -> ResourceTemplate {
    let scheme = &server.config().uri_scheme;
    let mut template = ResourceTemplate::new(
        format!("{scheme}://{{id}}{{?offset,limit,sort}}"),
        RESOURCE_TEMPLATE_NAME,
    );
    template.title = Some("Full result of a dual-response tool call".to_owned());
    template.description = Some(format!(
        "One page of a query result as JSON (data, total_count, returned_count, offset, limit, \
         has_next, has_previous, next_offset). offset: first row (default 0); limit: rows (default \
         {default}, at most {max}); sort: column or column:asc|desc. Example: \
         {scheme}://{{id}}?offset=100&limit=100&sort=enrollment:desc.",
        default = server.config().page_limits.default_limit,
        max = server.config().page_limits.max_limit,
    ));
    template.mime_type = Some(JSON_MIME_TYPE.to_owned());
    template
}

/// The answer to `resources/templates/list`: the one [`resource_template`].
#[must_use]
pub fn resource_templates(server: &DualResponseServer) -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![resource_template(server)])
}

/// How [`read_resource`] answers: for which protocol version.
///
/// ```
/// use dual_core::mcp::ProtocolVersion;
/// use dual_rmcp::resources::ReadOptions;
///
/// // No caching hints by default, as for a client before 2026-07-28.
/// assert_eq!(ReadOptions::default().version, ProtocolVersion::V2025_11_25);
/// let latest = ReadOptions::default().version(ProtocolVersion::V2026_07_28);
/// assert_eq!(latest.version, ProtocolVersion::V2026_07_28);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// The client's protocol version (pass [`protocol_version`](crate::version::protocol_version)
    /// of the request): from 2026-07-28 on, the result carries the caching hints `ttlMs` and
    /// `cacheScope`. The default is 2025-11-25, the newest version that defines neither: the result
    /// carries none.
    pub version: ProtocolVersion,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            version: ProtocolVersion::V2025_11_25,
        }
    }
}

impl ReadOptions {
    /// Answers a client of `version`.
    #[must_use]
    pub fn version(mut self, version: ProtocolVersion) -> Self {
        self.version = version;
        self
    }
}

/// Answers `resources/read` for a resource URI `server` created: one page of its result as JSON, if
/// `caller` may see the resource (the server decides, exactly as for REST).
///
/// The page is chosen by the URI's query (`offset`, `limit`, `sort=field[:asc|desc]`; all optional).
/// Reading counts as an access, like a REST page. The text is at most the server's
/// `max_read_bytes` (default 256 KiB): a page that would pass it is cut to whole rows, with
/// `has_next` and `next_offset` exact. Error text echoing the request is cut to the server's
/// `max_error_text_bytes`.
///
/// A resource whose query is still running (docs/DESIGN.md §8) has no page yet: the text is then
/// `{"status": "pending", "rows_so_far": N, "retry_after_ms": 1000, "message": …}`. One whose query
/// failed reads `{"status": "failed", "error": {"code", "retryable"}, "message": …}`, the message
/// written for the model (the executor's error for `query_execution_failed`). Neither is a
/// protocol error: the model reads what happened and what to do.
///
/// For a client of [`ReadOptions::version`] 2026-07-28 or later, the result carries `ttlMs` and
/// `cacheScope`: a page of a snapshot is fresh until its resource expires, or for [`PINNED_TTL`]
/// once pinned; a page of a live resource and a pending or failed status for 0 ms; a page of an
/// owner's resource is `private`, any other `public`, a status `private`. With the default
/// [`ReadOptions`] it carries none.
///
/// # Errors
/// * `resource not found` (`-32002`; rmcp answers it `-32602` to a 2026-07-28 client) for a URI that
///   is not `{scheme}://{ULID}` with the server's scheme, an unknown id, an expired resource, or a
///   resource bound to another owner;
/// * `invalid params` naming the field for a malformed or out-of-range page parameter or a sort
///   field that is not a column, and naming `offset` (with the `next_offset` to read on from) when
///   the row at the page's offset alone is larger than the server's `max_read_bytes`;
/// * `internal error` with a generic message when the query or the store fails (no internals leak).
pub async fn read_resource(
    server: &DualResponseServer,
    caller: &Caller,
    uri: &str,
    options: &ReadOptions,
) -> Result<ReadResourceResult, ErrorData> {
    let version = options.version;
    let config = server.config();
    let max_error = config.max_error_text_bytes;
    if uri.len() > max_error {
        // The result would echo the URI: one this long is no page address.
        return Err(ErrorData::invalid_params(
            format!(
                "the resource URI takes {} bytes; a page's URI takes at most {max_error}",
                uri.len()
            ),
            Some(json!({"field": "uri"})),
        ));
    }
    let parsed = parse_resource_uri(uri)
        .filter(|parsed| parsed.scheme == config.uri_scheme)
        .ok_or_else(|| not_found(uri, max_error))?;
    if parsed.profile {
        return read_profile(server, caller, uri, parsed.id, parsed.query, options).await;
    }
    let request = page_request(parsed.query.unwrap_or_default())
        .map_err(|e| invalid(&InvalidRequest::from(e), max_error))?;
    let max_read = config.max_read_bytes;
    let page = match server
        .fetch_page_within(parsed.id, caller, &request, max_read)
        .await
    {
        Ok(page) => page,
        Err(ServerError::NotReady { rows }) => {
            return Ok(cache::status_hints(
                status_result(uri, &pending_status(rows)),
                version,
            ));
        }
        Err(ServerError::ResourceFailed { failure }) => {
            let status = status_result(uri, &failed_status(&failure, max_error));
            return Ok(cache::status_hints(status, version));
        }
        Err(error) => return Err(read_error(uri, error, max_error)),
    };
    let (offset, freshness) = (page.pagination().offset, page.freshness());
    let text = page
        .to_json()
        .ok()
        .and_then(|json| String::from_utf8(json).ok())
        .ok_or_else(|| ErrorData::internal_error("the page could not be serialised", None))?;
    if text.len() > max_read {
        // Only a page of one row passes the cap: that row alone is too large for the model.
        return Err(row_too_large(offset, text.len(), max_read));
    }
    let result = ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type(JSON_MIME_TYPE),
    ]);
    Ok(cache::page_hints(
        result,
        freshness,
        server.clock().now(),
        version,
    ))
}

/// `resources/read` of `{scheme}://{id}/profile`: the column profile as JSON (docs/DESIGN.md §4),
/// the rows so far with `"complete": false` while the snapshot is written; the pending or failed
/// status as for a page; `{"status": "no_profile", "message"}` for a live result.
async fn read_profile(
    server: &DualResponseServer,
    caller: &Caller,
    uri: &str,
    id: dual_core::ResourceId,
    query: Option<&str>,
    options: &ReadOptions,
) -> Result<ReadResourceResult, ErrorData> {
    let max_error = server.config().max_error_text_bytes;
    if query.is_some_and(|query| !query.is_empty()) {
        return Err(ErrorData::invalid_params(
            "a profile URI takes no query: read {scheme}://{id}/profile as it is",
            Some(json!({"field": "uri"})),
        ));
    }
    let status = match server.profile(id, caller).await {
        Ok(profile) => {
            let text = serde_json::to_string(profile.as_ref())
                .map_err(|_| ErrorData::internal_error("the profile could not be serialised", None))?;
            let result = ReadResourceResult::new(vec![
                ResourceContents::text(text, uri).with_mime_type(JSON_MIME_TYPE),
            ]);
            return Ok(cache::status_hints(result, options.version));
        }
        Err(ServerError::NotReady { rows }) => pending_status(rows),
        Err(ServerError::ResourceFailed { failure }) => failed_status(&failure, max_error),
        Err(ServerError::NoProfile { reason }) => json!({
            "status": "no_profile",
            "message": format!("This result has no column profile: {reason}. Page through it with resources/read instead."),
        }),
        Err(error) => return Err(read_error(uri, error, max_error)),
    };
    Ok(cache::status_hints(status_result(uri, &status), options.version))
}

/// What `resources/read` says of a resource whose query is still running: no page yet, the rows
/// so far, and when to read again.
fn pending_status(rows: u64) -> Value {
    json!({
        "status": ResourceStatus::Pending.as_str(),
        "rows_so_far": rows,
        "retry_after_ms": 1000,
        "message": format!(
            "The query is still running ({rows} rows so far); read this resource again in a few seconds."
        ),
    })
}

/// What `resources/read` says of a resource whose query failed: the code, whether running it again
/// may succeed, and the failure's text for the model.
fn failed_status(failure: &QueryFailure, max_error: usize) -> Value {
    json!({
        "status": ResourceStatus::Failed.as_str(),
        "error": {"code": failure.code.as_str(), "retryable": failure.code.is_retryable()},
        "message": cut_text(&crate::tool_result::failure_message(failure), max_error),
    })
}

/// The row at `offset` alone takes `bytes` bytes, more than `resources/read` returns: the model is
/// told to read on after it (the application fetches it over REST).
fn row_too_large(offset: u64, bytes: usize, max_bytes: usize) -> ErrorData {
    let next = offset.saturating_add(1);
    ErrorData::invalid_params(
        format!(
            "the row at offset {offset} alone takes {bytes} bytes, more than resources/read returns \
             ({max_bytes} bytes); read on from offset {next} (the application fetches the complete \
             result, that row included)"
        ),
        Some(json!({"field": "offset", "next_offset": next, "max_bytes": max_bytes})),
    )
}

fn status_result(uri: &str, status: &Value) -> ReadResourceResult {
    ReadResourceResult::new(vec![
        ResourceContents::text(status.to_string(), uri).with_mime_type(JSON_MIME_TYPE),
    ])
}

fn read_error(uri: &str, error: ServerError, max_error: usize) -> ErrorData {
    match error {
        ServerError::ResourceNotFound | ServerError::ResourceExpired => not_found(uri, max_error),
        ServerError::InvalidRequest(e) => invalid(&e, max_error),
        other => {
            tracing::warn!(error = %dual_core::escape::log_error(&other), code = other.code().as_str(), "resources/read failed");
            ErrorData::internal_error(
                "the resource's query could not be executed; try again later",
                Some(json!({"error": other.code().as_str()})),
            )
        }
    }
}

/// The URI is echoed cut to the error-text cap: a 1 MB URI does not come back whole.
fn not_found(uri: &str, max_error: usize) -> ErrorData {
    ErrorData::resource_not_found(
        "Resource not found or expired",
        Some(json!({"uri": cut_text(uri, max_error)})),
    )
}

/// The message and the field (both may echo what the request named) cut to the error-text cap.
fn invalid(error: &InvalidRequest, max_error: usize) -> ErrorData {
    let field = error.field().map(|field| cut_text(field, max_error));
    ErrorData::invalid_params(
        cut_text(&error.to_string(), max_error).into_owned(),
        Some(json!({"field": field})),
    )
}

/// Parses `offset=…&limit=…&sort=…` (percent-encoded or not) into a page request.
fn page_request(query: &str) -> Result<PageRequest, RequestError> {
    let mut request = PageRequest::default();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode(value);
        match key {
            "offset" => request.offset = Some(integer(&value, "offset")?),
            "limit" => request.limit = Some(integer(&value, "limit")?),
            "sort" => request.sort = Some(parse_sort_param(&value)?),
            other => return Err(RequestError::UnknownField(percent_decode(other))),
        }
    }
    Ok(request)
}

fn integer(value: &str, field: &'static str) -> Result<u64, RequestError> {
    value.parse().map_err(|_| RequestError::WrongType {
        field,
        expected: "a non-negative integer",
    })
}

/// Decodes `%XX` escapes and `+`; malformed escapes stay as they are.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests;
