//! Minting links: the server authorizes the caller (a link's grant mints none), checks what the
//! link would do, then signs.

use std::fmt::Write as _;

use dual_core::{ResourceId, Sort, page::RequestError, range::RowRange, uri::resource_url};

use crate::access::{authorized, refuse_grant};
use crate::export_check::check_export;
use crate::inner::Inner;
use crate::links::{Claims, DownloadLink, LinkFormat, data_claims};
use crate::{Caller, ServerError};

/// A data link for `caller` (see [`DualResponseServer::download_link`]): authorized and checked as
/// its export would be, then signed.
///
/// [`DualResponseServer::download_link`]: crate::DualResponseServer::download_link
pub(crate) async fn download_link(
    inner: &Inner,
    id: ResourceId,
    caller: &Caller,
    format: LinkFormat,
    range: RowRange,
    sort: Option<&Sort>,
) -> Result<DownloadLink, ServerError> {
    refuse_grant(caller)?;
    // The export's own checks, so that no link is dead on arrival (a range past the end, a sort
    // on no column, a resource still pending), and the REST parser's: a `limit` of 0 is refused.
    if range.limit == Some(0) {
        return Err(RequestError::LimitOutOfRange { max: u64::MAX }.into());
    }
    check_export(inner, id, caller, sort, range).await?;
    let links = &inner.links;
    let (expires, expires_at) = links.expires(inner.clock.now());
    let claims = data_claims(id, format, range, sort, expires);
    let mut url = format!(
        "{}/data?format={format}",
        resource_url(&inner.config.base_url, id)
    );
    if range.offset != 0 {
        let _ = write!(url, "&offset={}", range.offset);
    }
    if let Some(limit) = range.limit {
        let _ = write!(url, "&limit={limit}");
    }
    if let Some(sort) = sort {
        let _ = write!(url, "&sort={}:{}", encode(&sort.field), sort.order.as_str());
    }
    let _ = write!(url, "&expires={expires}&token={}", claims.sign(&links.key));
    Ok(DownloadLink { url, expires_at })
}

/// A read link for `caller` (see [`DualResponseServer::view_link`]).
///
/// [`DualResponseServer::view_link`]: crate::DualResponseServer::view_link
pub(crate) async fn view_link(
    inner: &Inner,
    id: ResourceId,
    caller: &Caller,
) -> Result<DownloadLink, ServerError> {
    refuse_grant(caller)?;
    authorized(inner, id, caller).await?;
    let links = &inner.links;
    let (expires, expires_at) = links.expires(inner.clock.now());
    let token = Claims::Read { id, expires }.sign(&links.key);
    let url = format!(
        "{}/view?expires={expires}&token={token}",
        resource_url(&inner.config.base_url, id)
    );
    Ok(DownloadLink { url, expires_at })
}

/// `text` percent-encoded for a query value: everything but the unreserved characters of RFC 3986.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn encodes_query_values() {
        assert_eq!(super::encode("a-b_c.d~9"), "a-b_c.d~9");
        assert_eq!(super::encode("first name&x:y"), "first%20name%26x%3Ay");
        assert_eq!(super::encode("é"), "%C3%A9");
    }
}
