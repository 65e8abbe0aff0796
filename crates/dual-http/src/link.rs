//! Capability links on the REST API: a request's `expires` and `token`, verified before anything
//! touches the store, stand in for the authorization hook.

use dual_server::{Caller, DualResponseServer};

use crate::parse::ApiRequest;
use crate::query::LinkParams;
use crate::rejection::Rejection;

/// The [`Caller`] a link grants for `request`: a read link's grant for any read of its resource, a
/// data link's for exactly the export it signs (its `format=`, range and sort). Anything else — a
/// missing or malformed parameter, a wrong, expired, other-resource or other-scope token — is the
/// 404 an unknown id gets, decided by the HMAC and the clock alone (no store access), and logged
/// without the token.
pub(crate) fn grant(
    server: &DualResponseServer,
    link: &LinkParams,
    request: &ApiRequest,
) -> Result<Caller, Rejection> {
    let refused = || {
        tracing::debug!(id = ?request.id(), "dual-http capability link refused: answered as not found");
        Rejection::NotFound
    };
    let (Some(expires), Some(token), Some(id)) = (&link.expires, &link.token, request.id()) else {
        return Err(refused());
    };
    let Some(expires) = unix_seconds(expires) else {
        return Err(refused());
    };
    let links = server.links();
    let now = server.clock().now();
    if let Some(caller) = links.verify_read(id, expires, token, now) {
        return Ok(caller);
    }
    if let ApiRequest::Export(export) | ApiRequest::ExportHead(export) = request
        && let Some(format) = export.named
        && let Some(caller) = links.verify_data(
            id,
            format,
            export.range,
            export.sort.as_ref(),
            expires,
            token,
            now,
        )
    {
        return Ok(caller);
    }
    Err(refused())
}

/// `expires`: ASCII digits, a `u64`.
fn unix_seconds(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}
