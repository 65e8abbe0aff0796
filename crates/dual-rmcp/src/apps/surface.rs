//! `resources/list` and `resources/read` of a handler that serves the view: what a client that
//! negotiated MCP Apps gets beside the caller's results, and exactly the results for every other
//! client. [`DatabaseMcp`](crate::DatabaseMcp) answers with these; a handler of its own can too.

use rmcp::model::{
    ErrorData, ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResult,
};
use rmcp::service::{RequestContext, RoleServer};

use super::{client_supports_apps, read_view, view_resource};
use crate::ResultSurface;

/// The caller's live results, newest first, a page at a time ([`ResultSurface::list_resources`]);
/// a client that negotiated MCP Apps also gets the view, first on the first page.
///
/// # Errors
/// As [`ResultSurface::list_resources`].
pub async fn list_resources(
    surface: &ResultSurface,
    request: Option<PaginatedRequestParams>,
    context: &RequestContext<RoleServer>,
) -> Result<ListResourcesResult, ErrorData> {
    let first_page = request.as_ref().is_none_or(|request| request.cursor.is_none());
    let mut listed = surface.list_resources(request, context).await?;
    if first_page && client_supports_apps(context) {
        listed.resources.insert(0, view_resource());
    }
    Ok(listed)
}

/// The view for a client that negotiated MCP Apps and asks for its URI; otherwise a result
/// ([`ResultSurface::read_resource`]).
///
/// # Errors
/// As [`ResultSurface::read_resource`].
pub async fn read_resource(
    surface: &ResultSurface,
    request: &ReadResourceRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<ReadResourceResult, ErrorData> {
    if client_supports_apps(context)
        && let Some(view) = read_view(&request.uri)
    {
        return Ok(view);
    }
    surface.read_resource(request, context).await
}
