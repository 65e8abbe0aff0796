//! `resources/list`: the caller's live results, newest first, a page at a time (`003_…`, `004_…`).

use std::borrow::Cow;

use dual_core::escape::display_safe;
use dual_core::mcp::{JSON_MIME_TYPE, ProtocolVersion};
use dual_core::status::ResourceStatus;
use dual_core::time::format_description::well_known::Rfc3339;
use dual_core::uri::resource_uri;
use dual_core::{ResourceId, ResourceRecord};
use dual_server::{Caller, DualResponseServer};
use rmcp::model::{Annotations, CacheScope, ErrorData, ListResourcesResult, Resource};
use serde_json::json;

/// Results per `resources/list` page unless the server says otherwise.
pub const DEFAULT_LIST_PAGE_SIZE: usize = 50;
/// The most results one page may hold, whatever is asked.
pub const MAX_LIST_PAGE_SIZE: usize = 500;

/// How many column names a listed result's description names before `…`.
const DESCRIBED_COLUMNS: usize = 8;

/// Answers `resources/list` with one page of `caller`'s live results, newest first: an
/// authenticated caller's own, an anonymous caller's those created without an owner, nothing for
/// a link's grant. `cursor` is the `nextCursor` of the previous page (`None`: the first page);
/// `page_size` is capped at [`MAX_LIST_PAGE_SIZE`] (at least 1).
///
/// Each entry has the result's `uri`, `name`, a `description` (rows, columns, status, expiry; the
/// name and the column names with their control characters escaped, as
/// [`display_safe`](dual_core::escape::display_safe) does),
/// `mimeType` `application/json` (what `resources/read` returns) and, from 2025-06-18 on,
/// `annotations.lastModified` (when the query ran). `size` is absent: a result's size in bytes
/// depends on the page read and is not recorded. From 2026-07-28 on the list is fresh for 0 ms
/// (results come and go) and `private` to an authenticated caller (`public` for anonymous ones,
/// who all see the same list).
///
/// # Errors
/// `invalid params` for a cursor this server did not hand out; `internal error` when the store
/// cannot be read.
pub async fn list_resources(
    server: &DualResponseServer,
    caller: &Caller,
    cursor: Option<&str>,
    page_size: usize,
    version: ProtocolVersion,
) -> Result<ListResourcesResult, ErrorData> {
    let before = cursor
        .map(|cursor| {
            cursor.parse::<ResourceId>().map_err(|_| {
                ErrorData::invalid_params(
                    "invalid cursor: pass the nextCursor of the previous page",
                    Some(json!({"field": "cursor"})),
                )
            })
        })
        .transpose()?;
    let page_size = page_size.clamp(1, MAX_LIST_PAGE_SIZE);
    let mut records = server
        .list_resources(caller, before, page_size + 1)
        .await
        .map_err(|error| {
            tracing::warn!(error = %dual_core::escape::log_error(&error), "resources/list failed");
            ErrorData::internal_error("the results could not be listed; try again later", None)
        })?;
    let more = records.len() > page_size;
    records.truncate(page_size);
    let scheme = &server.config().uri_scheme;
    let now = server.clock().now();
    let mut result = ListResourcesResult::with_all_items(
        records
            .iter()
            .map(|record| listed(record, scheme, now, version))
            .collect(),
    );
    if more {
        result.next_cursor = records.last().map(|record| record.id.to_string());
    }
    if version >= ProtocolVersion::V2026_07_28 {
        result.ttl_ms = Some(0);
        result.cache_scope = Some(if caller.owner_name().is_some() {
            CacheScope::Private
        } else {
            CacheScope::Public
        });
    }
    Ok(result)
}

/// One result as `resources/list` shows it to a client of `version`.
fn listed(
    record: &ResourceRecord,
    scheme: &str,
    now: dual_core::time::OffsetDateTime,
    version: ProtocolVersion,
) -> Resource {
    let name = display_safe(&record.name).into_owned();
    let mut resource = Resource::new(resource_uri(scheme, record.id), name)
        .with_description(describe(record, now))
        .with_mime_type(JSON_MIME_TYPE);
    if version.has_titles()
        && let Ok(at) = record.created_at.format(&Rfc3339)
    {
        let mut annotations = Annotations::default();
        annotations.last_modified = Some(at);
        resource.annotations = Some(annotations);
    }
    resource
}

/// What the result holds and where its query is; the column names (the model's aliases) escaped.
fn describe(record: &ResourceRecord, now: dual_core::time::OffsetDateTime) -> String {
    let mut columns: Vec<Cow<'_, str>> = record
        .columns
        .iter()
        .take(DESCRIBED_COLUMNS)
        .map(|c| display_safe(&c.name))
        .collect();
    if record.columns.len() > DESCRIBED_COLUMNS {
        columns.push(Cow::Borrowed("…"));
    }
    let columns = format!("{} columns ({})", record.columns.len(), columns.join(", "));
    let status = match (record.status, &record.failure) {
        _ if record.lease_lapsed_at(now) => "failed: the server running its query stopped".to_owned(),
        (ResourceStatus::Pending, _) => format!("pending: {} rows so far", record.total_count),
        (ResourceStatus::Failed, Some(failure)) => format!("failed: {}", failure.code.as_str()),
        (ResourceStatus::Failed, None) => "failed".to_owned(),
        _ => format!("{} rows, {columns}", record.total_count),
    };
    let expiry = match record.expires_at.map(|at| at.format(&Rfc3339)) {
        None => "pinned".to_owned(),
        Some(Ok(at)) => format!("expires {at}"),
        Some(Err(_)) => "expires".to_owned(),
    };
    format!("{status}; {expiry}")
}
