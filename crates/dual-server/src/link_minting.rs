//! Minting links: the server authorizes the caller, then signs.

use std::fmt::Write as _;

use dual_core::{ResourceId, Sort, page::RequestError, range::RowRange, uri::resource_url};

use crate::links::{Claims, DownloadLink, LinkFormat, Links};
use crate::{Caller, DualResponseServer, ServerError};

impl DualResponseServer {
    /// A data link: `{base_url}/{id}/data?format=F[&offset=O][&limit=L][&sort=field:order]&expires=E&token=T`,
    /// which downloads exactly that export (from the resource's snapshot or query, as
    /// `GET /{id}/data` does) with no `Authorization` header until it expires
    /// ([`DualResponseServerBuilder::link_lifetime`](crate::DualResponseServerBuilder::link_lifetime)).
    /// `offset` is left out when 0 and `limit` when `None`.
    ///
    /// The caller is authorized first, as for every read; a link's grant cannot mint links (it
    /// would outlive its own expiry).
    ///
    /// The export's checks run before signing, as for `HEAD /{id}/data`, so a link is never dead on
    /// arrival.
    ///
    /// # Errors
    /// `RESOURCE_NOT_FOUND` (also for a resource bound to another owner, and for a link's grant),
    /// `RESOURCE_EXPIRED`, `STORAGE_ERROR`, and the export's own refusals: `INVALID_REQUEST` for a
    /// range past the end or a sort on no column (or on a snapshot too large to sort),
    /// `NOT_READY` while the query runs, and the failure of a query that failed.
    pub async fn download_link(
        &self,
        id: ResourceId,
        caller: &Caller,
        format: LinkFormat,
        range: RowRange,
        sort: Option<Sort>,
    ) -> Result<DownloadLink, ServerError> {
        if caller.is_grant() {
            return Err(ServerError::ResourceNotFound);
        }
        // The export's own checks, so that no link is dead on arrival (a range past the end, a sort
        // on no column, a resource still pending), and the REST parser's: a `limit` of 0 is refused.
        if range.limit == Some(0) {
            return Err(RequestError::LimitOutOfRange { max: u64::MAX }.into());
        }
        self.check_export(id, caller, sort.as_ref(), range).await?;
        let links = self.links();
        let (expires, expires_at) = links.expires(self.clock().now());
        let claims = Claims::Data {
            id,
            format,
            range,
            sort: sort.as_ref(),
            expires,
        };
        let mut url = format!("{}/data?format={format}", self.resource_url(id));
        if range.offset != 0 {
            let _ = write!(url, "&offset={}", range.offset);
        }
        if let Some(limit) = range.limit {
            let _ = write!(url, "&limit={limit}");
        }
        if let Some(sort) = &sort {
            let _ = write!(url, "&sort={}:{}", encode(&sort.field), sort.order.as_str());
        }
        let _ = write!(url, "&expires={expires}&token={}", claims.sign(&links.key));
        Ok(DownloadLink { url, expires_at })
    }

    /// A read link to the resource's page, `{base_url}/{id}/view?expires=E&token=T`, which shows the
    /// whole result in a browser with no `Authorization` header until it expires: the page appends
    /// the same `expires` and `token` to its REST reads (`GET /{id}`, `POST /{id}`,
    /// `GET /{id}/data`), which the read link authorizes too.
    ///
    /// # Errors
    /// As [`DualResponseServer::download_link`].
    pub async fn view_link(&self, id: ResourceId, caller: &Caller) -> Result<DownloadLink, ServerError> {
        self.may_mint(id, caller).await?;
        let links = self.links();
        let (expires, expires_at) = links.expires(self.clock().now());
        let token = Claims::Read { id, expires }.sign(&links.key);
        let url = format!("{}/view?expires={expires}&token={token}", self.resource_url(id));
        Ok(DownloadLink { url, expires_at })
    }

    /// The server's link verifier, which `dual-http` checks a request's `token` with.
    #[must_use]
    pub fn links(&self) -> &Links {
        &self.inner().links
    }

    async fn may_mint(&self, id: ResourceId, caller: &Caller) -> Result<(), ServerError> {
        if caller.is_grant() {
            return Err(ServerError::ResourceNotFound);
        }
        self.get_resource(id, caller).await.map(drop)
    }

    /// The resource's REST URL, as the tool result's `url`.
    fn resource_url(&self, id: ResourceId) -> String {
        resource_url(&self.config().base_url, id)
    }
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
